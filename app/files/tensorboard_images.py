"""The images of a run's TensorBoard event files (app/files/tensorboard_events.py), from its last
evaluation, as 8-bit sRGB and PNG: the heatmaps' panels as the window shows them, a dataset's
points over the learned function, an image target's truth beside what it learned."""

from __future__ import annotations

import functools
import math
import struct
import zlib
from typing import TYPE_CHECKING

import numpy as np

from ..kernels.view_constants import GRADIENT_VIEW

if TYPE_CHECKING:
    from ..loop.session import Session

IMAGE_SIDE = 512  # an image target's panels shrink to at most this many pixels a side
GAP = 2  # pixels between the panels of an image, in the reports' background colour
BACKGROUND = (23, 26, 31)


def images(session: Session) -> list[tuple[str, np.ndarray]]:
    """The images of the session's last evaluation, (tag, H x W x 3 bytes): an image target's
    truth | learned; a dataset's points over the learned function; else the heatmaps' values
    (truth | learned | |error|, a row an output), and with contours the |gradient| too."""
    if session.image is not None:
        return [("heatmaps/image", _image_panels(session))]
    heatmaps = session.heatmaps
    if heatmaps is None:
        return []
    with session.gpu.submit() as encoder:  # from the evaluator's last complete pass
        heatmaps.record_draw(encoder)
    if heatmaps.data_view is not None:
        return [("heatmaps/data", _texture_bytes(heatmaps.data_view.view.to_numpy()))]
    atlas = heatmaps.atlas.to_numpy()
    views = [("heatmaps/values", 0)] + ([("heatmaps/gradient_norm", GRADIENT_VIEW)] if heatmaps.contours.shown else [])
    return [(tag, _view_panels(atlas, view, heatmaps.grid)) for tag, view in views]


@functools.cache
def _srgb_of_halves() -> np.ndarray:
    """Every half-precision value's 8-bit sRGB encoding, a table indexed by its bits (a drawn
    texture's colours are linear: the UI renderer encodes them on output, shaders/views/visualize.slang)."""
    linear = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32)
    linear = np.clip(np.nan_to_num(linear, nan=0.0), 0.0, 1.0)
    srgb = np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * linear ** (1 / 2.4) - 0.055)
    return np.round(srgb * 255.0).astype(np.uint8)


def _texture_bytes(pixels: np.ndarray) -> np.ndarray:
    """A drawn rgba16_float texture's colours as 8-bit sRGB."""
    return _srgb_of_halves()[np.ascontiguousarray(pixels[..., :3]).view(np.uint16)]


def _image_bytes(pixels: np.ndarray) -> np.ndarray:
    """An image's pixels (sRGB already), grey or colour, clamped to [0, 1], as 8-bit RGB."""
    rgb = np.round(np.clip(pixels[..., :3] if pixels.shape[2] >= 3 else pixels[..., :1], 0.0, 1.0) * 255.0)
    rgb = rgb.astype(np.uint8)
    return rgb if rgb.shape[2] == 3 else np.repeat(rgb, 3, axis=2)


def _panels(rows: list[list[np.ndarray]]) -> np.ndarray:
    """Panels of equal size laid out in rows, GAP pixels of background between them."""
    height, width, _ = rows[0][0].shape
    columns = max(len(row) for row in rows)
    canvas = np.empty((len(rows) * (height + GAP) - GAP, columns * (width + GAP) - GAP, 3), np.uint8)
    canvas[:] = BACKGROUND
    for r, row in enumerate(rows):
        for c, panel in enumerate(row):
            top, left = r * (height + GAP), c * (width + GAP)
            canvas[top : top + height, left : left + width] = panel
    return canvas


def _view_panels(atlas: np.ndarray, view: int, grid: int) -> np.ndarray:
    """One view's three panels of each output from the drawn heatmap atlas (app/views/heatmaps.py)."""
    outputs = atlas.shape[0] // grid
    panels = _texture_bytes(atlas[:, 3 * view * grid : 3 * (view + 1) * grid])
    return _panels(
        [[panels[o * grid : (o + 1) * grid, p * grid : (p + 1) * grid] for p in range(3)] for o in range(outputs)]
    )


def _image_panels(session: Session) -> np.ndarray:
    """An image target's truth | learned, each shrunk by whole blocks of pixels (their mean) to
    at most IMAGE_SIDE a side."""
    from ..truth.image_truth import pixels_of

    learned, truth = session.image.learned(), pixels_of(session.config.image)
    block = math.ceil(max(truth.shape[:2]) / IMAGE_SIDE)
    return _panels([[_image_bytes(_shrink(pixels, block)) for pixels in (truth, learned)]])


def _shrink(pixels: np.ndarray, block: int) -> np.ndarray:
    if block == 1:
        return pixels
    height, width = (side // block for side in pixels.shape[:2])
    cut = pixels[: height * block, : width * block]
    return cut.reshape(height, block, width, block, -1).mean(axis=(1, 3))


def png_bytes(pixels: np.ndarray) -> bytes:
    """8-bit RGB pixels (H x W x 3) as a PNG file's bytes: TensorBoard's images are PNG."""
    height, width, _ = pixels.shape
    rows = np.concatenate([np.zeros((height, 1), np.uint8), pixels.reshape(height, -1)], axis=1)  # filter 0

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8 bits, RGB
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows.tobytes(), 1))
        + chunk(b"IEND", b"")
    )
