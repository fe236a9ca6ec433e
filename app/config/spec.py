"""What each Config field declares about itself, in the spirit of TensorFlow Playground's
State.PROPS: its kind, its range or choices, its command-line option and its widget. app/config/config.py
holds the table (one `spec_field` per field); the parser, the --resume overrides, the structure
that picks a compiled network, validation and the panels' generic widgets are derived from it."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import UserError

# The kinds of field. STRUCTURE and TRUTH pick the compiled network (a change needs a rebuild);
# a TRUTH change alone keeps the weights. HOT fields are kernel arguments and may change between
# any two steps (and on --resume, where they have a flag).
STRUCTURE, TRUTH, HOT = "structure", "truth", "hot"


# ---- ranges and choices: each checks a value and returns it as the config keeps it ----------
@dataclass(frozen=True)
class Choice:
    options: tuple[str, ...]

    def __call__(self, label: str, value: Any) -> str:
        if value not in self.options:
            raise UserError(f"{label} must be one of {', '.join(self.options)} (got {value!r})")
        return value


@dataclass(frozen=True)
class Whole:
    low: int
    high: int | None = None

    def __call__(self, label: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise UserError(f"{label} must be a whole number (got {value!r})")
        if value < self.low or (self.high is not None and value > self.high):
            bound = f"between {self.low} and {self.high}" if self.high is not None else f"at least {self.low}"
            raise UserError(f"{label} must be {bound} (got {value})")
        return value


def _real(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float))


@dataclass(frozen=True)
class Positive:
    """A finite number above 0, and below `below` where one is given."""

    below: float | None = None

    def __call__(self, label: str, value: Any) -> float:
        if not _real(value) or not math.isfinite(value) or value <= 0:
            raise UserError(f"{label} must be a finite number above 0 (got {value!r})")
        if self.below is not None and value >= self.below:
            raise UserError(f"{label} must be below {self.below} (got {value!r})")
        return float(value)


@dataclass(frozen=True)
class Fraction:
    """A number in [0, 1): a decay rate, a momentum."""

    def __call__(self, label: str, value: Any) -> float:
        if not _real(value) or not 0 <= value < 1:
            raise UserError(f"{label} must be in [0, 1) (got {value!r})")
        return float(value)


@dataclass(frozen=True)
class Subset:
    """One or more of `options`, kept in their order (a list of features, say)."""

    options: tuple[str, ...]

    def __call__(self, label: str, value: Any) -> list[str]:
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise UserError(f"{label} must list one or more of {', '.join(self.options)}")
        unknown = [v for v in value if v not in self.options]
        if unknown:
            raise UserError(f"unknown {label} {unknown[0]!r} (choose from {', '.join(self.options)})")
        return [option for option in self.options if option in value]


@dataclass(frozen=True)
class Between:
    """A number in [low, high]: a noise level, a ratio, a rate."""

    low: float
    high: float

    def __call__(self, label: str, value: Any) -> float:
        if not _real(value) or not math.isfinite(value) or not self.low <= value <= self.high:
            raise UserError(f"{label} must be between {self.low:g} and {self.high:g} (got {value!r})")
        return float(value)


Check = Callable[[str, Any], Any]  # (label, value) -> the value as kept, or a UserError


# ---- the command line -----------------------------------------------------------------------
@dataclass(frozen=True)
class Flag:
    """A field's command-line option. `help` may name {label}, {choices} and {default}."""

    name: str
    help: str
    metavar: str | None = None
    # How the text is read where the check doesn't say (choices, whole numbers and reals do):
    # "widths" (16,16), "names" (x,y,x2), "text" (anything not empty) or "real" (a number).
    parse: str | None = None
    repeat: bool = False  # each use adds a value (--target)
    # An option whose value is not the field's own (--target-file: a file the caller compiles
    # into slang_target) keeps its own name in argparse and is left to the caller.
    dest: str | None = None


@dataclass(frozen=True)
class Spec:
    kind: str
    label: str  # the field's name in messages and on the panels
    check: Check
    flag: Flag | None = None
    # A panel's widget for fields drawn generically (app/ui/fields.py): "combo" for a Choice,
    # "slider" for a Whole, "checks" for a Subset; None where a panel draws the field its own
    # way, or not at all.
    widget: str | None = None
    shown: Callable[[Any], bool] | None = None  # the widget only when this holds for the config
    in_network_file: bool = False  # a network.json brings it, so --load-network refuses its flag

    @property
    def structural(self) -> bool:
        return self.kind in (STRUCTURE, TRUTH)


def spec_field(default: Any, kind: str, label: str, check: Check, flag: Flag | None = None, **more: Any) -> Any:
    """A dataclass field carrying its Spec. A list default is copied for each Config."""
    metadata = {"spec": Spec(kind, label, check, flag, **more)}
    if isinstance(default, list):
        return dataclasses.field(default_factory=lambda: list(default), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def spec_of(field: dataclasses.Field) -> Spec:
    return field.metadata["spec"]
