"""A Config from a JSON object (a config file, saved settings, a checkpoint's or a network
file's header, command-line overrides): its keys overlaid on a base Config, unknown
keys refused, the whole validated."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..errors import UserError
from .config import Config, validate


def from_dict(data: Any, base: Config | None = None, source: str = "config") -> Config:
    """Overlays the keys of `data` on `base` (defaults if None). Unknown keys are errors."""
    if not isinstance(data, dict):
        raise UserError(f"{source} must be a JSON object")
    known = {f.name for f in dataclasses.fields(Config)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise UserError(f"{source}: unknown key {unknown[0]!r}")
    merged = dataclasses.replace(base or Config(), **{k: _copy(v) for k, v in data.items()})
    return validate(merged)


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return dict(value)
    return list(value) if isinstance(value, list) else value
