"""The checks of the Config fields that are more than a range or a choice (app/config/spec.py
has those): the hidden widths, the target expressions, a Slang target file's entry and the
domain, with the limits they enforce. app/config/config.py's table names them."""

from __future__ import annotations

import math
from typing import Any

from ..errors import UserError
from ..truth.slang_file import MAX_TARGET_SOURCE
from ..truth.targets import MAX_TARGETS, TargetError, parse_target
from .spec import Whole

MAX_WIDTH = 256
MAX_HIDDEN_LAYERS = 8
MAX_FREQUENCIES = 16


def check_hidden(label: str, value: Any) -> list[int]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_HIDDEN_LAYERS:
        raise UserError(f"{label} must list 1 to {MAX_HIDDEN_LAYERS} layer widths")
    for width in value:
        Whole(1, MAX_WIDTH)("hidden layer width", width)
    return value


def check_targets(label: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_TARGETS:
        raise UserError(f"{label} must list 1 to {MAX_TARGETS} expressions")
    for target in value:
        try:  # z too: whether the config's targets may use it is validate's to say, from its dims
            parse_target(target, dims=3)
        except TargetError:
            parse_target(target)  # the 2D message, as the targets of (x, y) have always had it
    return value


def check_slang_target(label: str, value: Any) -> dict | None:
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"file", "source", "count"}:
        raise UserError(f'{label} must be null or {{"file": ..., "source": ..., "count": ...}}')
    if not isinstance(value["file"], str) or not isinstance(value["source"], str):
        raise UserError(f"{label}'s file and source must be text")
    if len(value["source"]) > MAX_TARGET_SOURCE:
        raise UserError(f"a Slang target file must be at most {MAX_TARGET_SOURCE} characters")
    Whole(1, MAX_TARGETS)("TARGET_COUNT", value["count"])
    return value


def check_domain(label: str, value: Any) -> list[float]:
    if (
        not isinstance(value, list)
        or len(value) != 4
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)
        or value[0] >= value[1]
        or value[2] >= value[3]
    ):
        raise UserError(f"{label} must be [x0, x1, y0, y1] with finite x0 < x1 and y0 < y1")
    return [float(v) for v in value]


def check_z_range(label: str, value: Any) -> list[float]:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)
        or value[0] >= value[1]
    ):
        raise UserError(f"{label} must be [z0, z1] with finite z0 < z1")
    return [float(v) for v in value]
