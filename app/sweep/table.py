"""What a sweep folder shows of its trials: trials.csv (one row a trial, in trial order) and
best.json (the best complete trial and its whole config). Both are rewritten whole, atomically,
each time a trial finishes, so a sweep stopped at any moment leaves them current. The columns and
fields are the contract with whoever reads the folder: docs/formats.md."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..files.atomic import write_atomic
from ..files.sweep_folder import trials_header
from .space import Space

TRIALS_FILE = "trials.csv"
BEST_FILE = "best.json"


def trial_name(number: int) -> str:
    """A trial's id in the folder: its Optuna trial number, zero-padded to 4 digits."""
    return f"{number:04d}"


@dataclass(frozen=True)
class TrialRecord:
    """A finished trial, as the tables show it."""

    number: int
    state: str  # complete, pruned or failed (app/files/sweep_folder.py's STATES, which reads it back)
    value: float | None  # the metric's last value
    steps: int | None  # steps trained
    wall_s: float | None  # wall seconds of its training
    gpu: str  # the adapter that ran it
    seed: int | None
    values: dict[str, Any]  # the searched fields' values
    note: str  # a failed trial's error, or why it was pruned; else empty


def trials_csv(records: list[TrialRecord], space: Space) -> bytes:
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(trials_header(space.metric, space.fields))
    for record in sorted(records, key=lambda r: r.number):
        row = [trial_name(record.number), record.state, _number(record.value), _number(record.steps)]
        row += [_number(record.wall_s), record.gpu, _number(record.seed)]
        row += [json.dumps(record.values[name]) if name in record.values else "" for name in space.fields]
        writer.writerow([*row, record.note])
    return text.getvalue().encode()


def _number(value: float | int | None) -> str:
    return "" if value is None else repr(value)


def best_of(records: list[TrialRecord], space: Space) -> TrialRecord | None:
    """The complete trial with the best metric (the lowest trial number among equals)."""
    complete = [r for r in records if r.state == "complete" and r.value is not None]
    if not complete:
        return None
    sign = 1 if space.mode == "min" else -1
    return min(complete, key=lambda r: (sign * r.value, r.number))


def best_document(best: TrialRecord, space: Space) -> dict:
    config = space.config_for(best.values)
    return {
        "trial": trial_name(best.number),
        "metric": space.metric,
        "mode": space.mode,
        "value": best.value,
        "iterations": space.iterations,
        "seed": best.seed,
        "config": config.to_dict(),
    }


def write_tables(folder: Path, records: list[TrialRecord], space: Space) -> None:
    """trials.csv, and best.json once a trial is complete, each replaced whole."""
    write_atomic(folder / TRIALS_FILE, trials_csv(records, space))
    best = best_of(records, space)
    if best is not None:
        write_atomic(folder / BEST_FILE, (json.dumps(best_document(best, space), indent=2) + "\n").encode())
