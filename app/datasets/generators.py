"""The TensorFlow Playground's six data generators, written from its src/dataset.ts (docs/guide/data.md,
'Datasets'). Unlike the Playground's, each returns exactly n points, classes n - n // 2 and n // 2,
from a numpy Generator, so a data seed gives the same points anywhere. Each takes (rng, n, noise) and
returns x, y and the truth: a class index (0 for the Playground's -1) or a value."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

DOMAIN = (-6.0, 6.0, -6.0, 6.0)  # the Playground's heatmap: x and y in [-6, 6]
MAX_NOISE = 0.5

Points = tuple[np.ndarray, np.ndarray, np.ndarray]


def _halves(n: int) -> tuple[int, int]:
    """Points of the Playground's +1 class (its first loop), then of its -1 class."""
    return n - n // 2, n // 2


def _uniform(rng: np.random.Generator, low: float, high: float, n: int) -> np.ndarray:
    return rng.uniform(low, high, n)


def circle(rng: np.random.Generator, n: int, noise: float) -> Points:
    """+1 inside radius 2.5, -1 in the ring from 3.5 to 5; the label is taken at the point moved
    by noise * U(-5, 5) in x and y, so noise flips labels near the gap."""
    radius = 5.0
    inner, outer = _halves(n)
    r = np.concatenate([_uniform(rng, 0.0, 0.5 * radius, inner), _uniform(rng, 0.7 * radius, radius, outer)])
    angle = _uniform(rng, 0.0, 2 * np.pi, n)
    x, y = r * np.sin(angle), r * np.cos(angle)
    nx, ny = _uniform(rng, -radius, radius, n) * noise, _uniform(rng, -radius, radius, n) * noise
    inside = np.hypot(x + nx, y + ny) < 0.5 * radius
    return x, y, inside.astype(np.int64)


def xor(rng: np.random.Generator, n: int, noise: float) -> Points:
    """x, y uniform in [-5, 5], pushed 0.3 away from the axes; +1 where x * y >= 0, taken at the
    point moved by noise * U(-5, 5)."""
    x, y = _uniform(rng, -5.0, 5.0, n), _uniform(rng, -5.0, 5.0, n)
    x += np.where(x > 0, 0.3, -0.3)
    y += np.where(y > 0, 0.3, -0.3)
    nx, ny = _uniform(rng, -5.0, 5.0, n) * noise, _uniform(rng, -5.0, 5.0, n) * noise
    return x, y, ((x + nx) * (y + ny) >= 0).astype(np.int64)


def gauss(rng: np.random.Generator, n: int, noise: float) -> Points:
    """Two Gaussian blobs, +1 around (2, 2) and -1 around (-2, -2), with a variance growing
    linearly from 0.5 at noise 0 to 4 at noise 0.5."""
    variance = 0.5 + (4.0 - 0.5) * noise / MAX_NOISE
    positive, negative = _halves(n)
    centre = np.concatenate([np.full(positive, 2.0), np.full(negative, -2.0)])
    std = np.sqrt(variance)
    x, y = centre + std * rng.standard_normal(n), centre + std * rng.standard_normal(n)
    return x, y, np.concatenate([np.ones(positive, np.int64), np.zeros(negative, np.int64)])


def spiral(rng: np.random.Generator, n: int, noise: float) -> Points:
    """Two interleaved spirals: point i of m has radius 5 i / m at angle 3.5 pi i / m (+1) or
    that plus pi (-1), moved by noise * U(-1, 1) in x and y."""
    xs, ys, labels = [], [], []
    for count, delta, label in ((_halves(n)[0], 0.0, 1), (_halves(n)[1], np.pi, 0)):
        i = np.arange(count, dtype=np.float64)
        r = i / max(count, 1) * 5.0
        t = 1.75 * i / max(count, 1) * 2 * np.pi + delta
        xs.append(r * np.sin(t) + _uniform(rng, -1.0, 1.0, count) * noise)
        ys.append(r * np.cos(t) + _uniform(rng, -1.0, 1.0, count) * noise)
        labels.append(np.full(count, label, np.int64))
    return np.concatenate(xs), np.concatenate(ys), np.concatenate(labels)


def plane(rng: np.random.Generator, n: int, noise: float) -> Points:
    """x, y uniform in [-6, 6]; the value (x + y) / 10, taken at the point moved by
    noise * U(-6, 6)."""
    x, y = _uniform(rng, -6.0, 6.0, n), _uniform(rng, -6.0, 6.0, n)
    nx, ny = _uniform(rng, -6.0, 6.0, n) * noise, _uniform(rng, -6.0, 6.0, n) * noise
    return x, y, (x + nx + y + ny) / 10.0


GAUSSIANS = (
    (-4.0, 2.5, 1.0),
    (0.0, 2.5, -1.0),
    (4.0, 2.5, 1.0),
    (-4.0, -2.5, -1.0),
    (0.0, -2.5, 1.0),
    (4.0, -2.5, -1.0),
)


def multigauss_value(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Six bumps of alternating sign: each sign * max(0, 1 - distance / 2); where bumps overlap,
    the one of largest magnitude."""
    best = np.zeros_like(x)
    for cx, cy, sign in GAUSSIANS:
        value = sign * np.clip(1.0 - np.hypot(x - cx, y - cy) / 2.0, 0.0, 1.0)
        best = np.where(np.abs(value) > np.abs(best), value, best)
    return best


def multigauss(rng: np.random.Generator, n: int, noise: float) -> Points:
    """x, y uniform in [-6, 6]; the bumps' value taken at the point moved by noise * U(-6, 6)."""
    x, y = _uniform(rng, -6.0, 6.0, n), _uniform(rng, -6.0, 6.0, n)
    nx, ny = _uniform(rng, -6.0, 6.0, n) * noise, _uniform(rng, -6.0, 6.0, n) * noise
    return x, y, multigauss_value(x + nx, y + ny)


@dataclass(frozen=True)
class Generator:
    name: str
    classify: bool  # two classes (-1 and +1); else one regression value
    make: Callable[[np.random.Generator, int, float], Points]
    description: str


# The Playground's class names: its labels, in class-index order (orange -1, blue +1)
CLASS_NAMES = ("-1", "1")
VALUE_NAMES = ("value",)

GENERATORS: dict[str, Generator] = {
    g.name: g
    for g in (
        Generator("circle", True, circle, "a disc in a ring"),
        Generator("xor", True, xor, "the quadrants"),
        Generator("gauss", True, gauss, "two Gaussian blobs"),
        Generator("spiral", True, spiral, "two interleaved spirals"),
        Generator("plane", False, plane, "values: (x + y) / 10"),
        Generator("multigauss", False, multigauss, "values: six bumps"),
    )
}
