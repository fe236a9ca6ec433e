"""Exact distance to line segments and inside tests by winding number, vectorised in numpy: the star's
polygon, flattened SVG outlines (Outline), and the nearest of a CSV's points (a segment of length
zero). Query points are binned into cells so that only a cell's candidate segments are measured,
not an n x m pass (docs/architecture.md, 'Shapes and their distances')."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CELL_POINTS = 256
PAIRS_PER_CHUNK = 1 << 22  # point-segment pairs held at once (~32 MB a float64 array)


def _distance_sq(px, py, ax, ay, bx, by) -> np.ndarray:
    """Squared distance of points (k, 1) to segments (1, m), broadcast to (k, m); a segment of
    length zero is its point."""
    ex, ey = bx - ax, by - ay
    length_sq = ex * ex + ey * ey
    dx, dy = px - ax, py - ay
    t = np.clip((dx * ex + dy * ey) / np.where(length_sq > 0, length_sq, 1.0), 0.0, 1.0)
    dx -= t * ex
    dy -= t * ey
    return dx * dx + dy * dy


def _cells(xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The points' order grouped by cell, and where each cell's run starts in it."""
    side = max(1, int(np.sqrt(len(xy) / CELL_POINTS)))
    low, high = xy.min(axis=0), xy.max(axis=0)
    span = np.where(high > low, high - low, 1.0)
    index = np.minimum(((xy - low) / span * side).astype(np.int64), side - 1)
    cell = index[:, 1] * side + index[:, 0]
    order = np.argsort(cell, kind="stable")
    starts = np.flatnonzero(np.diff(cell[order], prepend=-1))
    return order, starts


def nearest_segment(xy: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distance (n,) float64 from points xy (n, 2) to the nearest of the segments a[i] -> b[i]
    (m, 2 each), and that segment's index (n,)."""
    xy, a, b = (np.asarray(v, np.float64) for v in (xy, a, b))
    order, starts = _cells(xy)
    ordered = xy[order]
    low = np.minimum.reduceat(ordered, starts, axis=0)
    high = np.maximum.reduceat(ordered, starts, axis=0)
    centre, radius = (low + high) / 2, np.hypot(*((high - low) / 2).T)
    ends = np.append(starts[1:], len(xy))
    distance, nearest = np.empty(len(xy)), np.empty(len(xy), np.int64)
    ax, ay, bx, by = a[None, :, 0], a[None, :, 1], b[None, :, 0], b[None, :, 1]
    chunk = max(1, PAIRS_PER_CHUNK // len(a))
    for first in range(0, len(starts), chunk):
        cells = slice(first, first + chunk)
        to_centre = np.sqrt(_distance_sq(centre[cells, :1], centre[cells, 1:], ax, ay, bx, by))
        # the slack keeps a candidate that rounding would put a hair past the bound
        reach = to_centre.min(axis=1) + 2 * radius[cells] + 1e-12 * (1 + to_centre.max(axis=1))
        for row, (start, end) in enumerate(zip(starts[cells], ends[cells])):
            candidates = np.flatnonzero(to_centre[row] <= reach[row])
            points = ordered[start:end]
            sq = _distance_sq(points[:, :1], points[:, 1:], *(v[:, candidates] for v in (ax, ay, bx, by)))
            best = sq.argmin(axis=1)
            distance[order[start:end]] = np.sqrt(sq[np.arange(len(points)), best])
            nearest[order[start:end]] = candidates[best]
    return distance, nearest


def _row_winding(y: float, xs: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Winding numbers (W,) of the points (xs, y) about closed contours made of segments a -> b:
    the signed crossings of the ray to +x, half-open in y so that a vertex counts once."""
    crosses = (a[:, 1] <= y) != (b[:, 1] <= y)
    a, b = a[crosses], b[crosses]
    if len(a) == 0:
        return np.zeros(len(xs), np.int64)
    at_x = a[:, 0] + (y - a[:, 1]) * (b[:, 0] - a[:, 0]) / (b[:, 1] - a[:, 1])
    direction = np.where(b[:, 1] > a[:, 1], 1, -1)
    order = np.argsort(at_x)
    beyond = np.append(np.cumsum(direction[order][::-1])[::-1], 0)  # crossings at index i and right of it
    return beyond[np.searchsorted(at_x[order], xs, side="right")]


def winding_grid(xs: np.ndarray, ys: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Winding numbers (H, W) at the grid of columns xs (W,) and rows ys (H,), a scanline a row."""
    return np.stack([_row_winding(y, xs, a, b) for y in ys])


def winding_points(xy: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Winding numbers (n,) of arbitrary points, in chunks of points against every segment."""
    winding = np.empty(len(xy), np.int64)
    chunk = max(1, PAIRS_PER_CHUNK // max(1, len(a)))
    ax, ay, bx, by = a[None, :, 0], a[None, :, 1], b[None, :, 0], b[None, :, 1]
    up = np.where(by > ay, 1, -1)
    for start in range(0, len(xy), chunk):
        px, py = xy[start : start + chunk, :1], xy[start : start + chunk, 1:]
        crosses = (ay <= py) != (by <= py)
        with np.errstate(divide="ignore", invalid="ignore"):
            at_x = ax + (py - ay) * (bx - ax) / (by - ay)
        winding[start : start + chunk] = np.sum(np.where(crosses & (at_x > px), up, 0), axis=1)
    return winding


@dataclass(frozen=True)
class Contours:
    """Closed contours (segments a -> b, each contour's last end its first start) filled by one
    rule: "nonzero" or "evenodd"."""

    a: np.ndarray
    b: np.ndarray
    rule: str

    def fills(self, winding: np.ndarray) -> np.ndarray:
        return winding != 0 if self.rule == "nonzero" else winding % 2 == 1


@dataclass(frozen=True)
class Outline:
    """A filled region (the union of its Contours' fills) and its boundary segments a -> b, which
    the signed distance is measured to: negative inside."""

    fills: tuple[Contours, ...]
    a: np.ndarray
    b: np.ndarray

    def inside(self, xy: np.ndarray) -> np.ndarray:
        inside = np.zeros(len(xy), bool)
        for contours in self.fills:
            inside |= contours.fills(winding_points(xy, contours.a, contours.b))
        return inside

    def inside_grid(self, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        inside = np.zeros((len(ys), len(xs)), bool)
        for contours in self.fills:
            inside |= contours.fills(winding_grid(xs, ys, contours.a, contours.b))
        return inside

    def signed_distance(self, xy: np.ndarray) -> np.ndarray:
        """Exact signed distance (n,) float64 to the boundary segments."""
        distance, _ = nearest_segment(xy, self.a, self.b)
        return np.where(self.inside(xy), -distance, distance)

    def signed_distance_grid(self, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        """The same at the grid of columns xs (W,) and rows ys (H,): (H * W,) row by row, inside
        by scanlines (a row's crossings sorted once) rather than every point against every segment."""
        x, y = np.meshgrid(xs, ys)
        distance, _ = nearest_segment(np.stack([x.ravel(), y.ravel()], axis=1), self.a, self.b)
        return np.where(self.inside_grid(xs, ys).ravel(), -distance, distance)

    def samples(self, normals: np.ndarray, spacing: float) -> tuple[np.ndarray, np.ndarray]:
        """Boundary samples and their normals (segment i's outward normal is normals[i])."""
        return sample_segments(self.a, self.b, normals, spacing)


def outline_of(fills: tuple[Contours, ...], step: float) -> tuple[Outline, np.ndarray]:
    """The Outline of a union of fills and its boundary's outward unit normals (m, 2). A segment is
    boundary only where its two sides differ, tested at its middle `step` either side: a contour
    inside another's fill (nonzero overlaps, a retraced edge) bounds nothing and is dropped."""
    a = np.concatenate([contours.a for contours in fills])
    b = np.concatenate([contours.b for contours in fills])
    length = np.hypot(*(b - a).T)
    a, b, length = a[length > 0], b[length > 0], length[length > 0]
    right = np.stack([b[:, 1] - a[:, 1], a[:, 0] - b[:, 0]], axis=1) / length[:, None]
    middle = (a + b) / 2
    probe = Outline(fills, a, b)
    left_in, right_in = probe.inside(middle - step * right), probe.inside(middle + step * right)
    keep = left_in != right_in
    outward = np.where(left_in[:, None], right, -right)[keep]
    return Outline(fills, a[keep], b[keep]), outward


def sample_segments(a: np.ndarray, b: np.ndarray, normals: np.ndarray, spacing: float):
    """Points along segments no further than `spacing` apart, at the middles of equal pieces (never
    a corner, where the normal is not defined), with their segment's normal: (k, 2) each."""
    pieces = np.maximum(1, np.ceil(np.hypot(*(b - a).T) / spacing).astype(np.int64))
    owner = np.repeat(np.arange(len(a)), pieces)
    first = np.cumsum(pieces) - pieces
    t = (np.arange(len(owner)) - first[owner] + 0.5) / pieces[owner]
    points = a[owner] + t[:, None] * (b[owner] - a[owner])
    return points, normals[owner]
