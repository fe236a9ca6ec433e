"""The truth in numpy, for the gradient check: each truth's own float64 twin (target expressions:
targets.py's target_to_numpy; an image: image_truth.py's bilinear sample; a shape: its distance
grid read the same way, the grid the kernels upload; a mesh: its truth grid read trilinearly). A
Slang file's target has none: None."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..kernels.plan import NetworkPlan
from ..truth import image_truth
from ..truth.mesh_truth import load_mesh_field, trilinear
from ..truth.sdf_truth import load_field
from ..truth.shapes.grid import bilinear
from ..truth.targets import target_to_numpy

TruthFunction = Callable[..., np.ndarray]  # (N,) x, y (and z in 3D) -> (N, outputs) float64


def numpy_truth(plan: NetworkPlan, domain, image: dict | None = None, z_range=None) -> TruthFunction | None:
    """The plan's truth over `domain` (and `z_range`, for a function of (x, y, z)) as a numpy
    function of the points' coordinates, or None where it has no numpy twin; `image` is an image
    target's Config.image."""
    domain = tuple(float(v) for v in domain)
    if plan.point_dim == 3:
        return _numpy_truth_3d(plan, (*domain, *(float(v) for v in z_range)))
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


def _numpy_truth_3d(plan: NetworkPlan, box: tuple[float, ...]) -> TruthFunction | None:
    if plan.mesh is not None:
        field = load_mesh_field(plan.mesh.spec, box, plan.mesh.resolution)
        return lambda x, y, z: trilinear(field.distance, field.box, np.stack([x, y, z], axis=1))[:, None]
    if plan.slang_truth is not None:
        return None
    targets = [target_to_numpy(t, dims=3) for t in plan.targets]
    return lambda x, y, z: np.stack([target(x, y, z) for target in targets], axis=1)


def truth_tangents(truth: TruthFunction, points: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """(D, N, outputs): the truth's derivatives along x, y (and z) of points (N, D), by central
    differences in float64. A step of 1e-6
    is far inside a grid cell (1/512 of the domain for a shape): only a point within 1e-6 of a
    cell's edge gets the mean of its two cells' slopes where the kernels take one, a change of
    the slope of a smooth distance over a cell, 1e-2 of one sample's Sobolev term at most."""
    columns = np.asarray(points, np.float64).T
    steps = np.eye(len(columns))[:, :, None] * h
    return np.stack([(truth(*(columns + step)) - truth(*(columns - step))) / (2 * h) for step in steps])
