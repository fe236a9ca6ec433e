"""A target's truth must be finite over the whole domain: it is checked in numpy, in float32 as
the GPU computes it, before anything is compiled (a Slang file's truth has no numpy twin and is
checked on the GPU's evaluation instead: check_truth_finite)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import UserError
from .eval_grid import grid_centres
from .targets import target_to_numpy

# The largest truth a target may reach at a check point: past it, a truth is a pole or an overflow
# in the making, not a shape to fit, while targets fitted by eye stay far below it, a scale such as
# 1000*sin(x) included (docs/architecture.md, 'Targets and truths'). It holds whatever the domain.
TRUTH_LIMIT = 1e6


def check_points(domain, grid: int) -> tuple[np.ndarray, np.ndarray]:
    """Where a target must be finite: the grid's cell centres, the domain's corners and edges,
    and the lines x = 0 and y = 0 where they cross it. The last catch 1/x and log(abs(y)) over a
    domain around 0, which no cell centre hits, but whose truth near 0 is as large as the grid
    is fine (1/x: 64 at the centres of a 64 grid, a loss of ~2,600 to start from)."""
    x0, x1, y0, y1 = domain
    cx, cy = (a.ravel() for a in grid_centres(domain, grid))
    along = np.linspace(0.0, 1.0, 4 * grid + 1)
    xs, ys = x0 + (x1 - x0) * along, y0 + (y1 - y0) * along
    lines_x = [np.concatenate([xs, xs, np.full_like(ys, x0), np.full_like(ys, x1)])]
    lines_y = [np.concatenate([np.full_like(xs, y0), np.full_like(xs, y1), ys, ys])]
    if x0 < 0 < x1:
        lines_x.append(np.zeros_like(ys))
        lines_y.append(ys)
    if y0 < 0 < y1:
        lines_x.append(xs)
        lines_y.append(np.zeros_like(xs))
    return np.concatenate([cx, *lines_x]), np.concatenate([cy, *lines_y])


def check_depths(z_range) -> np.ndarray:
    """The depths at which a function of (x, y, z) is checked at check_points: z0, z1, the planes
    between them an eighth apart, and z = 0 where the range crosses it."""
    z0, z1 = z_range
    depths = z0 + (z1 - z0) * np.linspace(0.0, 1.0, 9)
    return np.append(depths, 0.0) if z0 < 0 < z1 else depths


def check_finite(targets, domain, grid: int, z_range=None) -> None:
    """Raises UserError naming a target that is NaN or infinite at one of check_points (the
    first such target), or else one beyond ±TRUTH_LIMIT there, evaluated in float32 as the GPU
    does (so that a domain wide enough to overflow is caught too): such a truth can't be
    learned, and training on it would only report a non-finite or a huge loss. With a z_range
    the targets are functions of (x, y, z), checked at check_points on each of check_depths."""
    x, y = check_points(domain, grid)
    z = None
    if z_range is not None:
        depths = check_depths(z_range)
        x, y, z = np.tile(x, depths.size), np.tile(y, depths.size), np.repeat(depths, x.size)
    dims = 2 if z is None else 3
    values = [np.broadcast_to(target_to_numpy(text, np.float32, dims)(x, y, z), x.shape) for text in targets]
    for fails in (lambda v: ~np.isfinite(v), lambda v: np.abs(v) > TRUTH_LIMIT):
        for k, (text, truth) in enumerate(zip(targets, values)):
            bad = np.flatnonzero(fails(truth))
            if bad.size:
                i = bad[np.argmax(np.abs(truth[bad]))]  # the worst point: a pole's, not its edge's
                at = f"x = {x[i]:.4g}, y = {y[i]:.4g}" + ("" if z is None else f", z = {z[i]:.4g}")
                raise UserError(
                    f"target f{k + 1} = {text!r} is {truth[i]:.4g} at {at}: "
                    f"a target must be finite over the whole domain, within ±{TRUTH_LIMIT:.0e}"
                )


def check_truth_finite(truths: np.ndarray, slang_target: dict, domain) -> None:
    """Raises UserError if the GPU-evaluated truth of a Slang target is NaN or infinite at some
    cell centre of the grid evaluation `truths` (G, G, outputs); expressions are checked in numpy
    before compiling (check_finite)."""
    bad = np.argwhere(~np.isfinite(truths))
    if bad.size:
        j, i, k = bad[0]
        x, y = grid_centres(domain, truths.shape[0])
        raise UserError(
            f"target f{k + 1} = target(p, {k}) of {Path(slang_target['file']).name} is "
            f"{truths[j, i, k]} at x = {x[j, i]:.4g}, y = {y[j, i]:.4g}: "
            f"a target must be finite over the whole domain"
        )
