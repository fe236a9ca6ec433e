"""What a headless run's files say, built from its Session after training: summary.json's
document and loss.csv's rows, and the one-line figures of a dataset that the progress lines, the
window's report and network.json share. app/run/output.py writes them."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

import numpy as np

from ..gpu.device import describe
from ..loop.session import Session
from ..truth.mesh_truth import mesh_entry
from ..views.point_metrics import finite_or_none, is_output_test_loss


@dataclass
class HeadlessResult:
    steps: int
    train_loss: float
    eval_loss: float
    eval_grad_loss: float  # the same grid's derivative loss (app.views.evaluation)
    wall_seconds: float
    diverged_at: int | None  # 1-based step whose loss was not finite
    samples: int = 0  # samples this run trained (a resumed run started with some)
    grad_check: dict | None = None  # --grad-check's figures (app.check.grad_check)
    interrupted_at: int | None = None  # the step Ctrl+C stopped it at, before the iterations asked
    surface: dict | None = None  # a signed distance of (x, y, z): its surface metrics (app/views/surface_tracker.py)


def metrics_text(metrics: dict) -> str:
    """A dataset's figures in one line: the training and test sets' loss and accuracy."""
    text = f"train set loss {metrics['train_loss']:.6g}, test loss {metrics['test_loss']:.6g}"
    if metrics["test_accuracy"] is not None:
        text += f", accuracy {metrics['train_accuracy']:.1%} train / {metrics['test_accuracy']:.1%} test"
    return text


def image_text(image) -> str:
    """An image target's figures in one line (app/views/image_eval.py): the loss over its pixels,
    the training loss's measure, and the PSNR. The grid's eval loss samples an image at 64 x 64
    points, and its derivative loss differentiates a bilinear interpolation: neither tells how
    well the image is learned."""
    return f"image loss {image.loss:.6g} over {image.width}x{image.height} pixels, PSNR {image.psnr:.2f} dB"


def data_entry(session: Session) -> dict | None:
    """The data source, the split and the last evaluation's figures (None for formulas)."""
    data = session.trainer.data
    if data is None:
        return None
    entry = data.dataset.summary(session.config.data_settings)
    entry["epochs"] = session.trainer.epochs
    entry["metrics"] = {name: finite_or_none(value) for name, value in (session.metrics or {}).items()}
    return entry


def _mesh(session: Session) -> dict:
    config = session.config
    return mesh_entry(session.trainer.plan.mesh.spec, [*config.domain, *config.z_range])


def summary(session: Session, result: HeadlessResult) -> dict:
    config = session.config
    data = data_entry(session)
    return {
        "steps": result.steps,
        "train_loss": finite_or_none(result.train_loss),
        "eval_loss": result.eval_loss,
        # points have no truth between them, an image's is a bilinear interpolation: no derivative loss
        "eval_grad_loss": finite_or_none(result.eval_grad_loss) if data is None and session.image is None else None,
        "eval_grid": session.grid,
        "wall_seconds": result.wall_seconds,
        "samples_per_second": result.samples / result.wall_seconds if result.wall_seconds > 0 else None,
        "device": describe(session.gpu.device),
        # which GPU ran it: {"index", "name", "uuid"} (app/gpu/adapters.py), null where unknown
        "adapter": session.gpu.adapter.to_dict() if session.gpu.adapter is not None else None,
        "matmul": session.trainer.plan.matmul,  # "tensor-core" or "simt"
        "gradient_path": session.trainer.plan.gradient_path,  # app/kernels/paths/: thread, pairs, fused...
        "gradient_sums": session.trainer.path.sums,  # where the sums are kept: thread, group, tiles or lanes
        "diverged_at_step": result.diverged_at,
        **({"data": data} if data is not None else {}),
        **({"mesh": _mesh(session)} if session.trainer.plan.mesh is not None else {}),
        **(
            {"psnr": finite_or_none(session.image.psnr), "image_loss": finite_or_none(session.image.loss)}
            if session.image is not None
            else {}
        ),
        "interrupted_at_step": result.interrupted_at,
        "config": config.to_dict(),
        **({"grad_check": result.grad_check} if result.grad_check is not None else {}),
        **({"surface": result.surface} if result.surface is not None else {}),
    }


def _eval_means(evals, first: np.ndarray, last: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each step range [first, last]: how many evaluations were taken in it (a bucket of
    the eval record counts by its last step) and their mean loss."""
    _, at, count, _, mean, _ = evals.rows()
    sums = np.concatenate([[0.0], np.cumsum(mean * count)])
    counts = np.concatenate([[0.0], np.cumsum(count)])
    lo, hi = np.searchsorted(at, first, "left"), np.searchsorted(at, last, "right")
    n = counts[hi] - counts[lo]
    means = (sums[hi] - sums[lo]) / np.maximum(n, 1)
    # a row with one exact evaluation takes its value as it is (a difference of running sums
    # would round it)
    single = (hi - lo == 1) & (count[np.minimum(lo, len(count) - 1)] == 1)
    means[single] = mean[lo[single]]
    return n, means


def loss_csv(session: Session) -> bytes:
    """One row per step while the run's loss record holds every step (RECENT + BUCKETS of
    app/loop/history.py): step, train_loss, then the evaluations' columns: eval_loss, or for a
    dataset test_loss, train_set_loss, both sets' accuracy (classes) and each value column's test
    loss, test_loss[NAME] (two or more value columns). Beyond that, one row per row of
    the record (buckets of older steps, then every recent step), with three more columns: how
    many steps the row stands for and their min and max train loss; `step` is its last step and
    `train_loss` their mean. An evaluation's column holds its value at that step (or the mean
    of those within the row's steps), empty where none was taken."""
    run = session.history.current
    columns = {"eval_loss": run.eval}
    if session.trainer.data is not None:
        columns = {"test_loss": run.eval, "train_set_loss": run.metrics.get("train_loss")}
        columns.update((name, run.metrics.get(name)) for name in ("train_accuracy", "test_accuracy"))
        columns.update((name, record) for name, record in run.metrics.items() if is_output_test_loss(name))
    first, last, count, low, mean, high = run.train.rows()
    evaluated = [_eval_means(record, first, last) for record in columns.values() if record is not None]
    names = [name for name, record in columns.items() if record is not None]
    summarised = not run.train.exact
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(["step", "train_loss", *names] + (["steps", "train_loss_min", "train_loss_max"] * summarised))
    for i in range(len(first)):
        row = [int(last[i]), repr(float(mean[i]))]
        row += [repr(float(values[i])) if taken[i] else "" for taken, values in evaluated]
        if summarised:
            row += [int(count[i]), repr(float(low[i])), repr(float(high[i]))]
        writer.writerow(row)
    return text.getvalue().encode()
