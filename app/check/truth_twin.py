"""The truth in numpy, for the gradient check: each truth's own float64 twin (target expressions:
targets.py's target_to_numpy; an image: image_truth.py's bilinear sample; a shape: its distance
grid read the same way, the grid the kernels upload). A Slang file's target has none: None."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..kernels.plan import NetworkPlan
from ..truth import image_truth
from ..truth.sdf_truth import load_field
from ..truth.shapes.grid import bilinear
from ..truth.targets import target_to_numpy

TruthFunction = Callable[[np.ndarray, np.ndarray], np.ndarray]  # (N,) x, y -> (N, outputs) float64


def numpy_truth(plan: NetworkPlan, domain, image: dict | None = None) -> TruthFunction | None:
    """The plan's truth over `domain` as a numpy function of the points, or None where it has no
    numpy twin; `image` is an image target's Config.image."""
    domain = tuple(float(v) for v in domain)
    if plan.sdf is not None:
        distance = load_field(plan.sdf.spec, domain).distance

        def sdf(x: np.ndarray, y: np.ndarray) -> np.ndarray:
            return bilinear(distance, domain, np.stack([x, y], axis=1).astype(np.float64))[:, None]

        return sdf
    if plan.image is not None:
        pixels = image_truth.pixels_of(image)
        return lambda x, y: image_truth.sample(pixels, domain, x, y)
    if plan.slang_truth is not None:
        return None
    targets = [target_to_numpy(t) for t in plan.targets]
    return lambda x, y: np.stack([target(x, y) for target in targets], axis=1)


def truth_tangents(truth: TruthFunction, x: np.ndarray, y: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """(2, N, outputs): the truth's derivatives along x, then y, by central differences in float64. A step of 1e-6
    is far inside a grid cell (1/512 of the domain for a shape): only a point within 1e-6 of a
    cell's edge gets the mean of its two cells' slopes where the kernels take one, a change of
    the slope of a smooth distance over a cell, 1e-2 of one sample's Sobolev term at most."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    along_x = (truth(x + h, y) - truth(x - h, y)) / (2 * h)
    along_y = (truth(x, y + h) - truth(x, y - h)) / (2 * h)
    return np.stack([along_x, along_y])
