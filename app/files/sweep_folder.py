"""A sweep's folder (docs/formats.md, 'Sweep folders') read for the window's sweep viewer: trials.csv,
best.json, what space.json's "search" says of each field, and each trial's run folder. Everything is
checked here, so the window draws only well-formed trials: a missing or malformed file is a one-line
UserError naming the file (and the row and column)."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config.config import Config
from ..config.files import load_file
from ..errors import UserError, counted, read_user_text

MAX_TRIALS_BYTES = 16 << 20  # 100,000 trials of a few hundred bytes; never read an endless file
MAX_JSON_BYTES = 1 << 20  # best.json and space.json are a few kilobytes
FIXED_COLUMNS = ("trial", "state", None, "steps", "wall_s", "gpu", "seed")  # None: the metric's column
LAST_COLUMN = "error"
FINISHED_STATES = ("complete", "pruned", "failed")
# A trial a stopped sweep left running: its last reported value and step; --resume runs it again.
STATES = (*FINISHED_STATES, "interrupted")
MODES = ("min", "max")
# A sweep's metrics and which way is better (a space file's metric is one of them: app/sweep/space.py).
METRIC_MODES = {"eval_loss": "min", "train_loss": "min", "test_loss": "min", "test_accuracy": "max", "psnr": "max"}
TRIAL_ID = re.compile(r"[0-9]{4,}")  # Optuna's trial number, zero-padded: also a folder's name


class NoTrialYet(UserError):
    """A sweep folder (it has space.json) whose first trial has not finished: a running sweep writes
    trials.csv when one has."""


@dataclass(frozen=True)
class Trial:
    id: str  # "0003": its Optuna number, zero-padded, and its folder's name under trials/
    state: str  # one of STATES
    metric: float | None  # the metric's last value; None where the trial has none (or not finite)
    steps: int | None
    wall_s: float | None
    gpu: str
    seed: int
    parameters: dict[str, Any]  # each searched field's value, as json.loads read it
    error: str  # a failed trial's error, or why it was pruned


@dataclass(frozen=True)
class Best:
    trial: str
    value: float
    iterations: int
    seed: int
    config: dict[str, Any]  # the whole config, as summary.json's "config"


@dataclass(frozen=True)
class SearchedField:
    name: str
    distribution: str  # what space.json's "search" says ("loguniform", "choice", ...); "" where it says nothing
    choices: tuple[Any, ...] | None  # a "choice" distribution's values, in the space's order


@dataclass(frozen=True)
class SweepFolder:
    path: Path
    metric: str  # the metric's name, its column in trials.csv
    mode: str  # "min" or "max": which way is better
    searched: tuple[SearchedField, ...]  # in trials.csv's column order
    trials: tuple[Trial, ...]  # in trial order
    best: Best | None  # None until a trial completes (the sweep writes best.json then)

    @property
    def best_trial(self) -> str | None:
        return self.best.trial if self.best is not None else None

    def trial(self, trial_id: str) -> Trial:
        return next(t for t in self.trials if t.id == trial_id)

    def run_folder(self, trial_id: str) -> Path:
        return self.path / "trials" / trial_id

    def network_path(self, trial_id: str) -> Path:
        return self.run_folder(trial_id) / "network.json"

    def trial_config(self, trial_id: str) -> Config:
        """The config the trial trained with: its summary.json's "config" (as --config reads it)."""
        summary = self.run_folder(trial_id) / "summary.json"
        if not summary.is_file():
            raise UserError(f"no summary.json in {str(summary.parent)!r}")
        return load_file(summary)


def read_sweep(path: str | Path) -> SweepFolder:
    """The sweep folder at `path`, checked whole; a UserError of one line where it is not one."""
    folder = Path(path)
    if not folder.is_dir():
        raise UserError(f"{str(folder)!r} is not a folder")
    if not (folder / "trials.csv").is_file():
        if (folder / "space.json").is_file():
            raise NoTrialYet(f"{str(folder)!r} has no trials.csv yet: no trial of its sweep has finished")
        raise UserError(f"{str(folder)!r} is not a sweep folder: it has no trials.csv")
    header, rows = _csv_rows(folder / "trials.csv")
    metric, searched_names = _columns(header)
    trials = tuple(_trial(row, header, metric, searched_names, line) for line, row in rows)
    ids = [trial.id for trial in trials]
    if len(set(ids)) != len(ids):
        raise UserError(f"trials.csv lists trial {next(i for i in ids if ids.count(i) > 1)} twice")
    mode, best = _best(folder / "best.json", metric, set(ids))
    searched = _searched(folder / "space.json", searched_names)
    return SweepFolder(folder, metric, mode, searched, trials, best)


def _csv_rows(path: Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """trials.csv's header and its rows, each with its line number; blank lines are skipped."""
    text = read_user_text(path, "trials.csv", MAX_TRIALS_BYTES)
    try:
        rows = [(number + 1, row) for number, row in enumerate(csv.reader(io.StringIO(text))) if row]
    except csv.Error as error:
        raise UserError(f"trials.csv is not CSV: {error}") from None
    if not rows:
        raise UserError("trials.csv is empty: it needs a header and a row a trial")
    if len(rows) == 1:
        raise NoTrialYet("trials.csv lists no trial yet")
    return rows[0][1], rows[1:]


def trials_header(metric: str, fields) -> list[str]:
    """trials.csv's header for a sweep of `metric` over the searched `fields`, as the sweep writes
    it and this reads it."""
    return [metric if name is None else name for name in FIXED_COLUMNS] + [*fields, LAST_COLUMN]


def _columns(header: list[str]) -> tuple[str, tuple[str, ...]]:
    """The metric's name and the searched fields', from trials.csv's header."""
    expected = ", ".join(name or "<metric>" for name in FIXED_COLUMNS) + f", <searched fields>, {LAST_COLUMN}"
    fixed = len(FIXED_COLUMNS)
    if len(header) < fixed + 2 or header[-1] != LAST_COLUMN:
        raise UserError(f"trials.csv's header must be {expected}")
    for name, found in zip(FIXED_COLUMNS, header):
        if name is not None and found != name:
            raise UserError(f"trials.csv's header must be {expected} (found {found!r} for {name!r})")
    names = header[:-1]
    if len(set(names)) != len(names) or not all(names):
        raise UserError("trials.csv's header names a column twice, or one is empty")
    return header[2], tuple(header[fixed:-1])


def _trial(row: list[str], header: list[str], metric: str, searched: tuple[str, ...], line: int) -> Trial:
    where = f"trials.csv line {line}"
    if len(row) != len(header):
        raise UserError(f"{where} has {counted(len(row), 'value')} for {len(header)} columns")
    cell = dict(zip(header, row))
    if not TRIAL_ID.fullmatch(cell["trial"]):
        raise UserError(f"{where}: trial must be a zero-padded number such as 0003 (got {cell['trial'][:20]!r})")
    if cell["state"] not in STATES:
        raise UserError(f"{where}: state must be one of {', '.join(STATES)} (got {cell['state'][:20]!r})")
    parameters = {}
    for name in searched:
        try:
            parameters[name] = json.loads(cell[name])
        except (json.JSONDecodeError, RecursionError):
            raise UserError(f"{where}: {name} is not JSON text (got {cell[name][:30]!r})") from None
    value = _number(cell[metric], float, f"{where}: {metric}", empty=True)
    return Trial(
        id=cell["trial"],
        state=cell["state"],
        metric=value if value is not None and math.isfinite(value) else None,
        steps=_number(cell["steps"], int, f"{where}: steps", empty=True),
        wall_s=_number(cell["wall_s"], float, f"{where}: wall_s", empty=True),
        gpu=cell["gpu"],
        seed=_number(cell["seed"], int, f"{where}: seed"),
        parameters=parameters,
        error=cell[LAST_COLUMN],
    )


def _number(text: str, kind: type, what: str, empty: bool = False):
    if empty and text.strip() == "":
        return None
    try:
        return kind(text)
    except ValueError:
        raise UserError(
            f"{what} must be {'a whole number' if kind is int else 'a number'} (got {text[:20]!r})"
        ) from None


def _json_object(path: Path, what: str) -> dict:
    text = read_user_text(path, what, MAX_JSON_BYTES)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise UserError(f"{what} is not valid JSON (line {error.lineno}: {error.msg})") from None
    except RecursionError:
        raise UserError(f"{what} is nested too deeply") from None
    if not isinstance(data, dict):
        raise UserError(f"{what} must be a JSON object")
    return data


def _best(path: Path, metric: str, ids: set[str]) -> tuple[str, Best | None]:
    if not path.is_file():  # a sweep whose trials so far were all pruned or failed
        return METRIC_MODES.get(metric, "min"), None
    data = _json_object(path, "best.json")
    if data.get("metric") != metric:
        raise UserError(f"best.json's metric must be trials.csv's, {metric!r} (got {str(data.get('metric'))[:30]!r})")
    if data.get("mode") not in MODES:
        raise UserError(f"best.json's mode must be min or max (got {str(data.get('mode'))[:20]!r})")
    if data.get("trial") not in ids:
        raise UserError(f"best.json's trial must be one of trials.csv's (got {str(data.get('trial'))[:20]!r})")
    value, iterations, seed = data.get("value"), data.get("iterations"), data.get("seed")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UserError("best.json's value must be a number")
    for name, number in (("iterations", iterations), ("seed", seed)):
        if isinstance(number, bool) or not isinstance(number, int):
            raise UserError(f"best.json's {name} must be a whole number")
    if not isinstance(data.get("config"), dict):
        raise UserError("best.json's config must be a JSON object")
    return data["mode"], Best(data["trial"], float(value), iterations, seed, data["config"])


def _searched(path: Path, names: tuple[str, ...]) -> tuple[SearchedField, ...]:
    """Each searched field with what space.json's "search" says of it: its distribution (a
    one-key object, {"loguniform": [1e-4, 0.1]}) and a choice's values. The sweep command checked
    the space; a field it describes otherwise, or a folder without space.json, gets none."""
    search = _json_object(path, "space.json").get("search") if path.is_file() else None
    fields = []
    for name in names:
        entry = search.get(name) if isinstance(search, dict) else None
        if isinstance(entry, dict) and len(entry) == 1:
            (distribution, values), *_ = entry.items()
            choices = tuple(values) if distribution == "choice" and isinstance(values, list) and values else None
            fields.append(SearchedField(name, distribution, choices))
        else:
            fields.append(SearchedField(name, "", None))
    return tuple(fields)
