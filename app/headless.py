"""Headless runs: the app without a window. Drives a Session for exactly N steps with a progress
bar (Ctrl+C stops it after the current chunk), and builds summary.json and loss.csv;
app/run_output.py writes them with network.json and the rest."""

from __future__ import annotations

import csv
import io
import math
import signal
import sys
import threading
import time
from dataclasses import dataclass

from tqdm import tqdm

from .device import describe
from .session import Session

EXIT_DIVERGED = 3


@dataclass
class HeadlessResult:
    steps: int
    train_loss: float
    eval_loss: float
    eval_grad_loss: float  # the same grid's derivative loss (app.evaluation)
    wall_seconds: float
    diverged_at: int | None  # 1-based step whose loss was not finite
    samples: int = 0  # samples this run trained (a resumed run started with some)
    grad_check: dict | None = None  # --grad-check's figures (app.grad_check)
    interrupted_at: int | None = None  # the step Ctrl+C stopped it at, before the iterations asked


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
                bar.write(
                    f"step {session.trainer.step:>7}  train loss {session.train_loss:.6g}  "
                    f"eval loss {session.eval_loss:.6g}",
                    file=sys.stderr,
                )
    bar.close()
    interrupted = session.trainer.step if interrupt.requested and session.trainer.step < iterations else None
    wall = time.perf_counter() - start
    if evals.count == 0 or evals.x[-1] != session.trainer.step:
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


def summary(session: Session, result: HeadlessResult) -> dict:
    config = session.config
    return {
        "steps": result.steps,
        "train_loss": result.train_loss if math.isfinite(result.train_loss) else None,
        "eval_loss": result.eval_loss,
        "eval_grad_loss": result.eval_grad_loss if math.isfinite(result.eval_grad_loss) else None,
        "eval_grid": session.grid,
        "wall_seconds": result.wall_seconds,
        "samples_per_second": result.samples / result.wall_seconds if result.wall_seconds > 0 else None,
        "device": describe(session.gpu.device),
        "matmul": session.trainer.plan.matmul,  # "tensor-core" or "simt"
        "gradient_sums": session.trainer.plan.gradient_path,  # "thread", "group" or "tiles"
        "diverged_at_step": result.diverged_at,
        "interrupted_at_step": result.interrupted_at,
        "config": config.to_dict(),
        **({"grad_check": result.grad_check} if result.grad_check is not None else {}),
    }


def loss_csv(session: Session) -> bytes:
    run = session.history.current
    evals = dict(zip(run.eval.x.astype(int).tolist(), run.eval.y.tolist()))
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(["step", "train_loss", "eval_loss"])
    for step, loss in zip(run.train.x.astype(int).tolist(), run.train.y.tolist()):
        writer.writerow([step, repr(loss), repr(evals[step]) if step in evals else ""])
    return text.getvalue().encode()
