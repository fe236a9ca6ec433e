"""Headless runs: the app without a window. Drives a Session for exactly N steps with a progress
bar (Ctrl+C stops it after the current chunk); app/files/run_summary.py builds summary.json and
loss.csv from it, and app/entry/run_output.py writes them with network.json, and for a dataset
split.csv, a grid's tables, an image's learned.png and the rest."""

from __future__ import annotations

import signal
import sys
import threading
import time

from tqdm import tqdm

from ..files.run_summary import HeadlessResult, image_text, metrics_text
from ..loop.session import Session

EXIT_DIVERGED = 3


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
