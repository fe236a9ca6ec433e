"""The evaluation grid: G x G cells over the domain [x0, x1] x [y0, y1], each evaluated at its
centre. shaders/views/visualize.slang computes the same points on the GPU; these are the host's."""

from __future__ import annotations

import numpy as np


def _centres(low: float, high: float, grid: int, index):
    return low + (index + 0.5) / grid * (high - low)


def grid_centres(domain, grid: int, index: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """x and y of the cell centres, each (N, N) indexed [j, i], j along y: every cell, or the
    cells `index` (along both axes) picks."""
    x0, x1, y0, y1 = domain
    index = np.arange(grid) if index is None else index
    return np.meshgrid(_centres(x0, x1, grid, index), _centres(y0, y1, grid, index))


def cell_centre(domain, grid: int, i: int, j: int) -> tuple[float, float]:
    """x and y of cell (i, j), i along x."""
    x0, x1, y0, y1 = domain
    return _centres(x0, x1, grid, i), _centres(y0, y1, grid, j)
