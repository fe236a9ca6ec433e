"""The shape grid: the domain, its pixel centres and bilinear reads, laid out as image targets are
(image_truth.pixel_centres and image_truth.sample: row 0 at the top, y1), and the check that a
shape's boundary crosses the domain at all."""

from __future__ import annotations

import math

import numpy as np

from ...errors import UserError
from ..image_truth import pixel_centres, sample

MIN_RESOLUTION = 8
MAX_RESOLUTION = 4096


def check_domain(domain) -> tuple[float, float, float, float]:
    """The domain as four floats (x0, x1, y0, y1): a UserError unless finite with x0 < x1, y0 < y1."""
    try:
        x0, x1, y0, y1 = (float(value) for value in domain)
    except (TypeError, ValueError):
        raise UserError(f"a shape's domain must be four numbers x0, x1, y0, y1, not {domain!r}") from None
    if not all(math.isfinite(v) for v in (x0, x1, y0, y1)) or x0 >= x1 or y0 >= y1:
        raise UserError(f"a shape's domain [{x0:g}, {x1:g}, {y0:g}, {y1:g}] must be finite with x0 < x1 and y0 < y1")
    return x0, x1, y0, y1


def check_resolution(resolution) -> int:
    if isinstance(resolution, bool) or not isinstance(resolution, int):
        raise UserError(f"a shape's resolution must be a whole number, not {resolution!r}")
    if not MIN_RESOLUTION <= resolution <= MAX_RESOLUTION:
        raise UserError(f"a shape's resolution is {resolution}: it must be {MIN_RESOLUTION} to {MAX_RESOLUTION}")
    return resolution


def centres(domain, width: int, height: int) -> np.ndarray:
    """(H * W, 2) float64 pixel centres, row by row from the top."""
    x, y = pixel_centres(domain, width, height)
    return np.stack([x.ravel(), y.ravel()], axis=1)


def bilinear(distance: np.ndarray, domain, xy: np.ndarray) -> np.ndarray:
    """float64 (n,) values of an (H, W) grid at points (n, 2), edges extended: the image truth's
    own sampling, so that the GPU's bilinear truth agrees with it."""
    return sample(distance[:, :, None], domain, xy[:, 0], xy[:, 1])[:, 0]


def check_crossing(name: str, distance: np.ndarray, domain) -> None:
    """A UserError unless the signed distance takes both signs on the grid: with one sign only,
    the domain holds no boundary to learn (the shape lies outside it, or covers all of it)."""
    if distance.min() < 0 < distance.max():
        return
    where = "lies entirely outside" if distance.min() >= 0 else "covers all of"
    x0, x1, y0, y1 = domain
    raise UserError(f"shape {name} {where} the domain [{x0:g}, {x1:g}, {y0:g}, {y1:g}]: no boundary to learn there")
