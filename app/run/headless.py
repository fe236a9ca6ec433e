"""Headless runs: the app without a window. `run` is the one way a headless run goes, for the command
line and for each sweep trial: it makes the Session, trains exactly N steps with a progress bar
(Ctrl+C or the caller's callback stops it after the current chunk), and writes the files (output.py)."""

from __future__ import annotations

import contextlib
import hashlib
import math
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tqdm import tqdm

from ..config.config import Config
from ..files.mesh_export import DEFAULT_RESOLUTION
from ..files.run_summary import HeadlessResult, image_text, metrics_text
from ..files.start import Start
from ..files.tensorboard_events import RunEvents, TensorboardOptions, status_of
from ..gpu.device import kernel_cache_dir
from ..gpu.gpu import Gpu
from ..loop.session import Session
from ..views.surface_tracker import SurfaceTracker, tracks_surface
from .output import WINDOW_DEFAULT, Written, write_run

if TYPE_CHECKING:
    from ..check.grad_check import GradCheck

# A start still going after this is compiling its shaders, unless this network was built here before
# (the first run of a network: docs/benchmarks.md, 'Start-up and a new architecture').
COMPILE_NOTICE_S = 1.0
COMPILE_NOTICE = "compiling shaders for this network (the first run only: they are cached for the next)..."
BUILT_NETWORKS = "built-networks"  # in the kernel cache: a file for each network built there

# Called after each evaluation with the session and the wall seconds trained so far; False stops
# the run there, as Ctrl+C would (a sweep's trial reports to Ray Tune here, whose scheduler may
# stop it).
OnEvaluation = Callable[[Session, float], bool]


def built_marker(gpu: Gpu, *configs: Config) -> Path:
    """The file that says these networks' kernels were built on this device into the kernel cache."""
    adapter = gpu.adapter.to_dict() if gpu.adapter is not None else None
    key = repr((str(gpu.device.info.type), adapter, [config.structure() for config in configs]))
    return kernel_cache_dir() / BUILT_NETWORKS / hashlib.sha256(key.encode()).hexdigest()[:32]


@contextlib.contextmanager
def compile_notice(quiet: bool, marker: Path) -> Iterator[None]:
    """Around a run's start (the Session's kernels and pipelines): one line on stderr if it is
    still going after COMPILE_NOTICE_S, so that a first run does not sit silent for seconds. None
    where `marker` (built_marker) says the caches have it: a slow start from them (a busy machine)
    is not compiling. None with --quiet."""
    if quiet or marker.is_file():
        yield
        return
    timer = threading.Timer(COMPILE_NOTICE_S, lambda: print(COMPILE_NOTICE, file=sys.stderr, flush=True))
    timer.daemon = True  # a start that fails ends the process without waiting for it
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
    with contextlib.suppress(OSError):  # a read-only cache only brings the notice back
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()


class Interrupt:
    """Ctrl+C (SIGINT) during training: the chunk being trained finishes, then the run stops
    and its files are written. A second Ctrl+C stops at once, writing nothing (KeyboardInterrupt)."""

    def __init__(self) -> None:
        self.requested = False
        self._previous = None

    def _handler(self, signum, frame) -> None:
        self.requested = True
        print("\ninterrupted: finishing this chunk, then writing the files (Ctrl+C again: stop now)", file=sys.stderr)
        signal.signal(signal.SIGINT, signal.default_int_handler)

    def __enter__(self) -> Interrupt:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, *exc) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


def train(
    session: Session, iterations: int, quiet: bool = False, on_evaluation: OnEvaluation | None = None
) -> HeadlessResult:
    """Trains until step `iterations` or a divergence, evaluating every session.eval_every steps;
    after each evaluation `on_evaluation`, if given, may stop the run (as Ctrl+C does)."""
    bar = tqdm(
        total=iterations,
        initial=session.trainer.step,
        unit="step",
        disable=quiet or None,
        file=sys.stderr,
        dynamic_ncols=True,
    )
    start, samples, first_step = time.perf_counter(), session.trainer.samples_seen, session.trainer.step
    evals = session.history.current.eval
    stopped = False
    with Interrupt() as interrupt:
        while session.trainer.step < iterations and session.divergence is None and not (interrupt.requested or stopped):
            before = evals.count
            bar.update(len(session.advance(session.chunk_size(iterations))))
            if evals.count > before and not quiet:
                bar.write(_progress_line(session), file=sys.stderr)
            if evals.count > before and on_evaluation is not None:
                stopped = not on_evaluation(session, time.perf_counter() - start)
    bar.close()
    asked_to_stop = interrupt.requested or stopped
    interrupted = session.trainer.step if asked_to_stop and session.trainer.step < iterations else None
    wall = time.perf_counter() - start
    # the figures the run ends with: evaluated now unless this run's last chunk did (a checkpoint's
    # last evaluation, at the step a run of no steps starts from, is not this session's)
    if evals.count == 0 or evals.last_x != session.trainer.step or session.trainer.step == first_step:
        session.evaluate()
        if on_evaluation is not None:  # the last evaluation: what the run ends with
            on_evaluation(session, wall)
    divergence = session.divergence
    return HeadlessResult(
        session.trainer.step,
        session.train_loss,
        session.eval_loss,
        session.eval_grad_loss,
        wall,
        divergence.step if divergence else None,
        session.trainer.samples_seen - samples,
        interrupted_at=interrupted,
    )


@dataclass
class RunOptions:
    """What a headless run does besides training: the command line's options."""

    eval_every: int = 100
    quiet: bool = False
    grad_check: bool = False  # after the run, unless it was interrupted
    asked: dict[str, str | None] = field(default_factory=dict)  # files by option: output.write_run
    screen: tuple[int, int] = WINDOW_DEFAULT  # --screenshot's size
    image_scale: int = 1  # --export-image's
    mesh_resolution: int = DEFAULT_RESOLUTION  # --export-mesh's lattice
    tensorboard: TensorboardOptions | None = None  # --tensorboard's event files


@dataclass
class HeadlessRun:
    session: Session
    result: HeadlessResult
    written: Written
    check: GradCheck | None  # --grad-check's, if asked for


def run(
    gpu: Gpu,
    start: Start,
    iterations: int,
    out: Path,
    on_evaluation: OnEvaluation | None = None,
    options: RunOptions | None = None,
    prepare: Callable[[Config], Config] | None = None,
) -> HeadlessRun:
    """A whole headless run: the Session made from `start` (its config first passed through
    `prepare`, which may compile what it needs, under the same compile notice), trained to step
    `iterations`, checked if asked, and its files written to `out`. A failed write does not
    raise: it is in the result's `written`."""
    options = options or RunOptions()
    with compile_notice(options.quiet, built_marker(gpu, start.config)):
        if prepare is not None:
            start.config = prepare(start.config)
        session = Session(gpu, start.config, heatmaps=True)
        start.apply(session)
    session.eval_every = options.eval_every
    events = RunEvents(options.tensorboard, session) if options.tensorboard is not None else None
    surface = SurfaceTracker(session.trainer) if tracks_surface(session.trainer.plan, session.config) else None
    evaluated = _with_surface(surface, _with_events(events, session, on_evaluation))
    try:
        result = train(session, iterations, options.quiet, evaluated)
    except BaseException:  # a second Ctrl+C, a failure: the events so far, and nothing more
        if events is not None:
            events.abandon()
        raise
    if surface is not None:  # the figures the run ends with, measured whatever the cadence skipped
        if surface.latest is None or surface.latest["step"] != session.trainer.step:
            surface.measure(max(result.wall_seconds - surface.spent, 0.0))
        result.surface = surface.to_dict()
    if events is not None:
        events.close(session, status_of(result.diverged_at, result.interrupted_at))
    check = None
    if options.grad_check and result.interrupted_at is None:
        from ..check import grad_check

        check = grad_check.run(session.trainer)
        result.grad_check = check.to_dict()
    written = write_run(
        session, result, out, options.asked, options.screen, options.image_scale, options.mesh_resolution
    )
    return HeadlessRun(session, result, written, check)


def _with_events(events: RunEvents | None, session: Session, then: OnEvaluation | None) -> OnEvaluation | None:
    """The evaluation callback that writes each evaluation's events, with the samples a second
    trained so far (summary.json's samples_per_second as it stood), before `then`."""
    if events is None:
        return then
    first = session.trainer.samples_seen

    def evaluated(session: Session, wall: float) -> bool:
        samples = session.trainer.samples_seen - first
        events.evaluation(session, samples / wall if samples and wall > 0 else math.nan)  # nan: left out
        return then is None or then(session, wall)

    return evaluated


def _with_surface(surface: SurfaceTracker | None, then: OnEvaluation | None) -> OnEvaluation | None:
    """The evaluation callback that measures the surface metrics first, while they cost under their
    share of the time trained (SurfaceTracker.due), with the seconds trained less their own."""
    if surface is None:
        return then

    def evaluated(session: Session, wall: float) -> bool:
        if surface.due(wall - surface.spent):
            surface.measure(wall - surface.spent)
        return then is None or then(session, wall)

    return evaluated


def _progress_line(session: Session) -> str:
    line = f"step {session.trainer.step:>7}  train loss {session.train_loss:.6g}  "
    if session.image is not None:
        return line + image_text(session.image)
    if session.metrics is None:
        return line + f"eval loss {session.eval_loss:.6g}"
    return line + metrics_text(session.metrics)
