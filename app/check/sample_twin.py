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


def sample_points_3d(seed: int, step: int, count: int, domain, z_range) -> np.ndarray:
    """samplePoint3's first `count` points of `step`, (count, 3) float32: x and y as sample_points
    draws them, z from a third hash."""
    key = pcg_hash(np.uint32(step) ^ pcg_hash(np.uint32(seed)))
    h2 = pcg_hash(pcg_hash(np.arange(count, dtype=np.uint32) ^ key) ^ np.uint32(0x9E3779B9))
    h3 = pcg_hash(h2 ^ np.uint32(0x7F4A7C15))
    z0, z1 = (float(v) for v in z_range)
    z = z0 + (z1 - z0) * ((h3 >> np.uint32(8)).astype(np.float64) / 16777216.0)
    return np.concatenate([sample_points(seed, step, count, domain), z.astype(np.float32)[:, None]], axis=1)


def mesh_samples(seed: int, step: int, count: int, domain, z_range, field) -> np.ndarray:
    """The mesh drawSample's first `count` points of `step` (shadergen/truth.py): every other one
    moved onto the surface sample h % n, then along its normal by up to SURFACE_BAND of the box's
    width, clamped to the box (float64 here, float32 there)."""
    from ..truth.mesh_truth import SURFACE_BAND

    points = sample_points_3d(seed, step, count, domain, z_range).astype(np.float64)
    odd = np.arange(1, count, 2, dtype=np.uint32)
    h = pcg_hash(odd ^ pcg_hash(np.uint32(step) ^ pcg_hash(np.uint32(seed) ^ np.uint32(0x51ED270B))))
    chosen = h % np.uint32(len(field.surface))
    unit = (pcg_hash(h ^ np.uint32(0x68E31DA4)) >> np.uint32(8)).astype(np.float64) / 16777216.0
    offset = (2.0 * unit - 1.0) * SURFACE_BAND * (float(domain[1]) - float(domain[0]))
    moved = field.surface[chosen].astype(np.float64) + offset[:, None] * field.normals[chosen].astype(np.float64)
    low = [float(domain[0]), float(domain[2]), float(z_range[0])]
    high = [float(domain[1]), float(domain[3]), float(z_range[1])]
    points[odd] = np.clip(moved, low, high)
    return points
