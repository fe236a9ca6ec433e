"""A target's truth must be finite over the whole domain: it is checked in numpy, in float32 as
the GPU computes it, before anything is compiled (a Slang file's truth has no numpy twin and is
checked on the GPU's evaluation instead, app/slang_target.py)."""

from __future__ import annotations

import numpy as np

from .errors import UserError
from .grid import grid_centres
from .targets import target_to_numpy


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


def check_finite(targets, domain, grid: int) -> None:
    """Raises UserError naming the first target that is NaN or infinite at one of check_points,
    evaluated in float32 as the GPU does (so that a domain wide enough to overflow is caught
    too): such a truth can't be learned, and training on it would only report a non-finite or
    a huge loss."""
    x, y = check_points(domain, grid)
    for k, text in enumerate(targets):
        values = np.broadcast_to(target_to_numpy(text, np.float32)(x, y), x.shape)
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            i = bad[0]
            raise UserError(
                f"target f{k + 1} = {text!r} is {values[i]} at x = {x[i]:.4g}, y = {y[i]:.4g}: "
                f"a target must be finite over the whole domain"
            )
