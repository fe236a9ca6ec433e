"""A race's variants: "hidden=64,64 lr=0.003", the config's fields one racer changes from the race's
setup, each value read as its command-line option reads it. The fields that pick the data or how it
is judged (the truth, the points, the domain, the evaluation grid) are every racer's: a race
compares networks on the same data."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from typing import Any

from ..errors import UserError
from .config import FIELDS, SECTIONS, Config
from .records import from_dict
from .spec import Between, Choice, Fraction, Positive, Whole

# The truth and data sections, the data and its judging: every racer shares them with the setup.
SHARED_FIELDS = frozenset(SECTIONS["truth_settings"] + SECTIONS["data_settings"])
RACER_FIELDS = tuple(name for name in FIELDS if name not in SHARED_FIELDS)
MAX_NAME = 48  # a racer's name is a folder name: short


@dataclass(frozen=True)
class Variant:
    text: str  # as the user wrote it
    changes: dict[str, Any]  # field -> value, in the order written
    written: tuple[tuple[str, str], ...] = ()  # (field, value as written), for the name

    @property
    def name(self) -> str:
        """A name fit for a folder and a legend: "hidden=64,64 lr=0.003" -> "hidden-64-64_lr-0.003";
        the setup itself (no changes) is "base"."""
        if not self.changes:
            return "base"
        parts = [f"{key}-{re.sub(r'[^A-Za-z0-9.+-]+', '-', value).strip('-')}" for key, value in self.written]
        return "_".join(parts)[:MAX_NAME]

    def apply(self, base: Config) -> Config:
        """The racer's config: `base` with the changes (a UserError naming the variant if the
        result is no valid config, e.g. a width past its limit)."""
        try:
            return from_dict(self.changes, base, source=f"variant {self.text!r}")
        except UserError as error:
            raise UserError(f"variant {self.text!r}: {error}") from None


def parse_variant(text: str) -> Variant:
    """ "key=value key=value ..." -> a Variant; a UserError of one line for anything else."""
    try:
        words = shlex.split(text)
    except ValueError as error:
        raise UserError(f"variant {text!r}: {error}") from None
    changes: dict[str, Any] = {}
    written = []
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not key or not value:
            raise UserError(f'variant {text!r}: {word!r} is not field=value (e.g. "hidden=64,64 lr=0.003")')
        if key not in FIELDS:
            raise UserError(f"variant {text!r}: unknown field {key!r}; a racer may change {', '.join(RACER_FIELDS)}")
        if key in SHARED_FIELDS:
            raise UserError(f"variant {text!r}: {key} is the data's, which every racer shares")
        if key in changes:
            raise UserError(f"variant {text!r}: {key} is given twice")
        changes[key] = _value(text, key, value)
        written.append((key, value))
    return Variant(text, changes, tuple(written))


def unique_name(variant: Variant, taken) -> str:
    """The variant's name, numbered where `taken` has it already ("lr-0.01", "lr-0.01-2")."""
    name, count = variant.name, 2
    while name in taken:
        name, count = f"{variant.name}-{count}", count + 1
    return name


def unique_names(variants: list[Variant]) -> list[str]:
    """The variants' names, each repeated one numbered."""
    names: list[str] = []
    for variant in variants:
        names.append(unique_name(variant, names))
    return names


def _value(text: str, key: str, value: str) -> Any:
    """The value as the field's option reads it; the config's own check says what is wrong with it."""
    spec = FIELDS[key]
    check, parse = spec.check, spec.flag.parse if spec.flag else None
    try:
        if isinstance(check, Choice):
            return value
        if isinstance(check, Whole):
            return int(value)
        if isinstance(check, (Positive, Fraction, Between)) or parse == "real":
            return float(value)
        if parse == "widths":
            return [int(part) for part in value.split(",")]
        if parse == "names":
            return [part.strip() for part in value.split(",")]
        return json.loads(value) if parse is None else value
    except ValueError:
        raise UserError(f"variant {text!r}: {key}={value} is not a value of {spec.label}") from None
