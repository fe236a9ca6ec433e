"""Checkpoints: the whole training state in one file, so that a run can stop anywhere and go on
later bit for bit. A session's state taken and put back, and the files read and written; their
byte format, with encode and decode, is in app/files/checkpoint_format.py."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..config import config as cfg
from ..loop.history import LossRecord, Run
from ..views.image_eval import PsnrHistory
from .atomic import write_atomic

# Callers and tests use checkpoints through this module alone (ckpt.Checkpoint, ckpt.encode,
# ckpt.decode, ckpt.MAGIC, CheckpointError), wherever each is defined: MAGIC is re-exported.
from .checkpoint_format import MAGIC, MAX_FILE_BYTES, SERIES, Checkpoint, CheckpointError, decode, encode  # noqa: F401

if TYPE_CHECKING:
    from ..loop.session import Session

PSNR = "psnr"  # the current run's metric record that holds an image target's PSNR curve


# ---- taking and putting back a session's state --------------------------------------------
def capture(session: Session) -> Checkpoint:
    """The session's state now; a step recorded in pieces is finished first."""
    session.complete_step()
    t, count = session.trainer, session.trainer.plan.param_count
    weights = t.gpu.read(t.weights, count, np.float16) if t.weights is not t.master else None
    runs = [_copy_run(run) for run in session.history.runs]
    if session.image is not None:
        runs[-1].metrics.update(_psnr_record(session.image.history))
    return Checkpoint(
        t.config,
        t.step,
        t.optimizer_steps,
        t.samples_seen,
        t.parameters(),
        weights,
        t.optimizer_state_values(),
        runs,
        t.data_position,
    )


def restore(session: Session, checkpoint: Checkpoint, config: cfg.Config | None = None) -> None:
    """Puts `checkpoint` into a session whose network has its structure (else rebuild first).
    `config` may change hot fields from there on (e.g. --lr); a new optimizer starts afresh."""
    trainer = session.trainer
    if trainer.config.structure() != checkpoint.config.structure():
        raise ValueError("the session's network differs from the checkpoint's: rebuild it first")
    trainer.apply(checkpoint.config)
    trainer.load(
        checkpoint.master,
        checkpoint.weights,
        checkpoint.optimizer_state,
        checkpoint.step,
        checkpoint.optimizer_steps,
        checkpoint.samples_seen,
        checkpoint.data_position,
    )
    if config is not None:
        trainer.apply(config)
    runs = [_copy_run(run) for run in checkpoint.runs]
    psnr = runs[-1].metrics.pop(PSNR, None)  # absent before image targets kept it, and for other truths
    session.continue_history(runs)
    if session.image is not None and psnr is not None:
        _, last, _, _, mean, _ = psnr.rows()  # a bucket of older passes: its last step, its mean
        session.image.history = PsnrHistory([int(step) for step in last], [float(value) for value in mean])


def _psnr_record(history: PsnrHistory) -> dict[str, LossRecord]:
    """An image target's PSNR curve (the current run's) as the run's metric record PSNR, bounded
    as the loss records are: the format holds a run's metrics whatever their names, so files
    with it load in versions that do not know it, and files without it load here. Its finite
    values only: the plot shows no others, and a NaN would spoil a bucket's sum."""
    steps, values = np.asarray(history.steps, np.float64), np.asarray(history.values, np.float64)
    finite = np.isfinite(values)
    return {PSNR: LossRecord.from_points(steps[finite], values[finite])} if finite.any() else {}


def _copy_run(run: Run) -> Run:
    """A run whose records are copies: the session and the checkpoint never share one."""
    copy = Run(run.label, run.loss, run.problem)
    for name in SERIES:
        setattr(copy, name, _copy_record(getattr(run, name)))
    copy.metrics = {name: _copy_record(record) for name, record in run.metrics.items()}
    return copy


def _copy_record(record: LossRecord) -> LossRecord:
    return LossRecord.from_state(*record.state())


def save(path: str | Path, checkpoint: Checkpoint) -> None:
    """Writes atomically: the previous file, if any, stays until the new one is complete."""
    write_atomic(path, encode(checkpoint))


def load(path: str | Path) -> Checkpoint:
    name = str(path)
    try:
        size = Path(path).stat().st_size
        if size > MAX_FILE_BYTES:
            raise CheckpointError(f"checkpoint {name!r} is larger than {MAX_FILE_BYTES} bytes")
        data = Path(path).read_bytes()
    except OSError as error:
        raise CheckpointError(f"cannot read checkpoint {name!r}: {error.strerror or error}") from None
    return decode(data, name)
