"""Config files and presets: a JSON config (or a run's or a race's summary.json, or a sweep's
best.json) read with the checks a user's file needs (its size, its nesting, its JSON), and the
presets of assets/presets. The table is app/config/config.py; a Config from a JSON object,
app/config/records.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..errors import UserError, read_user_text
from ..truth.mesh_truth import MESH_SUFFIXES
from .config import PRESET_DIR, Config
from .records import from_dict

MAX_CONFIG_BYTES = 1 << 20  # a config is a few hundred bytes; don't read a huge or endless file
MAX_CONFIG_NESTING = 16  # a config nests two levels; json's own limit differs between Python versions
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _nesting_depth(text: str) -> int:
    """Deepest bracket nesting outside strings, without recursing (json.loads may crash or hang on it)."""
    depth = deepest = 0
    for char in _JSON_STRING.sub("", text):
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def config_of(data: object) -> object:
    """The config a JSON document holds: a config file's is the document itself; a headless run's
    summary.json and a sweep's best.json hold theirs under "config"; a race's summary.json holds
    its base config, the setup its variants vary, under "base_config"."""
    if not isinstance(data, dict):
        return data
    if isinstance(data.get("config"), dict) and ("steps" in data or {"trial", "metric"} <= set(data)):
        return data["config"]
    if isinstance(data.get("base_config"), dict) and "racers" in data:
        return data["base_config"]
    return data


def load_file(path: str | Path, base: Config | None = None) -> Config:
    name = f"config file {str(path)!r}"
    text = read_user_text(path, "config file", MAX_CONFIG_BYTES)
    if _nesting_depth(text) > MAX_CONFIG_NESTING:
        raise UserError(f"{name} is nested too deeply")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise UserError(f"{name} is not valid JSON (line {error.lineno}: {error.msg})") from None
    except RecursionError:
        raise UserError(f"{name} is nested too deeply") from None
    try:
        return from_dict(config_of(data), base, source=name)
    except UserError as error:  # a field's own check does not know the file: name it
        message = str(error)
        raise UserError(message if message.startswith(name) else f"{name}: {message}") from None


# The preset a shape's signed distance starts from (--sdf without --preset or --config, and the
# window's shape row after another problem): settings measured to keep its corners sharp.
SHAPE_PRESET = "shape"
# ...and a mesh's (--sdf mesh.obj, in 3D): the 3D hash grid on the exact distance, no eikonal term
# (a grid of (x, y, z) trains on the squared error alone).
MESH_PRESET = "mesh"


def shape_preset(spec: str) -> str:
    """The preset a shape's signed distance starts from: a mesh's, or a 2D shape's."""
    return MESH_PRESET if Path(spec).suffix.lower() in MESH_SUFFIXES else SHAPE_PRESET


def preset_names() -> list[str]:
    return sorted(p.stem for p in PRESET_DIR.glob("*.json"))


def load_preset(name: str, base: Config | None = None) -> Config:
    if name not in preset_names():
        raise UserError(f"unknown preset {name!r} (choose from {', '.join(preset_names())})")
    return load_file(PRESET_DIR / f"{name}.json", base)
