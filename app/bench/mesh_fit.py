"""Time to learn a mesh's signed distance (issue 41's bench): a generated closed mesh of about 100,000
triangles (a torus whose tube swells and narrows in bumps; or your --mesh), its truth prepared (timed
cold), then `--sdf` on the mesh preset trained against a clock that counts training alone, the surface
figures (IoU, Chamfer as a fraction of the diagonal) read every --every seconds, and when IoU and
Chamfer first both reached their targets. docs/benchmarks.md, 'Mesh distances'."""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..config import files as config_files
from ..config.config import validate
from ..files.mesh_export import ply_bytes
from ..gpu.device import describe
from ..gpu.gpu import create_gpu
from ..loop.session import Session
from ..truth import mesh_truth
from ..views.surface_tracker import SurfaceTracker
from . import options

WARMUP_STEPS = 20  # trained and thrown away before the clock starts: the first steps are start-up


def bumpy_torus(around: int = 250, tube: int = 200, big: float = 1.0, small: float = 0.35) -> tuple:
    """A closed torus of 2 x around x tube triangles, faces wound outward, whose tube's radius varies
    by +-25% in 7 x 5 bumps: curvature the truth grid and the network must both follow."""
    u = np.linspace(0, 2 * np.pi, around, endpoint=False)[:, None]
    v = np.linspace(0, 2 * np.pi, tube, endpoint=False)[None, :]
    r = small * (1 + 0.25 * np.sin(7 * u) * np.sin(5 * v))
    ring = big + r * np.cos(v)
    vertices = np.stack([ring * np.cos(u), ring * np.sin(u), r * np.sin(v)], axis=-1).reshape(-1, 3)
    i, j = np.meshgrid(np.arange(around), np.arange(tube), indexing="ij")
    a, b = i * tube + j, ((i + 1) % around) * tube + j
    c, d = ((i + 1) % around) * tube + (j + 1) % tube, i * tube + (j + 1) % tube
    faces = np.concatenate([np.stack([a, b, c], -1).reshape(-1, 3), np.stack([a, c, d], -1).reshape(-1, 3)])
    corners = vertices[faces]
    if np.einsum("ij,ij->i", corners[:, 0], np.cross(corners[:, 1], corners[:, 2])).sum() < 0:
        faces = faces[:, ::-1]  # outward: a positive signed volume
    return vertices, faces


def prepare(path: str, config) -> dict:
    """The mesh's truth made cold (read, fitted, the grid's exact distances, the surface samples),
    timed, with how far the grid is from the exact distance."""
    mesh_truth.load_mesh_field.cache_clear()
    box = tuple(float(v) for v in (*config.domain, *config.z_range))
    start = time.perf_counter()
    field = mesh_truth.load_mesh_field(path, box)
    seconds = time.perf_counter() - start
    return {
        "triangles": len(field.faces),
        "vertices": len(field.vertices),
        "prepare_seconds": seconds,
        "interpolation_error": mesh_truth.interpolation_error(field),
    }


def fit(gpu, config, seconds: float, every: float, side: int | None, iou: float, chamfer: float) -> dict:
    """Trains `config` for `seconds` of training clock, the surface figures every `every` seconds."""
    session = Session(gpu, config)
    session.eval_every = 1 << 30
    session.advance(WARMUP_STEPS)
    session.reset()
    tracker = SurfaceTracker(session.trainer, side)
    points, clock, reached, next_read = [], 0.0, None, every
    rate = None
    while clock < seconds:
        steps = max(1, int((next_read - clock) * rate)) if rate else 1
        start = time.perf_counter()
        session.advance(min(steps, session.chunk_size(1 << 62)))
        clock += time.perf_counter() - start  # advance() waits for its last command buffer
        rate = session.trainer.step / clock
        if clock >= next_read or clock >= seconds:
            row = tracker.measure(clock)
            points.append(row)
            print(
                f"{clock:7.2f} s  step {row['step']:>6}  IoU {row['iou'] or 0:.4f}  Chamfer "
                f"{row['chamfer'] if row['chamfer'] is not None else float('nan'):.2e}  normals "
                f"{row['normal_consistency'] or 0:.4f}",
                flush=True,
            )
            if reached is None and (row["iou"] or 0) >= iou and (row["chamfer"] or 1) <= chamfer:
                reached = clock
            next_read = clock + every
    plan = session.trainer.plan
    return {
        "device": describe(gpu.device),
        "network": plan.title,
        "gradient_path": plan.gradient_path,
        "matmul": plan.matmul,
        "batch_size": config.batch_size,
        "precision": config.precision,
        "steps": session.trainer.step,
        "seconds": clock,
        "samples_per_second": session.trainer.samples_seen / clock if clock else None,
        "lattice": tracker.evaluator.side,
        "seconds_to_target": reached,
        "targets": {"iou": iou, "chamfer": chamfer},
        "points": points,
    }


def main(argv=None) -> int:
    parser = options.parser("bench.mesh_fit", __doc__)
    parser.add_argument("--mesh", help="learn this mesh file instead of the generated bumpy torus")
    parser.add_argument("--seconds", type=float, default=5.0, help="training time (default 5)")
    parser.add_argument("--every", type=float, default=0.5, help="training seconds between readings (default 0.5)")
    parser.add_argument("--batch", type=int, help="samples a step (default: the mesh preset's)")
    parser.add_argument("--precision", choices=("float", "half"), default="float")
    parser.add_argument("--log2-size", type=int, help="log2 of a grid level's table entries (default: the preset's)")
    parser.add_argument("--hidden", type=lambda text: [int(w) for w in text.split(",")], help="e.g. 64,64")
    parser.add_argument("--side", type=int, help="the figures' lattice, points an axis (default: the app's)")
    parser.add_argument("--iou", type=float, default=0.99, help="the IoU to reach (default 0.99)")
    parser.add_argument("--chamfer", type=float, default=1e-3, help="the Chamfer to reach, of the diagonal")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        path = args.mesh
        if path is None:
            path = str(Path(folder) / "bumpy-torus.ply")
            Path(path).write_bytes(ply_bytes(*bumpy_torus(), comment="a generated bumpy torus"))
        config = config_files.load_preset(config_files.MESH_PRESET)
        config = validate(replace(config, sdf=path, dims=3, precision=args.precision))
        changes = {"batch_size": args.batch, "grid_log2_size": args.log2_size, "hidden": args.hidden}
        config = validate(replace(config, **{key: value for key, value in changes.items() if value is not None}))
        truth = prepare(path, config)
        print(
            f"mesh: {truth['triangles']:,} triangles, truth prepared in {truth['prepare_seconds']:.2f} s; grid error "
            f"near the surface p95 {truth['interpolation_error']['near_surface_p95']:.2e}, max "
            f"{truth['interpolation_error']['near_surface_max']:.2e} of the diagonal",
            flush=True,
        )
        result = truth | fit(
            create_gpu(args.device), config, args.seconds, args.every, args.side, args.iou, args.chamfer
        )
    reached = result["seconds_to_target"]
    print(
        f"{result['network']}, {result['precision']}, batch {result['batch_size']}, "
        f"{result['samples_per_second']:.3g} samples/s: IoU >= {args.iou:g} and Chamfer <= {args.chamfer:g} "
        + (f"after {reached:.2f} s" if reached is not None else "not reached")
        + f" of training; device {result['device']['adapter']}"
    )
    options.write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
