"""A procedural, photo-like test image: a landscape (sky, clouds, sun, hazy mountains, a lake
reflecting them, wooded hills, grass) from seeded fractal value noise, with detail down to single
pixels and a little film grain; the same bytes for the same size and seed, nothing downloaded."""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

from ..errors import first_line
from ..run.output import SGL_OPEN_FAILED
from ..truth.image_truth import MAX_PIXELS
from . import tools

MAX_SIZE = math.isqrt(MAX_PIXELS)  # the largest square an image target may be


def _lattice_noise(rng: np.random.Generator, height: int, width: int, cells: int) -> np.ndarray:
    """Smoothly interpolated random values on a grid of `cells` cells along the longer side."""
    rows = max(1, round(cells * height / max(width, height)))
    columns = max(1, round(cells * width / max(width, height)))
    lattice = rng.random((rows + 2, columns + 2))
    y = (np.arange(height) + 0.5) / height * rows
    x = (np.arange(width) + 0.5) / width * columns
    y0, x0 = np.floor(y).astype(int), np.floor(x).astype(int)
    ty, tx = y - y0, x - x0
    ty, tx = ty * ty * (3 - 2 * ty), tx * tx * (3 - 2 * tx)  # smoothstep
    top = lattice[y0][:, x0] * (1 - tx) + lattice[y0][:, x0 + 1] * tx
    bottom = lattice[y0 + 1][:, x0] * (1 - tx) + lattice[y0 + 1][:, x0 + 1] * tx
    return top * (1 - ty)[:, None] + bottom * ty[:, None]


def fractal_noise(rng: np.random.Generator, height: int, width: int, cells: int, octaves: int) -> np.ndarray:
    """Octaves of lattice noise, each twice as fine and half as strong, in about [0, 1]."""
    total, weight, norm = np.zeros((height, width)), 1.0, 0.0
    for octave in range(octaves):
        if cells << octave > 2 * max(height, width):
            break
        total += weight * _lattice_noise(rng, height, width, cells << octave)
        norm += weight
        weight *= 0.5
    return total / norm


def _ridge(rng: np.random.Generator, width: int, level: float, amplitude: float, cells: int) -> np.ndarray:
    """A mountain ridge's height (a fraction of the image from the top) at each column."""
    noise = fractal_noise(rng, 1, width, cells, 9)[0]
    return level - amplitude * (noise - 0.5) * 2


def landscape(size: int = 1024, seed: int = 1) -> np.ndarray:
    """(size, size, 3) uint8 RGB."""
    rng = np.random.default_rng(seed)
    h = w = size
    y = (np.arange(h) / h)[:, None] * np.ones((1, w))
    x = (np.arange(w) / w)[None, :] * np.ones((h, 1))
    horizon = 0.58
    # sky: a gradient, a sun with its glow, clouds
    sky = np.stack([0.25 + 0.55 * y / horizon, 0.45 + 0.4 * y / horizon, 0.85 + 0.1 * y / horizon], -1)
    sun = np.hypot(x - 0.72, y - 0.22)
    sky += (np.exp(-((sun / 0.03) ** 2)) + 0.35 * np.exp(-sun / 0.12))[..., None] * np.array([1.0, 0.9, 0.7])
    clouds = np.clip((fractal_noise(rng, h, w, 6, 8) - 0.52) * 3.5, 0, 1) * (y < horizon)
    image = sky * (1 - clouds[..., None] * 0.8) + clouds[..., None] * np.array([0.95, 0.95, 0.97]) * 0.8
    # mountain ranges, far (hazy, blue) to near (darker, textured)
    ranges = [
        (0.42, 0.12, 5, [0.52, 0.58, 0.72]),
        (0.50, 0.08, 8, [0.36, 0.42, 0.50]),
        (0.56, 0.05, 12, [0.25, 0.3, 0.28]),
    ]
    for level, amplitude, cells, colour in ranges:
        ridge = _ridge(rng, w, level, amplitude, cells)
        rock = fractal_noise(rng, h, w, cells * 4, 8)
        shade = np.array(colour) * (0.75 + 0.5 * rock[..., None])
        snow = ((y < ridge[None, :] + 0.04) & (rock > 0.55) & (level < 0.45))[..., None]
        shade = np.where(snow, np.array([0.9, 0.92, 0.95]) * (0.8 + 0.2 * rock[..., None]), shade)
        inside = (y >= ridge[None, :]) & (y < horizon)
        image = np.where(inside[..., None], shade, image)
    # the lake: the scene above the horizon, mirrored, rippled and darkened
    lake_bottom = 0.74
    ripple = (fractal_noise(rng, h, w, 40, 6) - 0.5) * 0.02
    source = np.clip(2 * horizon - y + ripple * (y - horizon) * 8, 0, horizon - 1e-3)
    mirrored = image[(source * h).astype(int), np.arange(w)[None, :]]
    water = (y >= horizon) & (y < lake_bottom - 0.06 * fractal_noise(rng, 1, w, 10, 6)[0][None, :])
    image = np.where(water[..., None], mirrored * np.array([0.6, 0.7, 0.75]), image)
    # wooded hills and grass in the foreground: fine detail down to single pixels
    grass = fractal_noise(rng, h, w, 64, 9)
    field = (
        np.stack([0.2 + 0.25 * grass, 0.35 + 0.3 * grass, 0.1 + 0.1 * grass], -1) * (0.7 + 0.5 * (y - 0.6))[..., None]
    )
    ground = (y >= horizon) & ~water
    image = np.where(ground[..., None], field, image)
    trees = fractal_noise(rng, h, w, 24, 8)
    canopy = ground & (trees > 0.58) & (y < 0.9)
    image = np.where(canopy[..., None], np.array([0.08, 0.2, 0.08]) * (0.6 + 0.8 * trees[..., None]), image)
    image += rng.normal(0.0, 0.012, image.shape)  # film grain
    return np.round(np.clip(image, 0, 1) * 255).astype(np.uint8)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=tools.prog("bench.photo"), description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1024, help=f"side in pixels, 2-{MAX_SIZE} (default 1024)")
    parser.add_argument("--seed", type=int, default=1, help="a whole number from 0 (default 1)")
    parser.add_argument("--out", required=True, help="the PNG file to write")
    args = parser.parse_args(argv)
    if not 2 <= args.size <= MAX_SIZE:  # the largest square the app takes as an image
        parser.error(f"--size must be 2-{MAX_SIZE}, not {args.size}")
    if args.seed < 0:
        parser.error(f"--seed must be 0 or more, not {args.seed}")
    import slangpy as spy

    try:
        spy.Bitmap(landscape(args.size, args.seed)).write(args.out)
    except Exception as error:  # sgl's RuntimeError: a folder that is not there, no permission
        reason = first_line(error).removeprefix(f"{args.out}: ").removeprefix(SGL_OPEN_FAILED)
        print(f"error: cannot write {args.out}: {reason}", file=sys.stderr)
        return 2
    print(f"{args.out}: {args.size}x{args.size} procedural landscape, seed {args.seed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
