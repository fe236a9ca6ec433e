"""A step's samples in numpy, as the kernels draw them (shaders/truth/sampling.slang), for the nested
gradient check, which needs no GPU module of its own: samplePoint's points over the domain, and
the normal alignment term's boundary samples (shadergen/truth.py's boundary drawSample): every
NORMAL_EVERY-th sample of a step is the shape's boundary point boundaryIndex(seed, step, i, count),
with its outward normal; the others keep their points and a normal of 0."""

from __future__ import annotations

import numpy as np

from ..kernels.plan import NetworkPlan
from ..model.derivative_loss import NORMAL_EVERY
from ..truth.sdf_truth import boundary_points, load_field


def pcg_hash(values: np.ndarray) -> np.ndarray:
    """shaders/truth/sampling.slang's pcgHash on uint32 arrays (wrapping as the GPU's uints do)."""
    v = np.atleast_1d(np.asarray(values, np.uint32))
    with np.errstate(over="ignore"):  # uint32 products wrap, as intended
        state = v * np.uint32(747796405) + np.uint32(2891336453)
        word = ((state >> ((state >> np.uint32(28)) + np.uint32(4))) ^ state) * np.uint32(277803737)
    return (word >> np.uint32(22)) ^ word


def sample_points(seed: int, step: int, count: int, domain) -> np.ndarray:
    """samplePoint's first `count` points of `step`, (count, 2) float32: the 24-bit uniforms are
    exact, the lerp is float64 here and float32 there (a point may differ in its last bit)."""
    key = pcg_hash(np.uint32(step) ^ pcg_hash(np.uint32(seed)))
    h = pcg_hash(np.arange(count, dtype=np.uint32) ^ key)
    h2 = pcg_hash(h ^ np.uint32(0x9E3779B9))
    u, w = ((bits >> np.uint32(8)).astype(np.float64) / 16777216.0 for bits in (h, h2))
    x0, x1, y0, y1 = (float(v) for v in domain)
    return np.stack([x0 + (x1 - x0) * u, y0 + (y1 - y0) * w], axis=1).astype(np.float32)


def boundary_index(seed: int, step: int, samples: np.ndarray, count: int) -> np.ndarray:
    key = pcg_hash(np.uint32(step) ^ pcg_hash(np.uint32(seed) ^ np.uint32(0x27D4EB2F)))
    return pcg_hash(np.asarray(samples, np.uint32) ^ key) % np.uint32(count)


def with_boundary(plan: NetworkPlan, config, points: np.ndarray, step: int) -> tuple[np.ndarray, np.ndarray]:
    """The first len(points) samples of `step` as the kernels draw them: (points, normals), both
    (N, 2) float32, the normals 0 but at boundary samples. Unchanged where the plan samples no
    boundary."""
    normals = np.zeros_like(points, np.float32)
    if not plan.normals:
        return points, normals
    boundary, outward = boundary_points(load_field(config.sdf, tuple(float(v) for v in config.domain)))
    if len(boundary) == 0:
        return points, normals
    samples = np.arange(0, len(points), NORMAL_EVERY)
    chosen = boundary_index(config.seed, step, samples, len(boundary))
    points = points.copy()
    points[samples], normals[samples] = boundary[chosen], outward[chosen]
    return points, normals
