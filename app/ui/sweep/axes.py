"""Where a trial's values go on the sweep viewer's axes, and their text, in plain Python so that tests
check them without drawing. Each axis runs 0 to 1 over its values; a log-sampled parameter, or a
positive metric, spanning more than a decade gets a log axis; a choice, or values not all numbers,
is categorical, evenly spaced in the space's order (else sorted)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from ...files.sweep_folder import SearchedField, SweepFolder, Trial

DECADE = 10.0  # a log axis only where the largest value is more than this times the smallest


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def value_text(value: Any) -> str:
    """A parameter's or the metric's value as the viewer shows it: numbers to 4 significant
    digits, a string without its quotes, anything else as its JSON text ([32, 32])."""
    if value is None:
        return ""
    if is_number(value):
        return f"{value:.4g}" if isinstance(value, float) else str(value)
    return value if isinstance(value, str) else json.dumps(value)


def _spans_decades(values: list[float]) -> bool:
    return bool(values) and min(values) > 0 and max(values) > DECADE * min(values)


def _category_key(value: Any) -> tuple:
    return (0, value, "") if is_number(value) else (1, 0, json.dumps(value, sort_keys=True))


@dataclass(frozen=True)
class Axis:
    name: str
    title: str  # the name, and "log" where the axis is
    log: bool = False
    low: float = 0.0  # a numeric axis' smallest and largest value
    high: float = 0.0
    categories: tuple[Any, ...] | None = None  # a categorical axis' values, bottom to top

    def position(self, value: Any) -> float | None:
        """`value` normalised to the axis (0 to 1), or None where it has no place on it."""
        if self.categories is not None:
            if value not in self.categories:
                return None
            count = len(self.categories)
            return self.categories.index(value) / (count - 1) if count > 1 else 0.5
        if not is_number(value) or (self.log and value <= 0):
            return None
        scale = math.log10 if self.log else float
        low, high = scale(self.low), scale(self.high)
        return (scale(value) - low) / (high - low) if high > low else 0.5

    def labels(self) -> list[tuple[float, str]]:
        """(position, text) of what the axis labels: each category, or its smallest and largest value."""
        if self.categories is not None:
            return [(self.position(c), value_text(c)) for c in self.categories]
        if self.high > self.low:
            return [(0.0, value_text(self.low)), (1.0, value_text(self.high))]
        return [(0.5, value_text(self.low))]


def parameter_axis(field: SearchedField, trials: tuple[Trial, ...]) -> Axis:
    values = [trial.parameters[field.name] for trial in trials]
    if field.choices is not None or not all(is_number(v) for v in values):
        categories = list(field.choices or ())  # the space's order, then any value it did not list
        unlisted = {json.dumps(v, sort_keys=True): v for v in values if v not in categories}
        categories += sorted(unlisted.values(), key=_category_key)
        return Axis(field.name, field.name, categories=tuple(categories))
    log = field.distribution.startswith("log") and _spans_decades(values)
    return Axis(field.name, f"{field.name} (log)" if log else field.name, log, min(values), max(values))


def metric_axis(folder: SweepFolder) -> Axis:
    values = [trial.metric for trial in folder.trials if trial.metric is not None]
    log = _spans_decades(values)
    title = f"{folder.metric} ({folder.mode}{', log' if log else ''})"
    if not values:
        return Axis(folder.metric, title)
    return Axis(folder.metric, title, log, min(values), max(values))


def goodness(folder: SweepFolder, axis: Axis, trial: Trial) -> float | None:
    """0 for the worst metric, 1 for the best (the metric axis' position, turned over where the
    metric is minimised); None without a metric. The colour scale follows it."""
    position = axis.position(trial.metric)
    if position is None:
        return None
    return 1.0 - position if folder.mode == "min" else position


def sort_key(trial: Trial, column: str, folder: SweepFolder) -> tuple:
    """What the table sorts `column` by: numbers as numbers, other values by their text."""
    value = {
        "trial": int(trial.id),
        "state": trial.state,
        folder.metric: trial.metric,
        "steps": trial.steps,
        "wall_s": trial.wall_s,
        "gpu": trial.gpu,
        "seed": trial.seed,
        "error": trial.error,
    }.get(column, trial.parameters.get(column))
    return _category_key(value)


def sorted_trials(folder: SweepFolder, column: str, descending: bool) -> list[int]:
    """The trials' indices sorted by `column`, ties in trial order; those without a value in the
    column (no metric, no error) come last either way."""
    indices = range(len(folder.trials))
    present = [k for k in indices if _has_value(folder.trials[k], column, folder)]
    missing = [k for k in indices if not _has_value(folder.trials[k], column, folder)]
    present.sort(key=lambda k: sort_key(folder.trials[k], column, folder), reverse=descending)  # stable
    return present + missing


def _has_value(trial: Trial, column: str, folder: SweepFolder) -> bool:
    if column in (folder.metric, "steps", "wall_s"):
        return {folder.metric: trial.metric, "steps": trial.steps, "wall_s": trial.wall_s}[column] is not None
    return column not in ("gpu", "error") or getattr(trial, column) != ""
