"""The built-in shapes, exact signed distances in closed form (negative inside), about the domain's
origin: circle, box, rounded-box, ring and star (their sizes: docs/guide/shapes.md), and "A+B", the
smooth union of two, which is the exact distance only away from where they blend
(docs/architecture.md, 'Shapes and their distances')."""

from __future__ import annotations

import numpy as np

from ...errors import UserError
from .segments import Contours, Outline, sample_segments

BUILTINS = ("circle", "box", "rounded-box", "ring", "star")
SMOOTH_K = 0.1
SPACING = 0.005  # between boundary samples, in domain units
BOX = np.array([0.5, 0.35])
CORNER = 0.15
RING_RADII = (0.3, 0.6)
STAR_RADII = (0.6, 0.25)


def _star_corners() -> np.ndarray:
    """The star's 10 corners counter-clockwise from its top point."""
    angle = np.pi / 2 + np.arange(10) * np.pi / 5
    radius = np.where(np.arange(10) % 2 == 0, *STAR_RADII)
    return np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)


_STAR_A = _star_corners()
_STAR_B = np.roll(_STAR_A, -1, axis=0)
_STAR = Outline((Contours(_STAR_A, _STAR_B, "nonzero"),), _STAR_A, _STAR_B)


def _box(xy: np.ndarray, half: np.ndarray) -> np.ndarray:
    q = np.abs(xy) - half
    return np.hypot(*np.maximum(q, 0.0).T) + np.minimum(q.max(axis=1), 0.0)


def _single(name: str, xy: np.ndarray) -> np.ndarray:
    radius = np.hypot(xy[:, 0], xy[:, 1])
    if name == "circle":
        return radius - 0.5
    if name == "box":
        return _box(xy, BOX)
    if name == "rounded-box":
        return _box(xy, BOX - CORNER) - CORNER
    if name == "ring":
        inner, outer = RING_RADII
        return np.abs(radius - (inner + outer) / 2) - (outer - inner) / 2
    return _STAR.signed_distance(xy)


def smooth_min(a: np.ndarray, b: np.ndarray, k: float = SMOOTH_K) -> np.ndarray:
    return np.minimum(a, b) - k / 4 * np.maximum(0.0, 1.0 - np.abs(a - b) / k) ** 2


def parse(spec: str) -> tuple[str, ...]:
    """The built-ins a spec names: one, or two joined by '+'; a UserError for anything else."""
    names = tuple(part.strip() for part in spec.split("+"))
    unknown = [name for name in names if name not in BUILTINS]
    if unknown or len(names) > 2:
        what = f"no built-in shape {unknown[0]!r}" if unknown else f"{spec!r} joins {len(names)} shapes"
        raise UserError(
            f"shape {spec!r}: {what}; choose one of {', '.join(BUILTINS)}, two joined by '+' (a smooth union), "
            "or a .svg, .png, .jpg or .csv file"
        )
    return names


def distance(names: tuple[str, ...], xy: np.ndarray) -> np.ndarray:
    """Signed distance (n,) float64 at points xy (n, 2)."""
    values = [_single(name, xy) for name in names]
    return values[0] if len(values) == 1 else smooth_min(*values)


def _arc(centre, radius: float, start: float, stop: float):
    """Samples of a circular arc from angle start to stop (counter-clockwise when stop > start),
    with normals pointing away from its centre."""
    count = max(1, int(np.ceil(abs(stop - start) * radius / SPACING)))
    angle = start + (np.arange(count) + 0.5) / count * (stop - start)
    normal = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    return np.asarray(centre) + radius * normal, normal


def _polygon(corners: np.ndarray):
    """Samples of a counter-clockwise polygon's edges, normals to their right (outward)."""
    a, b = corners, np.roll(corners, -1, axis=0)
    edge = b - a
    normal = np.stack([edge[:, 1], -edge[:, 0]], axis=1) / np.hypot(*edge.T)[:, None]
    return sample_segments(a, b, normal, SPACING)


def _rounded_box():
    """The inner box's edges moved out by the corner radius, and a quarter circle at each corner."""
    hx, hy = BOX - CORNER
    points, normals = _polygon(np.array([[hx, -hy], [hx, hy], [-hx, hy], [-hx, -hy]]))
    corners = [_arc((sx * hx, sy * hy), CORNER, angle, angle + np.pi / 2) for sx, sy, angle in _CORNERS]
    return [(points + CORNER * normals, normals), *corners]


_CORNERS = ((1, 1, 0.0), (-1, 1, np.pi / 2), (-1, -1, np.pi), (1, -1, 3 * np.pi / 2))


def _single_boundary(name: str) -> list[tuple[np.ndarray, np.ndarray]]:
    if name == "circle":
        return [_arc((0, 0), 0.5, 0.0, 2 * np.pi)]
    if name == "box":
        hx, hy = BOX
        return [_polygon(np.array([[hx, -hy], [hx, hy], [-hx, hy], [-hx, -hy]]))]
    if name == "rounded-box":
        return _rounded_box()
    if name == "ring":
        inner, outer = RING_RADII
        points, normals = _arc((0, 0), inner, 0.0, 2 * np.pi)
        return [_arc((0, 0), outer, 0.0, 2 * np.pi), (points, -normals)]
    return [_polygon(_STAR_A)]


def _gradient(names, xy: np.ndarray, step: float = 1e-6) -> np.ndarray:
    dx, dy = np.array([step, 0.0]), np.array([0.0, step])
    return np.stack(
        [distance(names, xy + dx) - distance(names, xy - dx), distance(names, xy + dy) - distance(names, xy - dy)],
        axis=1,
    ) / (2 * step)


def boundary(names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Boundary samples (k, 2) and their outward unit normals (k, 2). A union keeps each shape's
    samples outside the other and moves them onto the blended boundary by Newton steps along the
    gradient (central differences); those already on it (|a - b| >= k) do not move."""
    pieces = [piece for name in names for piece in _single_boundary(name)]
    if len(names) == 1:
        return np.concatenate([p for p, _ in pieces]), np.concatenate([n for _, n in pieces])
    kept = []
    for own, other in ((names[0], names[1]), (names[1], names[0])):
        points = np.concatenate([p for p, _ in _single_boundary(own)])
        kept.append(points[_single(other, points) > 0])
    points = np.concatenate(kept)
    for _ in range(8):
        gradient = _gradient(names, points)
        points = points - (distance(names, points) / np.sum(gradient**2, axis=1))[:, None] * gradient
    points = points[np.abs(distance(names, points)) < 1e-9]
    gradient = _gradient(names, points)
    return points, gradient / np.hypot(*gradient.T)[:, None]
