"""A PNG or JPEG silhouette: its dark pixels are the inside (luminance below 0.5 over white). Read by
the image truth's reader, at most MAX_SIDE a side. The signed distance at each pixel centre comes
from the exact EDT (edt.py), its zero level on the pixel edges between inside and outside; the
domain must keep the image's aspect ratio (docs/architecture.md, 'Shapes and their distances')."""

from __future__ import annotations

import numpy as np

from ...errors import UserError
from ..image_truth import aspect_domain, load
from .edt import squared_edt

MAX_SIDE = 4096
REC709 = np.array([0.2126, 0.7152, 0.0722])


def inside_mask(pixels: np.ndarray) -> np.ndarray:
    """True where a (H, W, C) image in [0, 1] is dark: luminance over white below 0.5."""
    channels = pixels.shape[2]
    colour = pixels[:, :, : 3 if channels >= 3 else 1].astype(np.float64)
    luma = colour @ REC709 if channels >= 3 else colour[:, :, 0]
    alpha = pixels[:, :, channels - 1].astype(np.float64) if channels in (2, 4) else 1.0
    return alpha * luma + (1.0 - alpha) < 0.5


def _check_square_pixels(name: str, width: int, height: int, domain) -> float:
    """The pixels' side in domain units; a UserError where they are not square."""
    x0, x1, y0, y1 = domain
    across, down = (x1 - x0) / width, (y1 - y0) / height
    if abs(across - down) > 1e-3 * max(across, down):
        fitting = ", ".join(f"{v:g}" for v in aspect_domain(width, height))
        raise UserError(
            f"silhouette {name} is {width}x{height}, so its pixels are square only over a domain of that aspect "
            f"ratio (such as [{fitting}], as image targets use), not [{x0:g}, {x1:g}, {y0:g}, {y1:g}]"
        )
    return across


def signed_distance_pixels(inside: np.ndarray) -> np.ndarray:
    """The signed distance (H, W) float64 in pixels of a mask holding both inside and outside."""
    to_inside = np.sqrt(squared_edt(inside))
    to_outside = np.sqrt(squared_edt(~inside))
    return np.where(inside, 0.5 - to_outside, to_inside - 0.5)


def edge_middles(inside: np.ndarray, domain) -> np.ndarray:
    """The middles (k, 2) of the pixel edges between an inside and an outside pixel, where the
    zero level runs: float64 in domain units."""
    height, width = inside.shape
    x0, x1, y0, y1 = domain
    rows, cols = np.nonzero(inside[:, 1:] != inside[:, :-1])  # between columns c and c + 1
    across = np.stack([cols + 1.0, rows + 0.5], axis=1)
    rows, cols = np.nonzero(inside[1:, :] != inside[:-1, :])  # between rows r and r + 1
    down = np.stack([cols + 0.5, rows + 1.0], axis=1)
    pixel = np.concatenate([across, down])  # (column, row) in pixels from the top-left corner
    return np.stack([x0 + pixel[:, 0] / width * (x1 - x0), y1 - pixel[:, 1] / height * (y1 - y0)], axis=1)


def load_silhouette(path: str, domain) -> tuple[np.ndarray, np.ndarray]:
    """The signed distance grid (H, W) float32 in domain units and the boundary samples (k, 2)."""
    name = repr(str(path))
    _, pixels = load(path)
    height, width = pixels.shape[:2]
    if width > MAX_SIDE or height > MAX_SIDE:
        raise UserError(f"silhouette {name} is {width}x{height}: at most {MAX_SIDE} pixels a side")
    pixel_size = _check_square_pixels(name, width, height, domain)
    inside = inside_mask(pixels)
    if inside.all() or not inside.any():
        shade = "dark" if inside.all() else "light"
        raise UserError(
            f"silhouette {name} is all {shade}: its dark pixels (luminance < 0.5) are the shape, and it needs both"
        )
    distance = signed_distance_pixels(inside) * pixel_size
    return distance.astype(np.float32), edge_middles(inside, domain).astype(np.float32)
