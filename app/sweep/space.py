"""A sweep's space file, read and checked before anything is written or Ray starts: the base config
and its steps, the searched fields and their ranges or choices, the metric, the trials, the sampler,
the pruner and the seed. Every problem is a one-line UserError naming the file; no Ray or Optuna
here, so a bad file is refused in a fraction of a second. The format: docs/guide/sweeps.md."""

from __future__ import annotations

import importlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import config as cfg
from ..config.records import from_dict
from ..datasets.source import problem_of
from ..errors import UserError, read_user_text
from ..files.sweep_folder import METRIC_MODES  # each metric a trial can report, and which way is better

MAX_SPACE_BYTES = 1 << 20  # a space is a few hundred bytes; don't read a huge or endless file
DEFAULT_ITERATIONS = 1000  # as a headless run without --iterations
DEFAULT_TRIALS = 10
SAMPLERS = ("tpe", "random", "grid")
PRUNERS = ("median", "asha", "none")
RANGE_KINDS = ("loguniform", "uniform", "int")
KINDS = (*RANGE_KINDS, "choice")
KEYS = ("base", "search", "metric", "trials", "sampler", "pruner", "seed")
MAX_SEED = 2**32 - 1


@dataclass(frozen=True)
class Dimension:
    """One searched field: a range (`low`, `high`) or a choice's values as JSON text ("[32, 32]",
    "\\"tanh\\"", "0.01"): Optuna stores only None, bool, int, float or str choices, and a
    hidden-layer list is none of those. `Space.values_of` decodes them."""

    field: str
    kind: str  # one of KINDS
    low: float | int | None = None
    high: float | int | None = None
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Space:
    document: dict  # the file as given: the sweep folder's space.json
    base: cfg.Config
    iterations: int
    dimensions: tuple[Dimension, ...]
    metric: str
    trials: int
    sampler: str
    pruner: str
    seed: int

    @property
    def mode(self) -> str:
        return METRIC_MODES[self.metric]

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(dimension.field for dimension in self.dimensions)

    def values_of(self, params: dict[str, Any]) -> dict[str, Any]:
        """The searched fields' values from a trial's parameters (a choice's JSON text decoded)."""
        kinds = {dimension.field: dimension.kind for dimension in self.dimensions}
        return {name: json.loads(params[name]) if kinds[name] == "choice" else params[name] for name in self.fields}

    def config_for(self, values: dict[str, Any]) -> cfg.Config:
        """A trial's config: the base with the trial's values (values_of) laid over it."""
        return from_dict(values, self.base, source="trial")


def read_space(path: str | Path) -> Space:
    """The space file at `path`: TOML if its name ends in .toml, else JSON."""
    name = f"space file {str(path)!r}"
    text = read_user_text(path, "space file", MAX_SPACE_BYTES)
    document = _parse_toml(text, name) if str(path).lower().endswith(".toml") else _parse_json(text, name)
    return space_from(document, name)


def _parse_json(text: str, name: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise UserError(f"{name} is not valid JSON (line {error.lineno}: {error.msg})") from None
    except RecursionError:
        raise UserError(f"{name} is nested too deeply") from None


def _parse_toml(text: str, name: str) -> Any:
    toml = _toml_reader()
    if toml is None:
        raise UserError(f"{name}: TOML needs Python 3.11 (or the tomli package); write the space as JSON")
    try:
        return toml.loads(text)
    except toml.TOMLDecodeError as error:
        raise UserError(f"{name} is not valid TOML ({error})") from None


def _toml_reader():
    """tomllib (Python 3.11 on), else tomli where it is installed, else None."""
    for module in ("tomllib", "tomli"):
        try:
            return importlib.import_module(module)
        except ImportError:
            continue
    return None


def space_from(document: Any, name: str) -> Space:
    """Checks a parsed space file (`name` says which, in messages) and returns its Space."""
    if not isinstance(document, dict):
        raise UserError(f"{name} must hold an object with the keys {', '.join(KEYS)}")
    unknown = sorted(set(document) - set(KEYS))
    if unknown:
        raise UserError(f"{name}: unknown key {unknown[0]!r} (the keys: {', '.join(KEYS)})")
    base, iterations = _base(document.get("base", {}), name)
    dimensions = _dimensions(document.get("search"), base, name)
    metric = _one_of(document.get("metric", "eval_loss"), tuple(METRIC_MODES), "metric", name)
    sampler = _one_of(document.get("sampler", "tpe"), SAMPLERS, "sampler", name)
    pruner = _one_of(document.get("pruner", "median"), PRUNERS, "pruner", name)
    seed = _whole(document.get("seed", 0), "seed", 0, MAX_SEED, name)
    trials = _trials(document.get("trials"), sampler, dimensions, name)
    for config in [base] + [_overlay(base, d.field, json.loads(v), name) for d in dimensions for v in d.choices]:
        _check_metric(metric, config, name)
    return Space(document, base, iterations, dimensions, metric, trials, sampler, pruner, seed)


def _base(base: Any, name: str) -> tuple[cfg.Config, int]:
    if not isinstance(base, dict):
        raise UserError(f"{name}: base must be an object of config fields and iterations")
    fields = dict(base)
    iterations = _whole(fields.pop("iterations", DEFAULT_ITERATIONS), "base.iterations", 1, None, name)
    try:
        return from_dict(fields, cfg.Config(), source=f"{name}: base"), iterations
    except UserError as error:  # a field's own check does not know the file: name it
        message = str(error)
        raise UserError(message if message.startswith(name) else f"{name}: base: {message}") from None


def _dimensions(search: Any, base: cfg.Config, name: str) -> tuple[Dimension, ...]:
    if not isinstance(search, dict) or not search:
        raise UserError(
            f"{name}: search must be an object naming at least one field, e.g. "
            '{"lr": {"loguniform": [0.0001, 0.1]}}'
        )
    return tuple(_dimension(field, spec, base, name) for field, spec in search.items())


def _dimension(field: str, spec: Any, base: cfg.Config, name: str) -> Dimension:
    where = f"{name}: search.{field}"
    if field not in cfg.FIELDS:
        raise UserError(f"{name}: search: unknown field {field!r} (the fields are the config's, as in a --config file)")
    if not isinstance(spec, dict) or len(spec) != 1 or next(iter(spec)) not in KINDS:
        raise UserError(
            f'{where} must be one of {{"loguniform": [lo, hi]}}, {{"uniform": [lo, hi]}}, {{"int": [lo, hi]}} '
            f'or {{"choice": [...]}} (got {_shown(spec)})'
        )
    kind, value = next(iter(spec.items()))
    _check_kind_fits(field, kind, where)
    if kind == "choice":
        return _choice(field, value, base, where)
    low, high = _range(kind, value, where)
    for end in (low, high):  # the config's own check of each end: its limits, in its words
        _overlay(base, field, end, where)
    return Dimension(field, kind, low, high)


def _check_kind_fits(field: str, kind: str, where: str) -> None:
    """Ranges only for numbers: whole-number fields take int, real-number fields any range."""
    default = getattr(cfg.Config(), field)
    whole = isinstance(default, int) and not isinstance(default, bool)
    if kind == "choice" or (whole and kind == "int") or isinstance(default, float):
        return
    takes = "int or choice" if whole else "choice"
    raise UserError(f"{where}: {cfg.FIELDS[field].label} takes {takes}, not {kind}")


def _range(kind: str, value: Any, where: str) -> tuple[float | int, float | int]:
    numbers = isinstance(value, list) and len(value) == 2
    numbers = numbers and all(not isinstance(v, bool) and isinstance(v, (int, float)) for v in value)
    if not numbers or not all(math.isfinite(v) for v in value):
        raise UserError(f"{where}: {kind} takes [lo, hi], two finite numbers (got {_shown(value)})")
    low, high = value
    if kind == "int" and not (isinstance(low, int) and isinstance(high, int)):
        raise UserError(f"{where}: int takes two whole numbers (got {_shown(value)})")
    if low >= high:
        raise UserError(f"{where}: the range [{low}, {high}] is empty: lo must be below hi")
    if kind == "loguniform" and low <= 0:
        raise UserError(f"{where}: loguniform needs lo above 0 (got {low})")
    return low, high


def _choice(field: str, values: Any, base: cfg.Config, where: str) -> Dimension:
    if not isinstance(values, list) or not values:
        raise UserError(f"{where}: choice takes a list of one or more values (got {_shown(values)})")
    texts = []
    for value in values:
        _overlay(base, field, value, where)
        text = json.dumps(value)
        if text in texts:
            raise UserError(f"{where}: choice lists {text} twice")
        texts.append(text)
    return Dimension(field, "choice", choices=tuple(texts))


def _overlay(base: cfg.Config, field: str, value: Any, where: str) -> cfg.Config:
    """The base with `field` set to `value`, checked by the config itself."""
    try:
        return from_dict({field: value}, base, source=where)
    except UserError as error:
        raise UserError(f"{where} value {_shown(value)}: {error}") from None


def _check_metric(metric: str, config: cfg.Config, name: str) -> None:
    """Points have test_loss and test_accuracy (classes only); images have psnr."""
    if metric in ("test_loss", "test_accuracy") and config.dataset is None:
        raise UserError(f"{name}: metric {metric} needs a dataset (base.dataset)")
    if metric == "test_accuracy" and problem_of(config.dataset).kind == "regression":
        raise UserError(f"{name}: metric test_accuracy needs a dataset of classes; this one has values")
    if metric == "psnr" and config.image is None:
        raise UserError(f"{name}: metric psnr needs an image target (base.image)")


def _trials(trials: Any, sampler: str, dimensions: tuple[Dimension, ...], name: str) -> int:
    """How many trials: `trials`; with the grid sampler, every combination (trials may only
    repeat that count)."""
    if sampler != "grid":
        return _whole(DEFAULT_TRIALS if trials is None else trials, "trials", 1, None, name)
    ranged = [d.field for d in dimensions if d.kind != "choice"]
    if ranged:
        raise UserError(f"{name}: the grid sampler takes choice dimensions only ({ranged[0]} is a range)")
    combinations = math.prod(len(d.choices) for d in dimensions)
    if trials is not None and trials != combinations:
        raise UserError(f"{name}: the grid runs every combination, {combinations}: leave out trials or set it to that")
    return combinations


def _one_of(value: Any, options: tuple[str, ...], key: str, name: str) -> str:
    if value not in options:
        raise UserError(f"{name}: {key} must be one of {', '.join(options)} (got {_shown(value)})")
    return value


def _shown(value: Any) -> str:
    """A value as the file wrote it, for messages (TOML's dates shown as text)."""
    return json.dumps(value, default=str)


def _whole(value: Any, key: str, low: int, high: int | None, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise UserError(f"{name}: {key} must be a whole number {bound} (got {_shown(value)})")
    return value
