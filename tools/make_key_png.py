"""Draws assets/shapes/key.png, the example silhouette: a dark key on white, 128 x 128, 8-bit grey.
Run from the checkout's root: .venv/bin/python tools/make_key_png.py

The key lies along x: a ring bow on the left (outer radius 26, hole 11 pixels), a shaft 12
pixels high to the right, and two teeth below the shaft's far end. Pixels are fully inside or
outside (no anti-aliasing), so the silhouette's outline is exactly this drawing's."""

from pathlib import Path

import numpy as np
import slangpy as spy

SIZE = 128
OUT = Path(__file__).resolve().parent.parent / "assets" / "shapes" / "key.png"


def key_mask(size: int = SIZE) -> np.ndarray:
    """True on the key's pixels, (size, size), row 0 at the top."""
    row, col = np.mgrid[:size, :size] + 0.5  # pixel centres
    bow = np.hypot(col - 34, row - 64)
    ring = (bow <= 26) & (bow >= 11)
    shaft = (col >= 56) & (col <= 118) & (abs(row - 64) <= 6)
    teeth = (row >= 64) & (row <= 84) & (((col >= 92) & (col <= 100)) | ((col >= 106) & (col <= 118)))
    return ring | shaft | teeth


def main() -> None:
    pixels = np.where(key_mask(), 0, 255).astype(np.uint8)
    spy.Bitmap(pixels).write(str(OUT))
    print(f"{OUT}: {OUT.stat().st_size} bytes")


if __name__ == "__main__":
    main()
