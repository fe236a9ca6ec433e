"""How sharp a learned signed distance is: candidate settings for `--sdf`, each trained a fixed
number of steps on silhouettes with concave notches and thin bars (128 x 128, drawn here) and on
the circle, then measured in float64 from the weights: the learned zero level's distance from the
true outline in pixels (95th percentile, both ways), and on the circle | |grad f| - 1 | in the band
|d| < 0.3 and |f| on it. docs/benchmarks.md, 'How sharp a shape comes out'."""

from __future__ import annotations

import argparse
import dataclasses
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import slangpy as spy

from ..config import files as config_files
from ..config.config import Config, validate
from ..files.network_io import export_network, forward
from ..gpu.device import describe
from ..gpu.gpu import create_gpu
from ..train.trainer import Trainer
from ..truth.shapes import load_shape, shape_distance
from .tools import prog

SIZE = 128  # pixels across a silhouette
STEPS = 4000
SOFTPLUS = dict(activation="softplus")
GRID = dict(encoding="hashgrid", **SOFTPLUS)
COARSE = dict(grid_levels=6, grid_base_resolution=8, grid_level_scale=2.0, hidden=[16])  # 8 to 256 cells, x2
CANDIDATES = {  # name: config fields over the defaults; "preset" is assets/presets/shape.json
    "fourier6-64x2": dict(encoding="fourier", frequencies=6, hidden=[64, 64], eikonal=0.1, **SOFTPLUS),  # the issue's
    "fourier8-64x2": dict(encoding="fourier", frequencies=8, hidden=[64, 64], eikonal=0.1, **SOFTPLUS),
    "hash16-16": dict(hidden=[16], eikonal=0.1, **GRID),
    "hash8-16": dict(grid_levels=8, hidden=[16], eikonal=0.1, **GRID),
    "hash8-16-eik0": dict(grid_levels=8, hidden=[16], **GRID),
    "hash8-16-eik.01": dict(grid_levels=8, hidden=[16], eikonal=0.01, **GRID),
    "hash8-32x2": dict(grid_levels=8, hidden=[32, 32], eikonal=0.1, **GRID),
    "hash6-base8-2x-16": dict(eikonal=0.1, **COARSE, **GRID),
    "dense6-base8-2x-16": dict(encoding="densegrid", eikonal=0.1, **COARSE, **SOFTPLUS),
    "hash8-16-lr.003": dict(grid_levels=8, hidden=[16], eikonal=0.1, lr=0.003, **GRID),
    "hash8-16-eik.003": dict(grid_levels=8, hidden=[16], eikonal=0.003, **GRID),
    "hash8-16-eik.03": dict(grid_levels=8, hidden=[16], eikonal=0.03, **GRID),
    "hash16-16-eik.01": dict(hidden=[16], eikonal=0.01, **GRID),
    "hash8-32x2-eik.01": dict(grid_levels=8, hidden=[32, 32], eikonal=0.01, **GRID),
    "hash8-16-eik.01-lr.005": dict(grid_levels=8, hidden=[16], eikonal=0.01, lr=0.005, **GRID),
    "hash8-16-eik.01-lr.003": dict(grid_levels=8, hidden=[16], eikonal=0.01, lr=0.003, **GRID),
    "dense6-base8-2x-16-eik.01": dict(encoding="densegrid", eikonal=0.01, **COARSE, **SOFTPLUS),
    "hash8-16-tanh-eik.01": dict(grid_levels=8, hidden=[16], eikonal=0.01, encoding="hashgrid", activation="tanh"),
}


# ---- the shapes: drawn as the pixels of a silhouette (True inside) ----------------------------
def notched_block(size: int = SIZE) -> np.ndarray:
    """A block with a notch 15 px wide and 40 deep cut into its top, and a bar 10 px thick and 30
    long out of its right side: four concave corners and two bar ends."""
    row, column = np.mgrid[0:size, 0:size]
    block = (column >= 20) & (column < 90) & (row >= 24) & (row < 104)
    notch = (column >= 48) & (column < 63) & (row < 64)
    bar = (column >= 90) & (column < 120) & (row >= 54) & (row < 64)
    return (block & ~notch) | bar


def comb(size: int = SIZE) -> np.ndarray:
    """A spine and three teeth 10 px thick with gaps 15 px wide between them: an E."""
    row, column = np.mgrid[0:size, 0:size]
    spine = (column >= 24) & (column < 44) & (row >= 24) & (row < 104)
    teeth = (column >= 44) & (column < 104) & np.isin((row - 24) // 5, [0, 1, 7, 8, 14, 15])
    return spine | (teeth & (row >= 24) & (row < 104))


SHAPES = {"notched-block": notched_block, "comb": comb}


def write_silhouette(inside: np.ndarray, path: Path) -> str:
    spy.Bitmap(np.where(inside, 0, 255).astype(np.uint8)).write(str(path))
    return str(path)


# ---- the measures, in float64 from network.json ------------------------------------------------
def zero_crossings(values_at, lines: np.ndarray, samples: int) -> np.ndarray:
    """Where `values_at(points)` changes sign along each segment (start, end) of `lines` (n, 2, 2),
    sampled `samples` times, placed by linear interpolation: (k, 2)."""
    t = np.linspace(0.0, 1.0, samples)
    points = lines[:, None, 0, :] + t[None, :, None] * (lines[:, None, 1, :] - lines[:, None, 0, :])
    values = values_at(points.reshape(-1, 2)).reshape(points.shape[:2])
    line, k = np.nonzero(np.sign(values[:, :-1]) != np.sign(values[:, 1:]))
    a, b = values[line, k], values[line, k + 1]
    share = (a / (a - b))[:, None]
    return points[line, k] + share * (points[line, k + 1] - points[line, k])


def outline_points(inside: np.ndarray, domain, spacing_px: float = 0.1) -> np.ndarray:
    """The drawn outline (the pixel edges between inside and outside), sampled every `spacing_px`:
    image rows top to bottom, (k, 2) in the domain's units."""
    x0, x1, y0, y1 = domain
    pixel = (x1 - x0) / inside.shape[1]
    along = np.arange(0.0, 1.0, spacing_px)
    row, column = np.nonzero(np.diff(inside, axis=1))  # an edge between columns c and c + 1
    vertical = np.stack(
        [np.repeat(x0 + (column + 1) * pixel, len(along)), (y1 - (row[:, None] + along) * pixel).ravel()], axis=1
    )
    row, column = np.nonzero(np.diff(inside, axis=0))  # between rows r and r + 1
    horizontal = np.stack(
        [(x0 + (column[:, None] + along) * pixel).ravel(), np.repeat(y1 - (row + 1) * pixel, len(along))], axis=1
    )
    return np.concatenate([vertical, horizontal])


def nearest_distances(points: np.ndarray, others: np.ndarray, chunk: int = 2048) -> np.ndarray:
    """Each point's distance to the nearest of `others`, by brute force in chunks."""
    out = np.empty(len(points))
    for start in range(0, len(points), chunk):
        part = points[start : start + chunk]
        out[start : start + chunk] = np.sqrt(((part[:, None, :] - others[None, :, :]) ** 2).sum(-1).min(1))
    return out


def outline_error_px(values_at, inside: np.ndarray, domain, lines_per_pixel: int = 4) -> dict:
    """The learned zero level against the drawn outline, in pixels: each learned crossing's true
    distance (the outline's exact distance transform), and each outline point's distance to the
    nearest learned crossing (an outline the network lost shows here)."""
    x0, x1, y0, y1 = domain
    pixel = (x1 - x0) / inside.shape[1]
    across = np.arange(0.5 / lines_per_pixel, inside.shape[1], 1.0 / lines_per_pixel)
    xs, ys = x0 + across * pixel, y1 - across * pixel
    lines = np.array([[[x0, y], [x1, y]] for y in ys] + [[[x, y0], [x, y1]] for x in xs])
    learned = zero_crossings(values_at, lines, inside.shape[1] * 8 + 1)
    if len(learned) == 0:
        return dict(learned_p95=np.inf, lost_p95=np.inf, p95=np.inf, worst=np.inf)
    field = load_shape_pixels(inside, domain)
    off = np.abs(shape_distance(field, learned)) / pixel
    truth = outline_points(inside, domain)
    lost = nearest_distances(truth, learned) / pixel
    learned_p95, lost_p95 = float(np.percentile(off, 95)), float(np.percentile(lost, 95))
    return dict(
        learned_p95=learned_p95,
        lost_p95=lost_p95,
        p95=max(learned_p95, lost_p95),
        worst=float(max(off.max(), lost.max())),
    )


def load_shape_pixels(inside: np.ndarray, domain):
    """The shapes package's field of these pixels (written to a temporary PNG: it reads files)."""
    with tempfile.TemporaryDirectory() as folder:
        return load_shape(write_silhouette(inside, Path(folder) / "shape.png"), tuple(domain))


def circle_figures(values_at, h: float = 1e-4) -> dict:
    """On the circle of radius 0.5: | |grad f| - 1 | (central differences) over a grid of step 0.01
    in the band |d| < 0.3, mean and 95th percentile; |f| at 360 points of the circle, largest."""
    axis = np.arange(-1.0, 1.0 + 1e-9, 0.01)
    x, y = (a.ravel() for a in np.meshgrid(axis, axis))
    band = np.abs(np.hypot(x, y) - 0.5) < 0.3
    p = np.stack([x[band], y[band]], axis=1)
    dx = (values_at(p + [h, 0]) - values_at(p - [h, 0])) / (2 * h)
    dy = (values_at(p + [0, h]) - values_at(p - [0, h])) / (2 * h)
    off = np.abs(np.hypot(dx, dy) - 1.0)
    angle = np.linspace(0.0, 2.0 * np.pi, 360, endpoint=False)
    on = values_at(0.5 * np.stack([np.cos(angle), np.sin(angle)], axis=1))
    return dict(
        gradient_mean=float(off.mean()), gradient_p95=float(np.percentile(off, 95)), on_circle=float(np.abs(on).max())
    )


# ---- a run ---------------------------------------------------------------------------------------
def trained_values(gpu, config: Config, steps: int):
    """Trains `steps` steps; returns (a float64 f(points (n, 2)) -> (n,), seconds)."""
    trainer = Trainer(gpu, config)
    start = time.perf_counter()
    trainer.train(steps)
    gpu.device.wait()
    seconds = time.perf_counter() - start
    plan, params = trainer.plan, trainer.parameters()
    network = export_network(plan, config, params)
    tables = np.asarray(plan.tables(params), np.float64).reshape(plan.grid.entries, -1) if plan.grid else None
    return (lambda p: forward(network, p[:, 0], p[:, 1], tables)[:, 0]), seconds


def candidate_config(name: str, sdf: str) -> Config:
    base = config_files.load_preset(config_files.SHAPE_PRESET) if name == "preset" else Config()
    fields = {} if name == "preset" else CANDIDATES[name]
    return validate(dataclasses.replace(base, **fields, sdf=sdf))


def measure(gpu, name: str, steps: int, folder: Path, seed: int = 0) -> dict:
    row: dict = dict(candidate=name, steps=steps, seed=seed, seconds=0.0)
    for shape, draw in SHAPES.items():
        inside = draw()
        config = candidate_config(name, write_silhouette(inside, folder / f"{shape}.png"))
        config = validate(dataclasses.replace(config, seed=seed))
        values_at, seconds = trained_values(gpu, config, steps)
        row["seconds"] += seconds
        figures = outline_error_px(values_at, inside, config.domain)
        row[shape] = round(figures["p95"], 2)
        row[f"{shape}_worst"] = round(figures["worst"], 2)
    config = validate(dataclasses.replace(candidate_config(name, "circle"), seed=seed))
    values_at, seconds = trained_values(gpu, config, steps)
    row["seconds"] += seconds
    row.update({key: round(value, 4) for key, value in circle_figures(values_at).items()})
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog("bench.sdf_sharpness"), description=__doc__.split("\n\n")[0])
    parser.add_argument("--candidates", default="preset", help=f"comma-separated: preset, {', '.join(CANDIDATES)}")
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--seeds", default="0", help="comma-separated seeds")
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args(argv)
    gpu = create_gpu()
    print(describe(gpu.device))
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name in args.candidates.split(","):
            for seed in (int(s) for s in args.seeds.split(",")):
                row = measure(gpu, name, args.steps, Path(folder), seed)
                rows.append(row)
                print(json.dumps(row), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
