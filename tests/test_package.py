"""The package as a new user gets it: a wheel built from the repository, installed by pip into a
fresh virtual environment that reaches only the dependencies the wheel declares, runs from a
folder outside the checkout (headless, --screenshot, --export-slang, --grad-check and the window),
with its shaders and assets inside the package and no top-level module named `app` in site-packages."""

from __future__ import annotations

import email.parser
import importlib.metadata
import os
import signal
import subprocess
import sys
import time
import venv
import zipfile
from pathlib import Path

import numpy as np
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "slang_visual_trainer"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--disable-pip-version-check",
            "-w",
            str(out),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    (built,) = out.glob("*.whl")
    return built


def _declared_dependencies(wheel: Path) -> list[importlib.metadata.Distribution]:
    """This environment's distributions that the wheel's Requires-Dist lines need (extras left
    out), followed through each one's own requirements, as pip would resolve them."""
    with zipfile.ZipFile(wheel) as archive:
        metadata = next(name for name in archive.namelist() if name.endswith(".dist-info/METADATA"))
        lines = email.parser.Parser().parsestr(archive.read(metadata).decode()).get_all("Requires-Dist") or []
    found, seen, todo = {}, set(), [(line, "") for line in lines]
    while todo:
        line, extra = todo.pop()
        requirement = Requirement(line)
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
            continue
        dist = importlib.metadata.distribution(requirement.name)
        assert requirement.specifier.contains(dist.version, prereleases=True), f"{line}: {dist.version} here"
        name = canonicalize_name(requirement.name)
        found[name] = dist
        for wanted in ("", *requirement.extras):
            if (name, wanted) not in seen:
                seen.add((name, wanted))
                todo += [(sub, wanted) for sub in dist.requires or []]
    return list(found.values())


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh virtual environment with the wheel installed by pip; returns its bin folder. The
    dependencies the wheel declares are this environment's copies, linked into a folder that the
    new site-packages adds (a .pth), so pip finds them installed (unpacking them took most of
    the test's time) and a module the wheel does not declare stays out of reach."""
    env_dir, linked = tmp_path_factory.mktemp("venv"), tmp_path_factory.mktemp("dependencies")
    for dist in _declared_dependencies(wheel):
        for top in {path.parts[0] for path in dist.files or ()} - {"..", "__pycache__"}:
            if not (linked / top).exists():
                (linked / top).symlink_to(dist.locate_file(top))
    venv.create(env_dir, with_pip=False)
    bin_dir = env_dir / "bin"
    site = subprocess.run(
        [str(bin_dir / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(site) / "dependencies.pth").write_text(f"import site; site.addsitedir({str(linked)!r})\n")
    command = [sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "install", "-q"]
    result = subprocess.run(
        [*command, "--disable-pip-version-check", str(wheel)], capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return bin_dir


def test_wheel_holds_the_code_shaders_and_assets(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert not any(name.startswith("app/") for name in names), "no top-level `app` package"
    for source in (ROOT / "app").rglob("*.py"):
        assert f"{PACKAGE}/{source.relative_to(ROOT / 'app').as_posix()}" in names, source
    shaders = list((ROOT / "shaders").rglob("*.slang"))
    assert any(shader.parent != ROOT / "shaders" for shader in shaders), "shaders/ is laid out by role"
    for shader in shaders:
        assert f"{PACKAGE}/shaders/{shader.relative_to(ROOT / 'shaders').as_posix()}" in names, shader
    for kernel in (ROOT / "app").rglob("*.slang"):  # each gradient path's own, app/kernels/paths/<name>/
        assert f"{PACKAGE}/{kernel.relative_to(ROOT / 'app').as_posix()}" in names, kernel
    for preset in (ROOT / "assets" / "presets").glob("*.json"):
        assert f"{PACKAGE}/assets/presets/{preset.name}" in names, preset
    assert f"{PACKAGE}/assets/targets.json" in names


def _run(bin_dir: Path, cwd: Path, *args: str, env: dict | None = None, timeout: int = 300, command="visual-trainer"):
    return subprocess.run(
        [str(bin_dir / command), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "XDG_CACHE_HOME": str(cwd / "cache"), **(env or {})},
    )


def test_installed_app_runs_outside_the_checkout(installed, tmp_path):
    site = subprocess.run(
        [str(installed / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert not (Path(site) / "app").exists(), "no top-level `app` in site-packages"
    out, shot, exported = tmp_path / "run", tmp_path / "shot.png", tmp_path / "net.slang"
    result = _run(
        installed,
        tmp_path,
        "--headless",
        "--iterations",
        "20",
        "--quiet",
        "--preset",
        "waves",
        "--out",
        str(out),
        "--screenshot",
        str(shot),
        "--export-slang",
        str(exported),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    for name in ("summary.json", "network.json", "loss.csv", "heatmaps.png"):
        assert (out / name).stat().st_size > 0, name
    assert shot.stat().st_size > 10_000 and "trained_network" in exported.read_text()
    check = _run(installed, tmp_path, "--grad-check")
    assert check.returncode == 0 and "grad-check:" in check.stdout, check.stdout + check.stderr[-2000:]


def test_installed_window_opens_outside_the_checkout(installed, tmp_path, display):
    """The window draws (it saves its 5th frame) and Ctrl+C ends it with exit code 0."""
    shot = tmp_path / "window.png"
    args = ["--fresh", "--width", "900", "--height", "600", "--screenshot-after", "5", "--screenshot", str(shot)]
    env = {**os.environ, "DISPLAY": display, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    process = subprocess.Popen(
        [str(installed / "visual-trainer"), *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not shot.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)  # polling: the screenshot appears whole (renamed into place)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert shot.exists() and shot.stat().st_size > 10_000, stderr[-3000:]
    assert process.returncode == 0, stderr[-3000:]


def test_installed_bench_command_makes_the_readmes_test_image(installed, tmp_path):
    """The guide's images page as a pip-installed user types it: `visual-trainer-bench photo`
    (there is no module named `app` to run with -m) writes the procedural landscape, the same
    pixels as the checkout's generator, and the photo preset trains on it."""
    import slangpy as spy

    from app.bench.photo import landscape

    result = _run(
        installed, tmp_path, "photo", "--size", "48", "--out", "landscape.png", command="visual-trainer-bench"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.startswith("landscape.png: 48x48 procedural landscape"), result.stdout
    np.testing.assert_array_equal(np.asarray(spy.Bitmap(str(tmp_path / "landscape.png"))), landscape(48, 1))
    run = _run(installed, tmp_path, "--headless", "--preset", "photo", "--image", "landscape.png", "--iterations",
               "5", "--quiet", "--out", "run")  # fmt: skip
    assert run.returncode == 0 and (tmp_path / "run" / "learned.png").exists(), run.stderr[-3000:]
    listing = _run(installed, tmp_path, "--help", command="visual-trainer-bench")
    assert listing.returncode == 0 and "photo" in listing.stdout and "usage: visual-trainer-bench" in listing.stdout
    bad = _run(
        installed, tmp_path, "photo", "--size", "64", "--out", "no/such/folder/x.png", command="visual-trainer-bench"
    )
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0, bad.stderr
    assert bad.stderr.startswith("error: cannot write no/such/folder/x.png: No such file or directory"), bad.stderr
