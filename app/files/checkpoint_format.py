"""The checkpoint file's byte format (checkpoint.py takes a session's state, puts it back, and reads
and writes the files): a magic, a version, a SHA-256 over a JSON header and little-endian arrays
(docs/formats.md, 'Checkpoints'). Versions 1 and 2 are read too, their full series converted into
records; anything else is refused with one line naming the problem."""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass

import numpy as np

from ..config import config as cfg
from ..config.records import from_dict
from ..errors import UserError, counted
from ..kernels.planning import plan_for
from ..loop.history import EARLIER_RUNS_KEPT, LossRecord, Run
from ..model.losses import LOSSES
from ..model.optimizers import OPTIMIZERS

MAGIC = b"SVTCKPT\0"
VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
V1_STATE_WIDTH = 2  # version 1 saved two floats of optimizer state a parameter
FULL_SERIES_VERSIONS = (1, 2)  # every point of each loss series, not a bounded record
SERIES = ("train", "eval")
APP = "slang-visual-trainer"
_PREFIX = struct.Struct("<8sIIQ32s")
MAX_HEADER_BYTES = 1 << 20
MAX_FILE_BYTES = 1 << 31
MAX_STEP = (1 << 32) - 1  # the kernels' step index is a uint (shaders/common/step_args.slang)


class CheckpointError(UserError):
    """A file that is not a checkpoint this app can load; the message is one line."""


@dataclass
class Checkpoint:
    config: cfg.Config
    step: int
    optimizer_steps: int
    samples_seen: int
    master: np.ndarray  # float32[P]
    weights: np.ndarray | None  # float16[P]: the half copy the kernels use, exactly as it was
    optimizer_state: np.ndarray  # float32[W * P], W the config's optimizer's state width
    runs: list[Run]  # the loss history; the last run is the one that goes on
    # Samples drawn from the dataset's points (app/train/point_data.py): the points themselves are
    # made again from the config, so a resumed run draws the same batches
    data_position: int = 0


def encode(checkpoint: Checkpoint) -> bytes:
    arrays = [checkpoint.master.astype("<f4")]
    if checkpoint.weights is not None:
        arrays.append(checkpoint.weights.astype("<f2"))
    arrays.append(checkpoint.optimizer_state.astype("<f4"))
    runs = []
    for run in checkpoint.runs:
        entry = {"label": run.label} | ({"loss": run.loss} if run.loss is not None else {})
        entry |= {"problem": run.problem} if run.problem is not None else {}
        for name in SERIES:
            meta, record_arrays = getattr(run, name).state()
            entry[name] = meta
            arrays += [a.astype("<f8") for a in record_arrays]
        if run.metrics:
            entry["metrics"] = {}
        for name, record in run.metrics.items():
            meta, record_arrays = record.state()
            entry["metrics"][name] = meta
            arrays += [a.astype("<f8") for a in record_arrays]
        runs.append(entry)
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
            "data_position": checkpoint.data_position,
        }
    ).encode()
    payload = b"".join(a.tobytes() for a in arrays)
    digest = hashlib.sha256(header + payload).digest()
    return _PREFIX.pack(MAGIC, VERSION, len(header), len(payload), digest) + header + payload


def decode(data: bytes, name: str = "checkpoint") -> Checkpoint:
    """The checkpoint in `data`, or a CheckpointError naming the first problem."""

    def fail(problem: str) -> CheckpointError:
        return CheckpointError(f"checkpoint {name!r} {problem}")

    if data[: len(MAGIC)] != MAGIC:
        if len(data) < len(MAGIC) and MAGIC.startswith(data) and data:
            raise fail(f"is truncated ({counted(len(data), 'byte')})")
        raise fail("is not a Slang Visual Trainer checkpoint")
    if len(data) < _PREFIX.size:
        raise fail(f"is truncated ({len(data)} of at least {_PREFIX.size} bytes)")
    _, version, header_size, payload_size, digest = _PREFIX.unpack_from(data)
    if version not in READABLE_VERSIONS:
        raise fail(f"has format version {version}; this app reads versions 1 to {VERSION}")
    if header_size > MAX_HEADER_BYTES:
        raise fail(f"is corrupted (a header of {header_size} bytes)")
    end = _PREFIX.size + header_size + payload_size
    if len(data) < end:
        raise fail(f"is truncated ({len(data)} of {end} bytes)")
    if len(data) > end:
        raise fail(f"is corrupted ({len(data) - end} bytes after its end)")
    body = memoryview(data)[_PREFIX.size :]
    if hashlib.sha256(body).digest() != digest:
        raise fail("is corrupted (checksum mismatch)")
    try:
        header = json.loads(bytes(body[:header_size]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise fail("has a header that is not JSON") from None
    return _from_parts(header, body[header_size:], fail, version)


def _count(header: dict, key: str, fail) -> int:
    value = header.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise fail(f"has no valid {key!r} (got {value!r})")
    return value


def _from_parts(header, payload: memoryview, fail, version: int = VERSION) -> Checkpoint:
    """Checks the header against what this app can build and cuts the payload into arrays."""
    if not isinstance(header, dict) or header.get("app") != APP:
        raise fail("was not written by Slang Visual Trainer")
    try:
        config = from_dict(header.get("config"), source="its config")
    except UserError as error:
        raise fail(f"holds an invalid config: {error}") from None
    counts = [_count(header, key, fail) for key in ("step", "optimizer_steps", "samples_seen", "parameters")]
    if not counts[1] <= counts[0] <= MAX_STEP or counts[2] >= 1 << 63:
        raise fail(f"has impossible step counters ({counts[0]}, {counts[1]}, {counts[2]})")
    params = plan_for(config).param_count
    if counts[3] != params:
        raise fail(f"holds {counts[3]} parameters, but its network has {params}")
    half = header.get("half_weights")
    if half is not (config.precision == "half"):
        raise fail(f"does not match its precision ({config.precision}, half_weights {half!r})")
    runs = header.get("runs")
    if (
        not isinstance(runs, list)
        or not 1 <= len(runs) <= EARLIER_RUNS_KEPT + 1
        or not all(isinstance(r, dict) and isinstance(r.get("label"), str) for r in runs)
    ):
        raise fail("has no valid list of runs")
    losses = [r.get("loss") for r in runs]  # absent before runs kept it
    if not all(loss is None or (isinstance(loss, str) and loss in LOSSES) for loss in losses):
        raise fail(f"has a run of an unknown loss (one of {', '.join(LOSSES)} or none)")
    if not all(isinstance(r.get("problem", ""), str) for r in runs):  # absent before runs kept it
        raise fail("has a run whose problem is not a text")
    width = OPTIMIZERS[config.optimizer].state_width
    saved_width = V1_STATE_WIDTH if version == 1 else width
    lengths = [params, params, saved_width * params] if half else [params, saved_width * params]
    records = _record_layouts(runs, version, fail)
    lengths += [n for meta, record_lengths in records for n in record_lengths]
    sizes = ([4, 2, 4] if half else [4, 4]) + [8] * (len(lengths) - (3 if half else 2))
    expected = sum(n * s for n, s in zip(lengths, sizes))
    if expected != len(payload):
        raise fail(f"has {counted(len(payload), 'byte')} of arrays where its header describes {expected}")
    arrays, offset = [], 0
    for n, s in zip(lengths, sizes):
        arrays.append(np.frombuffer(payload, dtype=f"<f{s}", count=n, offset=offset).astype(f"=f{s}"))
        offset += n * s
    master, weights, state = arrays[0], (arrays[1] if half else None), arrays[2 if half else 1][: width * params]
    if not all(np.all(np.isfinite(a)) for a in (master, state) + ((weights,) if half else ())):
        raise fail("holds parameters or optimizer state that are not finite")
    saved_runs = _runs(runs, records, iter(arrays[3 if half else 2 :]), fail)
    position = header.get("data_position", 0)
    if isinstance(position, bool) or not isinstance(position, int) or position < 0:
        raise fail(f"has no valid 'data_position' (got {position!r})")
    return Checkpoint(config, counts[0], counts[1], counts[2], master, weights, state, saved_runs, position)


def _record_layouts(runs: list[dict], version: int, fail) -> list[tuple[dict | None, list[int]]]:
    """For each run's train, eval and metric series: its record's counts (None for a version that
    saved every point) and the lengths of the arrays it was saved as."""
    layouts = []
    for run in runs:
        for name in SERIES:
            if version in FULL_SERIES_VERSIONS:
                n = _count(run, name, fail)
                layouts.append((None, [n, n]))
            else:
                layouts.append(_record_layout(run.get(name), name, fail))
        for name, meta in _metric_counts(run, fail).items():
            layouts.append(_record_layout(meta, f"{name!r} metric", fail))
    return layouts


def _record_layout(meta, what: str, fail) -> tuple[dict, list[int]]:
    if not isinstance(meta, dict):
        raise fail(f"has no valid {what} loss record counts")
    meta = {key: _count(meta, key, fail) for key in ("count", "span", "recent", "buckets")}
    return meta, LossRecord.array_lengths(meta)


def _metric_counts(run: dict, fail) -> dict:
    """A run's metric records' counts by name (absent before datasets, and in versions 1 and 2)."""
    metrics = run.get("metrics", {})
    if not isinstance(metrics, dict) or not all(isinstance(name, str) for name in metrics):
        raise fail("has no valid metrics")
    return metrics


def _runs(entries: list[dict], layouts, history, fail) -> list[Run]:
    """The saved runs, each series rebuilt as a LossRecord from its arrays in `history`."""
    runs, layouts = [], iter(layouts)
    for k, entry in enumerate(entries):
        run = Run(entry["label"], entry.get("loss"), entry.get("problem"))
        names = list(SERIES) + [("metrics", name) for name in _metric_counts(entry, fail)]
        for name in names:
            meta, lengths = next(layouts)
            parts = [next(history) for _ in lengths]
            what = name if isinstance(name, str) else f"{name[1]!r} metric"
            try:
                record = LossRecord.from_points(*parts) if meta is None else LossRecord.from_state(meta, parts)
            except ValueError as error:
                raise fail(f"has an inconsistent {what} loss record in run {k + 1}: {error}") from None
            if isinstance(name, str):
                setattr(run, name, record)
            else:
                run.metrics[name[1]] = record
        runs.append(run)
    return runs
