"""Where a run's points come from, as the config keeps it (Config.dataset: a generator's name, or a
CSV's path, SHA-256, rows and classes or value columns; docs/formats.md, 'summary.json'), and the
problem it poses. Never the points: they are made from it and the hot fields alone; the SHA-256
refuses a changed file rather than silently training on it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import UserError
from .generators import CLASS_NAMES, GENERATORS, VALUE_NAMES

MAX_CLASSES = 8  # one output a class: the app's most outputs
MAX_ROWS = 1_000_000
MIN_ROWS = 2  # one training point and one test point
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Problem:
    """What the points ask of the network: "regression" (the values), "binary" (two classes,
    one logistic output) or "classes" (3 to 8 classes, softmax over one output each)."""

    kind: str
    names: tuple[str, ...]  # the classes, in class-index order, or the value columns

    @property
    def classify(self) -> bool:
        return self.kind != "regression"

    @property
    def outputs(self) -> int:
        return 1 if self.kind == "binary" else len(self.names)

    @property
    def loss(self) -> str:
        """The loss's name in app/model/losses.py."""
        return {"regression": "squared", "binary": "logistic", "classes": "softmax"}[self.kind]

    def output_labels(self) -> list[str]:
        """What each output of the network stands for."""
        if self.kind == "binary":
            return [f"logit of class {self.names[1]}"]
        if self.kind == "classes":
            return [f"logit of class {name}" for name in self.names]
        return list(self.names)


def classification(names: tuple[str, ...]) -> Problem:
    return Problem("binary" if len(names) == 2 else "classes", names)


def problem_of(source: dict) -> Problem:
    """The problem a (checked) dataset entry poses."""
    if "generator" in source:
        generator = GENERATORS[source["generator"]]
        return classification(CLASS_NAMES) if generator.classify else Problem("regression", VALUE_NAMES)
    if "classes" in source:
        return classification(tuple(source["classes"]))
    return Problem("regression", tuple(source["values"]))


def _names(label: str, value: Any, low: int, what: str) -> list[str]:
    if (
        not isinstance(value, list)
        or not low <= len(value) <= MAX_CLASSES
        or not all(isinstance(v, str) and v for v in value)
        or len(set(value)) != len(value)
    ):
        raise UserError(f"{label}'s {what} must list {low} to {MAX_CLASSES} different names")
    return value


def check_dataset(label: str, value: Any) -> dict | None:
    """Config.dataset's check: None (the targets are formulas) or one of the entries above."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise UserError(f'{label} must be null or an object such as {{"generator": "spiral"}}')
    if "generator" in value:
        if set(value) != {"generator"} or value["generator"] not in GENERATORS:
            raise UserError(f"{label}'s generator must be one of {', '.join(GENERATORS)}")
        return dict(value)
    keys = set(value)
    if keys not in ({"csv", "sha256", "rows", "classes"}, {"csv", "sha256", "rows", "values"}):
        raise UserError(f'{label} must be {{"generator": NAME}} or {{"csv", "sha256", "rows", "classes" or "values"}}')
    if not isinstance(value["csv"], str) or not value["csv"]:
        raise UserError(f"{label}'s csv must be a file's path")
    if not isinstance(value["sha256"], str) or not _SHA256.fullmatch(value["sha256"]):
        raise UserError(f"{label}'s sha256 must be 64 lowercase hex digits")
    rows = value["rows"]
    if isinstance(rows, bool) or not isinstance(rows, int) or not MIN_ROWS <= rows <= MAX_ROWS:
        raise UserError(f"{label}'s rows must be a whole number from {MIN_ROWS} to {MAX_ROWS:,}")
    if "classes" in value:
        _names(label, value["classes"], 2, "classes")
    else:
        _names(label, value["values"], 1, "values")
    return dict(value)


def describe(source: dict | None) -> str:
    """One line naming the source, for panels and reports."""
    if source is None:
        return "formulas"
    if "generator" in source:
        return source["generator"]
    return source["csv"]
