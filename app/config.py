"""One typed configuration for a training run.

"Hot" fields are kernel arguments and may change between any two steps; "structural" fields
pick the compiled network and need a rebuild (see STRUCTURAL_FIELDS)."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import components
from .errors import UserError, read_user_text
from .resources import asset
from .targets import TUTORIAL_TARGETS, parse_target

ACTIVATIONS = tuple(components.ACTIVATIONS)
ENCODINGS = tuple(components.ENCODINGS)
PRECISIONS = ("float", "half")
MATMULS = ("auto", "simt")  # auto: tensor cores where the device and the network allow
OPTIMIZERS = tuple(components.OPTIMIZERS)
MAX_WIDTH = 256
MAX_HIDDEN_LAYERS = 8
MAX_FREQUENCIES = 16
MAX_TARGETS = 8
PRESET_DIR = asset("presets")

# Characters of a Slang target file: ample for a few functions, and small enough for the config
# to travel as one command-line argument (at most 128 KiB on Linux) to app/rebuild.py's child.
MAX_TARGET_SOURCE = 16 * 1024
STRUCTURAL_FIELDS = (
    "hidden",
    "activation",
    "output_activation",
    "encoding",
    "frequencies",
    "precision",
    "targets",
    "slang_target",
    "matmul",
)


@dataclass
class Config:
    hidden: list[int] = field(default_factory=lambda: [16])
    activation: str = "leaky_relu"
    output_activation: str = "identity"
    encoding: str = "poly2"
    frequencies: int = 4
    precision: str = "float"
    matmul: str = "auto"
    targets: list[str] = field(default_factory=lambda: list(TUTORIAL_TARGETS))
    # The ground truth from a user's Slang file instead of `targets` (kept for going back):
    # {"file": path, "source": its text, "count": its TARGET_COUNT}, read and compiled by
    # app/slang_target.py. The text itself is kept, so a summary.json reproduces the run.
    slang_target: dict | None = None
    domain: list[float] = field(default_factory=lambda: [-1.0, 1.0, -1.0, 1.0])  # x0, x1, y0, y1
    optimizer: str = "adam"
    lr: float = 0.01
    beta1: float = 0.9  # Adam's first-moment decay; SGD's momentum (0 = plain SGD)
    beta2: float = 0.999
    epsilon: float = 1e-7
    batch_size: int = 4096
    seed: int = 0
    eval_grid: int = 64

    # Shapes and the parameter layout are derived once, in app.plan.plan_for(config).
    @property
    def output_dim(self) -> int:
        return self.slang_target["count"] if self.slang_target else len(self.targets)

    def target_labels(self) -> list[str]:
        """What each output learns, as the UI and reports name it."""
        if self.slang_target:
            return [f"target(p, {k})" for k in range(self.slang_target["count"])]
        return list(self.targets)

    def structure_key(self) -> tuple:
        return tuple(_freeze(getattr(self, f)) for f in STRUCTURAL_FIELDS)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def replace(self, **changes: Any) -> Config:
        return validate(dataclasses.replace(self, **changes))


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted(value.items()))
    return tuple(value) if isinstance(value, list) else value


def _choice(name: str, value: Any, options: tuple[str, ...]) -> str:
    if value not in options:
        raise UserError(f"{name} must be one of {', '.join(options)} (got {value!r})")
    return value


def _integer(name: str, value: Any, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserError(f"{name} must be a whole number (got {value!r})")
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise UserError(f"{name} must be {bound} (got {value})")
    return value


def _positive_float(name: str, value: Any, upper_exclusive: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise UserError(f"{name} must be a finite number above 0 (got {value!r})")
    if upper_exclusive is not None and value >= upper_exclusive:
        raise UserError(f"{name} must be below {upper_exclusive} (got {value!r})")
    return float(value)


def validate(config: Config) -> Config:
    """Checks every field; raises UserError naming the first problem."""
    if not isinstance(config.hidden, list) or not 1 <= len(config.hidden) <= MAX_HIDDEN_LAYERS:
        raise UserError(f"hidden must list 1 to {MAX_HIDDEN_LAYERS} layer widths")
    for width in config.hidden:
        _integer("hidden layer width", width, 1, MAX_WIDTH)
    _choice("activation", config.activation, ACTIVATIONS)
    _choice("output activation", config.output_activation, ACTIVATIONS)
    _choice("encoding", config.encoding, ENCODINGS)
    _integer("frequencies", config.frequencies, 1, MAX_FREQUENCIES)
    _choice("precision", config.precision, PRECISIONS)
    _choice("matmul", config.matmul, MATMULS)
    if not isinstance(config.targets, list) or not 1 <= len(config.targets) <= MAX_TARGETS:
        raise UserError(f"targets must list 1 to {MAX_TARGETS} expressions")
    for target in config.targets:
        parse_target(target)
    _check_slang_target(config.slang_target)
    domain = config.domain
    if (
        not isinstance(domain, list)
        or len(domain) != 4
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in domain)
        or domain[0] >= domain[1]
        or domain[2] >= domain[3]
    ):
        raise UserError("domain must be [x0, x1, y0, y1] with finite x0 < x1 and y0 < y1")
    config.domain = [float(v) for v in domain]
    _choice("optimizer", config.optimizer, OPTIMIZERS)
    config.lr = _positive_float("learning rate", config.lr)
    if isinstance(config.beta1, bool) or not isinstance(config.beta1, (int, float)) or not 0 <= config.beta1 < 1:
        raise UserError(f"beta1 must be in [0, 1) (got {config.beta1!r})")
    config.beta1 = float(config.beta1)
    config.beta2 = _positive_float("beta2", config.beta2, 1.0)
    config.epsilon = _positive_float("epsilon", config.epsilon)
    _integer("batch size", config.batch_size, 1, 1 << 26)
    _integer("seed", config.seed, 0, 2**32 - 1)
    _integer("eval grid", config.eval_grid, 2, 1024)
    return config


def _check_slang_target(value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, dict) or set(value) != {"file", "source", "count"}:
        raise UserError('slang_target must be null or {"file": ..., "source": ..., "count": ...}')
    if not isinstance(value["file"], str) or not isinstance(value["source"], str):
        raise UserError("slang_target's file and source must be text")
    if len(value["source"]) > MAX_TARGET_SOURCE:
        raise UserError(f"a Slang target file must be at most {MAX_TARGET_SOURCE} characters")
    _integer("TARGET_COUNT", value["count"], 1, MAX_TARGETS)


def from_dict(data: Any, base: Config | None = None, source: str = "config") -> Config:
    """Overlays the keys of `data` on `base` (defaults if None). Unknown keys are errors."""
    if not isinstance(data, dict):
        raise UserError(f"{source} must be a JSON object")
    if "config" in data and isinstance(data["config"], dict) and "steps" in data:
        data = data["config"]  # a summary.json written by a headless run
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


def load_file(path: str | Path, base: Config | None = None) -> Config:
    text = read_user_text(path, "config file", MAX_CONFIG_BYTES)
    if _nesting_depth(text) > MAX_CONFIG_NESTING:
        raise UserError(f"config file {str(path)!r} is nested too deeply")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise UserError(f"config file {str(path)!r} is not valid JSON (line {error.lineno}: {error.msg})") from None
    except RecursionError:
        raise UserError(f"config file {str(path)!r} is nested too deeply") from None
    return from_dict(data, base, source=f"config file {str(path)!r}")


def preset_names() -> list[str]:
    return sorted(p.stem for p in PRESET_DIR.glob("*.json"))


def load_preset(name: str, base: Config | None = None) -> Config:
    if name not in preset_names():
        raise UserError(f"unknown preset {name!r} (choose from {', '.join(preset_names())})")
    return load_file(PRESET_DIR / f"{name}.json", base)
