"""Checkpoints as format versions 1 and 2 wrote them (docs/formats.md, app/files/checkpoint_format.py), written here
independently of the app's encoder: every point of each loss series (steps then losses,
float64), and for version 1 two floats of optimizer state a parameter whatever the optimizer."""

from __future__ import annotations

import hashlib
import json
import struct

import numpy as np

MAGIC = b"SVTCKPT\0"
APP = "slang-visual-trainer"


def full_series_bytes(checkpoint, version: int, series=None) -> bytes:
    """`checkpoint` in the layout of `version` (1 or 2). `series` gives each run as (label,
    (train steps, train losses), (eval steps, eval losses)); by default the checkpoint's own
    runs, whose records must hold every point (runs shorter than RECENT + BUCKETS)."""
    if series is None:
        series = [(r.label, (r.train.x, r.train.y), (r.eval.x, r.eval.y)) for r in checkpoint.runs]
    state = checkpoint.optimizer_state
    if version == 1:
        state = np.zeros(2 * checkpoint.master.size, np.float32)
        state[: checkpoint.optimizer_state.size] = checkpoint.optimizer_state
    arrays = [checkpoint.master.astype("<f4")]
    if checkpoint.weights is not None:
        arrays.append(checkpoint.weights.astype("<f2"))
    arrays.append(np.asarray(state).astype("<f4"))
    runs = []
    for label, (train_x, train_y), (eval_x, eval_y) in series:
        runs.append({"label": label, "train": len(train_x), "eval": len(eval_x)})
        arrays += [np.asarray(a, "<f8") for a in (train_x, train_y, eval_x, eval_y)]
    header = json.dumps(
        {
            "app": APP,
            "config": checkpoint.config.to_dict(),
            "step": checkpoint.step,
            "optimizer_steps": checkpoint.optimizer_steps,
            "samples_seen": checkpoint.samples_seen,
            "parameters": int(checkpoint.master.size),
            "half_weights": checkpoint.weights is not None,
            "runs": runs,
        }
    ).encode()
    payload = b"".join(a.tobytes() for a in arrays)
    digest = hashlib.sha256(header + payload).digest()
    return struct.pack("<8sIIQ32s", MAGIC, version, len(header), len(payload), digest) + header + payload
