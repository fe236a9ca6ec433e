"""The exact squared Euclidean distance transform of Felzenszwalb and Huttenlocher ("Distance Transforms
of Sampled Functions", Theory of Computing 8, 2012): a 1D pass along every row, then every column, all
lines at once in numpy (a line that pops fewer parabolas waits, masked). Distances are between pixel
centres, in pixels, whole numbers in float64, exact for any image up to 4096 a side."""

from __future__ import annotations

import numpy as np


def _lines_transform(f: np.ndarray) -> np.ndarray:
    """min over q of (x - q)^2 + f[:, q] for every line (row) of f (L, n), float64."""
    lines, n = f.shape
    rows = np.arange(lines)
    envelope = np.zeros((lines, n), np.int64)  # the parabolas' vertices, v
    bounds = np.full((lines, n + 1), np.inf)  # where each takes over, z
    bounds[:, 0] = -np.inf
    top = np.zeros(lines, np.int64)  # k: the last parabola's place in the envelope
    for q in range(1, n):
        height = f[:, q] + q * q
        while True:
            vertex = envelope[rows, top]
            crossing = (height - (f[rows, vertex] + vertex * vertex)) / (2 * q - 2 * vertex)
            hidden = crossing <= bounds[rows, top]
            if not hidden.any():
                break
            top -= hidden
        top += 1
        envelope[rows, top] = q
        bounds[rows, top] = crossing
        bounds[rows, top + 1] = np.inf
    out = np.empty((lines, n))
    place = np.zeros(lines, np.int64)
    for x in range(n):
        while True:
            behind = bounds[rows, place + 1] < x
            if not behind.any():
                break
            place += behind
        vertex = envelope[rows, place]
        out[:, x] = (x - vertex) ** 2 + f[rows, vertex]
    return out


def squared_edt(features: np.ndarray) -> np.ndarray:
    """Squared distance (H, W) float64 from every pixel centre to the nearest True pixel's centre
    of a boolean mask with at least one True pixel; 0 on the True pixels."""
    height, width = features.shape
    far = float(height * height + width * width)  # beyond any distance inside the image
    f = np.where(features, 0.0, far)
    return _lines_transform(_lines_transform(f).T.copy()).T
