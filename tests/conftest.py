import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


_SHARED_MESA_CACHE = "VISUAL_TRAINER_TESTS_MESA_CACHE"  # set where this run made the folder


def pytest_configure(config):
    """One Mesa shader cache for the whole run, the app processes tests start included: those
    each get a cache folder of their own (XDG_CACHE_HOME, for their settings and autosaves), and
    Mesa's cache lives under it, so each compiled every kernel anew in LLVM (a default headless
    run, 3.1 s cold, 1.7 s with a warm Mesa cache, lavapipe). Mesa's cache is made for several
    processes at once. Tests of a cold compile set MESA_SHADER_CACHE_DIR themselves. xdist's
    workers inherit the variable, and leave it."""
    if "MESA_SHADER_CACHE_DIR" not in os.environ:
        os.environ["MESA_SHADER_CACHE_DIR"] = os.environ[_SHARED_MESA_CACHE] = tempfile.mkdtemp(prefix="vt-mesa-")
    # lavapipe compiles each kernel with LLVM's optimisation passes; the tests run most kernels for
    # a few steps, so the passes cost more than they save: without them (gallivm's "nopt") .ci/run
    # from a clean clone took 467 s against 512 s with them (pytest 439 s against 487 s; 2 cores,
    # the same tree), every test passing. Only Mesa's software drivers read the variable; a GPU's
    # driver ignores it. GALLIVM_PERF= (empty) in the environment keeps the passes.
    os.environ.setdefault("GALLIVM_PERF", "nopt")
    # SlangPy's kernel cache, likewise: the test processes' own (the user's cache folder) for the
    # app processes tests start, which each compiled every network anew in a cache folder of their
    # own (docs/benchmarks.md, 'The test suite'). Several processes may use it at once. Tests of a
    # cold start drop the variable.
    from app.gpu.device import KERNEL_CACHE, cache_dir

    os.environ.setdefault(KERNEL_CACHE, str(cache_dir()))


def pytest_unconfigure(config):
    if _SHARED_MESA_CACHE in os.environ and not hasattr(config, "workerinput"):  # the process that made it
        shutil.rmtree(os.environ.pop(_SHARED_MESA_CACHE), ignore_errors=True)


@pytest.fixture(scope="session")
def gpu():
    from app.gpu.gpu import create_gpu

    return create_gpu(os.environ.get("VISUAL_TRAINER_TEST_DEVICE", "auto"))


@pytest.fixture(scope="session")
def device(gpu):
    return gpu.device


@pytest.fixture
def make_trainer(gpu):
    from app.config.config import Config, validate
    from app.train.trainer import Trainer

    def make(**fields):
        return Trainer(gpu, validate(Config(**fields)))

    return make


@pytest.fixture
def make_session(gpu):
    """A session as the window runs it: the window's grid, heatmaps drawn."""
    from app.config.config import Config, validate
    from app.loop.session import Session

    def make(**fields):
        return Session(gpu, validate(Config(**fields)), grid=64, heatmaps=True)

    return make


@pytest.fixture
def ui(make_session):
    """The default session's window, offscreen at 1280 x 800, laid out (three frames) so that
    widgets' rectangles are known. Test modules that need another start define their own `ui`."""
    from app.ui.offscreen import OffscreenApp

    app = OffscreenApp(make_session(), 1280, 800)
    app.frame(3)
    yield app
    app.close()


@pytest.fixture(scope="session")
def display():
    """An X display for window tests: an Xvfb started here on a display number it picks itself
    (-displayfd), so that test workers side by side each get their own, even where $DISPLAY is
    set. On a shared display one worker's windows lay over another's and its xdotool moved the
    other's pointer (CI, DISPLAY=:0: the window read back matched its own render at 96.5%).
    $DISPLAY serves only where Xvfb is missing. The README's test command installs Xvfb: without
    it and without a display the window tests fail, they are not skipped."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None and os.environ.get("DISPLAY"):
        yield os.environ["DISPLAY"]
        return
    assert xvfb is not None, "no DISPLAY and Xvfb is not installed: bash scripts/setup.sh installs it"
    read, write = os.pipe()
    server = subprocess.Popen(
        [xvfb, "-displayfd", str(write), "-screen", "0", "1600x1000x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        pass_fds=(write,),
    )
    os.close(write)
    with os.fdopen(read) as ready:  # Xvfb writes its display number once it accepts clients
        number = ready.readline().strip()
    assert number and server.poll() is None, "Xvfb did not start"
    yield f":{number}"
    server.terminate()
    server.wait()
