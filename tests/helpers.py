"""Reading what the GPU computed without debug kernels, and without the optimizer: learnGradient
alone is recorded, and its per-slot gradient and loss sums (and a grid's fixed-point sums) are read
back and added up here in float64, as adjustParameters would before its update. The optimizers'
tests then check adjustParameters' updates against numpy given these gradients: a wrong update
can't hide in the gradients it is checked against."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest

GRID_FIXED_SCALE = 2.0**32  # a grid's gradients are fixed point (app/model/hashgrid.py)


def _learned_sums(trainer, step: int) -> tuple[float, np.ndarray]:
    """learnGradient of `step`'s batch at the current parameters: the summed loss and the summed
    gradient of every parameter (the MLP's from the slots, a grid's from its fixed-point sums),
    over the batch. The trainer is left as it was."""
    gpu, launch, plan = trainer.gpu, trainer.launch, trainer.plan
    saved_step, saved_position = trainer.step, trainer.data_position
    trainer.step = step
    with gpu.submit() as encoder:
        trainer.record_piece(encoder, launch.units.learn_units)  # the learn phase, whole
    assert trainer.progress.phase == "adjust" and trainer.progress.position == 0
    slots = gpu.read(launch.gradient_slots, launch.shape.gradient_slot_count * plan.slot_stride)
    losses = gpu.read(launch.loss_slots, launch.shape.loss_slot_count)
    grid = gpu.read(trainer.grid_gradients, plan.grid_param_count, np.int64) / GRID_FIXED_SCALE
    trainer.abandon_step()  # clears the sums: the next step starts from nothing
    trainer.step, trainer.data_position = saved_step, saved_position
    rows = slots.astype(np.float64).reshape(launch.shape.gradient_slot_count, plan.slot_stride)
    gradient = rows[:, : plan.mlp_param_count].sum(axis=0)
    return float(losses.astype(np.float64).sum()), np.concatenate([gradient, grid])


def gpu_loss_and_gradient(trainer, step: int = 0):
    """Loss and mean-loss gradient the kernels compute for the batch of `step`, at the current
    parameters (the data's: regularisation joins in adjustParameters); the trainer is left as it was."""
    loss, gradient = _learned_sums(trainer, step)
    return loss / trainer.batch_size, gradient / trainer.batch_size


def gpu_loss(trainer, params: np.ndarray, step: int = 0) -> float:
    """The training loss of `step`'s batch at `params`, as the GPU computes it."""
    saved = trainer.snapshot()
    trainer.set_parameters(params)
    loss, _ = gpu_loss_and_gradient(trainer, step)
    trainer.restore(saved)
    return loss


def advance_until(session, done, what: str, chunk: int = 5, most_steps: int = 2000) -> None:
    """Advances `session` `chunk` steps at a time until `done()`, for at most `most_steps` steps:
    a wait that ends, with `what` it waited for named when it fails."""
    start = session.trainer.step
    while not done() and session.trainer.step - start < most_steps:
        session.advance(chunk)
    assert done(), f"{what}: not within {most_steps} steps"


def exported_network(trainer) -> dict:
    """network.json of the trainer's network as it computes: half precision's weights rounded."""
    from app.files.network_io import export_network

    params = trainer.parameters()
    if trainer.config.precision == "half":
        params = params.astype(np.float16).astype(np.float32)
    return export_network(trainer.plan, trainer.config, params)


ROOT = Path(__file__).resolve().parent.parent


def paused_at_a_step_boundary(ui) -> int:
    """Trains the window until a frame ends between two steps, pauses there, and returns the step
    it stays at. Paused in a step's first phase, the window leaves that step for the next run (it
    finishes only a step whose parameter updates have begun), and a wait for it ran out its clock."""
    ui.app.running = True
    assert ui.frames_until(lambda: not ui.session.trainer.progress.started), "a frame ends between steps"
    ui.app.running = False
    return ui.session.trainer.step


def run_headless(tmp_path: Path, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    """`python -m app --headless --quiet ARGS` from the checkout, with a cache folder of its own
    under `tmp_path` (no saved settings or autosave of the user's), its output captured."""
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    return subprocess.run(
        [sys.executable, "-m", "app", "--headless", "--quiet", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def assert_tables_keep_their_bytes_under_another_launch(gpu, monkeypatch, config, **limits) -> None:
    """A grid's tables after one step are the same bytes with fewer workgroups (`limits` lowered,
    each where it is defined, launch_shape or the fused trainer's path: another order of their
    fixed-point adds), and differ from the fresh tables (the step did reach them). One step: the
    MLP's float sums follow the slots, so a second step would start from other weights."""
    import app.kernels.launch_shape as launch_shape
    import app.kernels.paths.fused.path as fused_path
    from app.train.trainer import Trainer

    one = Trainer(gpu, config)
    one.train(1)
    for name, value in limits.items():
        monkeypatch.setattr(fused_path if hasattr(fused_path, name) else launch_shape, name, value)
    other = Trainer(gpu, config)
    assert other.launch.shape.group_count != one.launch.shape.group_count
    other.train(1)
    mlp = one.plan.mlp_param_count
    assert np.count_nonzero(one.parameters()[mlp:] != Trainer(gpu, config).parameters()[mlp:]) > 0
    assert one.parameters()[mlp:].tobytes() == other.parameters()[mlp:].tobytes()


@contextlib.contextmanager
def _output_caught(caught: dict):
    """What Python and native code print while it runs, through stdout and stderr as a process has
    them (file descriptors 1 and 2, and sys.stdout, sys.stderr), into `caught`'s "out" and "err"."""
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        saved = [os.dup(1), os.dup(2)]
        streams = [open(fd, "w", closefd=False, buffering=1) for fd in (1, 2)]
        try:
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            with contextlib.redirect_stdout(streams[0]), contextlib.redirect_stderr(streams[1]):
                yield
        finally:
            for stream in streams:
                stream.close()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            for name, file in (("out", out), ("err", err)):
                file.seek(0)
                caught[name] = file.read().decode(errors="replace")


def run_app(gpu, tmp_path: Path, *args: str, env: dict | None = None, main=None) -> subprocess.CompletedProcess:
    """`python -m app ARGS` run in this process (app.entry.cli.main, or another command's `main`,
    such as app.bench.frame's), from the checkout, with a cache folder of its own under
    `tmp_path`: its exit code and its stdout and stderr, as a subprocess.CompletedProcess. A run
    on the default device trains on the session's `gpu`; one that asks for another (--device,
    --gpu) makes it as the app does. `env`: variables set for the run. For what a run does and
    says, not for what only a process shows (signals, start-up, the installed command)."""
    import app.gpu.gpu
    from app.entry import cli

    main = main or cli.main
    real = app.gpu.gpu.create_gpu

    def shared_or_made(kind: str = "auto", tensor_cores=None, **options):
        asked_for_another = (kind, tensor_cores, options.get("gpu")) != ("auto", None, None)
        if asked_for_another or "SLANGPY_DEVICE_TYPE_OVERRIDE" in os.environ:
            return real(kind, tensor_cores, **options)
        return gpu

    caught: dict = {}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in {"XDG_CACHE_HOME": str(tmp_path / "cache"), **(env or {})}.items():
            patch.setenv(name, value)
        patch.chdir(ROOT)
        for module in (app.gpu.gpu, sys.modules[main.__module__]):  # the command's module may hold its own name
            if getattr(module, "create_gpu", None) is real:
                patch.setattr(module, "create_gpu", shared_or_made)
        with _output_caught(caught):
            try:
                code = main(list(args))
            except SystemExit as exit:  # argparse's --help
                code = exit.code or 0
    return subprocess.CompletedProcess(list(args), code, caught["out"], caught["err"])


def run_headless_here(gpu, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """run_headless's run, in this process on the session's `gpu` (run_app)."""
    return run_app(gpu, tmp_path, "--headless", "--quiet", *args)


def run_coroutine(coroutine):
    """asyncio.run in a thread of its own: a worker that ran the browser tests has Playwright's
    event loop running in its main thread, where asyncio.run refuses to start."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = asyncio.run(coroutine)
        except BaseException as error:  # raised again in the caller's thread
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def made_once(tmp_path_factory, name: str, make) -> Path:
    """A folder that `make(folder)` fills once a test run, whichever xdist worker asks first: the
    others wait for it (a module's tests may go to both workers, and its module fixture ran twice:
    a sweep of 50 s each). A `make` that fails leaves no folder, and the next one to ask tries again."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, which every worker's shares
    folder = base / name
    with open(base / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (base / f"{name}.made").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            (base / f"{name}.made").touch()
    return folder
