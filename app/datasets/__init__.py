"""Point datasets: a finite set of (x, y) points with a class or values, split into a training set and
a test set the network never sees (the Playground's lesson). A Dataset is made from a config alone,
so the same config gives the same points and split anywhere (docs/guide/data.md, 'Datasets').

Imports: errors only."""

from __future__ import annotations

import csv
import io
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import UserError
from .csv_data import CsvData, read_csv
from .generators import DOMAIN, GENERATORS
from .source import Problem, describe, problem_of

__all__ = ["DataSettings", "Dataset", "build", "describe", "domain_of", "entry_for", "load_csv", "problem_of"]

_CSV_CACHE: OrderedDict[tuple[str, str], CsvData] = OrderedDict()
CSV_CACHE_SIZE = 2


@dataclass(frozen=True)
class DataSettings:
    """The data section of a Config: how a generator makes its points, and how points split."""

    points: int
    noise: float
    train_ratio: float
    data_seed: int


@dataclass
class Dataset:
    source: dict
    problem: Problem
    x: np.ndarray  # float32 (n,), training points first
    y: np.ndarray
    truth: np.ndarray  # float32 (n, outputs): values, the class (two classes) or one-hot classes
    classes: np.ndarray | None  # int64 (n,) for classification
    train_count: int
    original: np.ndarray  # each point's index in the generated or read order
    domain: tuple[float, float, float, float]  # where the heatmaps show it

    @property
    def count(self) -> int:
        return len(self.x)

    @property
    def test_count(self) -> int:
        return self.count - self.train_count

    def rows(self) -> np.ndarray:
        """float32 (n, 2 + outputs): x, y, truth; what the GPU buffer holds."""
        return np.ascontiguousarray(np.column_stack([self.x, self.y, self.truth]), np.float32)

    def split_csv(self) -> bytes:
        """split.csv: every point in its original order, with its label or values and its set."""
        order = np.argsort(self.original, kind="stable")
        text = io.StringIO(newline="")
        writer = csv.writer(text)
        truth_names = ["label"] if self.problem.classify else list(self.problem.names)
        writer.writerow(["x", "y", *truth_names, "set"])
        for i in order.tolist():
            if self.problem.classify:
                truth = [self.problem.names[self.classes[i]]]
            else:
                truth = [repr(float(v)) for v in self.truth[i]]
            writer.writerow([repr(float(self.x[i])), repr(float(self.y[i])), *truth,
                             "train" if i < self.train_count else "test"])  # fmt: skip
        return text.getvalue().encode()

    def summary(self, data: DataSettings) -> dict:
        """The data source and the split, for summary.json, network.json and the export."""
        entry = {"source": self.source, "points": self.count, "train": self.train_count, "test": self.test_count}
        entry.update(train_ratio=data.train_ratio, data_seed=data.data_seed, problem=self.problem.kind)
        if "generator" in self.source:
            entry["noise"] = data.noise
        entry["classes" if self.problem.classify else "values"] = list(self.problem.names)
        return entry


def load_csv(source: dict) -> CsvData:
    """The CSV a config's entry names, read once (cached) and checked against its SHA-256."""
    key = (source["csv"], source["sha256"])
    if key in _CSV_CACHE:
        _CSV_CACHE.move_to_end(key)
        return _CSV_CACHE[key]
    data = read_csv(source["csv"])
    if data.source["sha256"] != source["sha256"]:
        raise UserError(
            f"dataset {source['csv']!r} has changed since this run used it (its SHA-256 differs); "
            "load it again to train on the new contents"
        )
    remember_csv(data)
    return data


def remember_csv(data: CsvData) -> None:
    _CSV_CACHE[(data.source["csv"], data.source["sha256"])] = data
    while len(_CSV_CACHE) > CSV_CACHE_SIZE:
        _CSV_CACHE.popitem(last=False)


def _truth(problem: Problem, classes: np.ndarray | None, values: np.ndarray | None) -> np.ndarray:
    if problem.kind == "regression":
        return values.astype(np.float32)
    if problem.kind == "binary":
        return classes.astype(np.float32)[:, None]
    return np.eye(len(problem.names), dtype=np.float32)[classes]


def _csv_domain(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float, float]:
    """The points' bounding box and 5% around it (1 each way where the points are on a line)."""
    bounds = []
    for v in (x, y):
        lo, hi = float(np.min(v)), float(np.max(v))
        pad = 0.05 * (hi - lo) if hi > lo else 1.0
        bounds += [lo - pad, hi + pad]
    return tuple(bounds)


def _points(
    source: dict, data: DataSettings
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None, tuple]:
    if "generator" in source:
        generator = GENERATORS[source["generator"]]
        rng = np.random.default_rng([data.data_seed, 0])
        x, y, truth = generator.make(rng, data.points, data.noise)
        if generator.classify:
            return x, y, truth, None, DOMAIN
        return x, y, None, truth[:, None], DOMAIN
    loaded = load_csv(source)
    return loaded.x, loaded.y, loaded.classes, loaded.values, _csv_domain(loaded.x, loaded.y)


def build(source: dict, data: DataSettings) -> Dataset:
    """The points and split of the dataset entry `source` (a config's dataset) and its data section."""
    x, y, classes, values, domain = _points(source, data)
    problem = problem_of(source)
    count = len(x)
    order = np.random.default_rng([data.data_seed, 1]).permutation(count)
    train = min(max(int(count * data.train_ratio), 1), count - 1)
    return Dataset(
        source=source,
        problem=problem,
        x=x[order].astype(np.float32),
        y=y[order].astype(np.float32),
        truth=_truth(problem, None if classes is None else classes[order], None if values is None else values[order]),
        classes=None if classes is None else classes[order],
        train_count=train,
        original=order,
        domain=domain,
    )


NO_DATASET = "none"  # --dataset none: back to the formulas


def entry_for(name: str) -> dict | None:
    """The dataset entry `name` stands for: a generator, `none`, or a CSV file's path (read and
    checked now)."""
    if name in GENERATORS:
        return {"generator": name}
    if name == NO_DATASET:
        return None
    if not Path(name).exists() and "/" not in name and not name.lower().endswith(".csv"):
        raise UserError(f"unknown dataset {name!r} (choose from {', '.join(GENERATORS)}, or give a CSV file's path)")
    data = read_csv(name)
    remember_csv(data)
    return data.source


def domain_of(source: dict) -> list[float]:
    """The domain that shows a dataset entry's points: the Playground's [-6, 6]^2 for a
    generator, the points' bounding box for a CSV."""
    if "generator" in source:
        return list(DOMAIN)
    loaded = load_csv(source)
    return list(_csv_domain(loaded.x, loaded.y))
