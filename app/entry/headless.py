"""Headless runs: the app without a window. Drives a Session for exactly N steps with a progress
bar (Ctrl+C stops it after the current chunk); app/files/run_summary.py builds summary.json and
loss.csv from it, and app/entry/run_output.py writes them with network.json, and for a dataset
split.csv, a grid's tables, an image's learned.png and the rest."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
from collections.abc import Iterator

from tqdm import tqdm

from ..files.run_summary import HeadlessResult, image_text, metrics_text
from ..loop.session import Session

EXIT_DIVERGED = 3
# A network's first run compiles its shaders (the driver's pipelines above all): 2 to 5 s for the
# default and the photo preset on a CPU driver, 2 s on an H200, against 0.3 to 0.8 s once they
# are in the caches. A start still going after this long is one of those compiles.
COMPILE_NOTICE_S = 1.0
COMPILE_NOTICE = "compiling shaders for this network (the first run only: they are cached for the next)..."


@contextlib.contextmanager
def compile_notice(quiet: bool) -> Iterator[None]:
    """Around a run's start (the Session's kernels and pipelines): one line on stderr if it is
    still going after COMPILE_NOTICE_S, so that a first run does not sit silent for seconds; none
    from the caches, which is quick, and none with --quiet."""
    if quiet:
        yield
        return
    timer = threading.Timer(COMPILE_NOTICE_S, lambda: print(COMPILE_NOTICE, file=sys.stderr, flush=True))
    timer.daemon = True  # a start that fails ends the process without waiting for it
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


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


def train(session: Session, iterations: int, quiet: bool = False) -> HeadlessResult:
    """Trains until step `iterations` or a divergence, evaluating every session.eval_every steps."""
    bar = tqdm(
        total=iterations,
        initial=session.trainer.step,
        unit="step",
        disable=quiet or None,
        file=sys.stderr,
        dynamic_ncols=True,
    )
    start, samples = time.perf_counter(), session.trainer.samples_seen
    evals = session.history.current.eval
    with Interrupt() as interrupt:
        while session.trainer.step < iterations and session.divergence is None and not interrupt.requested:
            before = evals.count
            bar.update(len(session.advance(session.chunk_size(iterations))))
            if evals.count > before and not quiet:
                bar.write(_progress_line(session), file=sys.stderr)
    bar.close()
    interrupted = session.trainer.step if interrupt.requested and session.trainer.step < iterations else None
    wall = time.perf_counter() - start
    if evals.count == 0 or evals.last_x != session.trainer.step:
        session.evaluate()
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


def _progress_line(session: Session) -> str:
    line = f"step {session.trainer.step:>7}  train loss {session.train_loss:.6g}  "
    if session.image is not None:
        return line + image_text(session.image)
    if session.metrics is None:
        return line + f"eval loss {session.eval_loss:.6g}"
    return line + metrics_text(session.metrics)
