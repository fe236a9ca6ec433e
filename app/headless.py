"""Headless runs: the app without a window. Drives a Session for exactly N steps with a progress
bar, then writes summary.json, loss.csv and network.json (the CLI adds heatmaps.png), all at
once: into a staging folder first, moved into place only when every file is written."""

from __future__ import annotations

import csv
import io
import json
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from .atomic import staged_folder, write_synced
from .device import describe
from .image_eval import write_png
from .network_io import TABLES_FILE, export_network, tables_npy
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
    while session.trainer.step < iterations and session.divergence is None:
        before = evals.count
        bar.update(len(session.advance(session.chunk_size(iterations))))
        if evals.count > before and not quiet:
            bar.write(
                f"step {session.trainer.step:>7}  train loss {session.train_loss:.6g}  "
                f"eval loss {session.eval_loss:.6g}",
                file=sys.stderr,
            )
    bar.close()
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
    )


def _summary(session: Session, result: HeadlessResult) -> dict:
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
        **({"psnr": _finite(session.image.psnr)} if session.image is not None else {}),
        "config": config.to_dict(),
        **({"grad_check": result.grad_check} if result.grad_check is not None else {}),
    }


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _eval_means(evals, first: np.ndarray, last: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each step range [first, last]: how many evaluations were taken in it (a bucket of
    the eval record counts by its last step) and their mean loss."""
    _, at, count, _, mean, _ = evals.rows()
    sums = np.concatenate([[0.0], np.cumsum(mean * count)])
    counts = np.concatenate([[0.0], np.cumsum(count)])
    lo, hi = np.searchsorted(at, first, "left"), np.searchsorted(at, last, "right")
    n = counts[hi] - counts[lo]
    return n, (sums[hi] - sums[lo]) / np.maximum(n, 1)


def _loss_csv(session: Session) -> bytes:
    """One row per step while the run's loss record holds every step (RECENT + BUCKETS of
    app/history.py): step, train_loss, eval_loss. Beyond that, one row per row of the record
    (buckets of older steps, then every recent step), with three more columns: how many steps
    the row stands for and their min and max train loss; `step` is its last step and
    `train_loss` their mean. `eval_loss` is the loss of the evaluation at that step (or the
    mean of those within the row's steps), empty where none was taken."""
    run = session.history.current
    first, last, count, low, mean, high = run.train.rows()
    evals, eval_loss = _eval_means(run.eval, first, last)
    summarised = not run.train.exact
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(["step", "train_loss", "eval_loss"] + (["steps", "train_loss_min", "train_loss_max"] * summarised))
    for i in range(len(first)):
        row = [int(last[i]), repr(float(mean[i])), repr(float(eval_loss[i])) if evals[i] else ""]
        if summarised:
            row += [int(count[i]), repr(float(low[i])), repr(float(high[i]))]
        writer.writerow(row)
    return text.getvalue().encode()


def write_outputs(
    session: Session, result: HeadlessResult, out_dir: Path, extra: Callable[[Path], None] | None = None
) -> None:
    """Writes the run's files, plus what `extra(folder)` writes, into `out_dir`; on any error
    nothing is left behind (an OSError propagates)."""
    plan, params = session.trainer.plan, session.trainer.parameters()
    network = export_network(plan, session.config, params)
    with staged_folder(out_dir) as staging:
        write_synced(staging / "summary.json", (json.dumps(_summary(session, result), indent=2) + "\n").encode())
        write_synced(staging / "loss.csv", _loss_csv(session))
        write_synced(staging / "network.json", (json.dumps(network) + "\n").encode())
        if plan.grid is not None:
            write_synced(staging / TABLES_FILE, tables_npy(plan, params))
        if session.image is not None:  # the learned image at the input's resolution (summary.json's psnr)
            write_png(staging / "learned.png", session.image.learned())
        if extra is not None:
            extra(staging)
