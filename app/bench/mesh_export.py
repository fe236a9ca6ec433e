"""What --export-mesh and the surface metrics cost, per lattice side N: the learned field on N^3
points on the GPU (evaluateVolume) against numpy's float64 forward pass of network.json; marching
cubes by scikit-image and by libigl; the PLY's bytes; and the surface metrics' lattice (with gradients
and the truth) and their numpy part. docs/benchmarks.md, 'Mesh export and surface metrics'."""

from __future__ import annotations

import argparse
import io
import time

import numpy as np

from ..config.config import Config, validate
from ..files.mesh_export import ply_bytes, zero_level_mesh
from ..files.network_io import export_network, forward, tables_npy
from ..gpu.device import describe
from ..gpu.gpu import create_gpu
from ..train.trainer import Trainer
from ..views.surface_metrics import surface_metrics
from ..views.surface_tracker import SurfaceTracker
from ..views.volume import SLOPES, TRUTH, VolumeEvaluator
from .tools import prog

SPHERE = "sqrt(x*x + y*y + z*z) - 0.5"
NETWORKS = {  # name: config fields (the sphere's distance, --dims 3)
    "fourier-64x2": dict(encoding="fourier", hidden=[64, 64], activation="softplus", eikonal=0.1),
    "hash16-64": dict(encoding="hashgrid", hidden=[64], activation="softplus"),
}
NUMPY_CHUNK = 1 << 18  # points a numpy forward pass takes at once


def _best(repeats: int, run, *args) -> tuple[float, object]:
    """The shortest of `repeats` timed calls of run(*args), and the last call's result."""
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run(*args)
        best = min(best, time.perf_counter() - start)
    return best, result


def _numpy_field(network: dict, tables: np.ndarray | None, side: int) -> np.ndarray:
    t = np.linspace(-1.0, 1.0, side)
    x, y, z = (axis.ravel() for axis in np.meshgrid(t, t, t, indexing="ij"))
    out = np.empty(x.size)
    for start in range(0, x.size, NUMPY_CHUNK):
        part = slice(start, start + NUMPY_CHUNK)
        out[part] = forward(network, x[part], y[part], tables, z=z[part])[:, 0]
    return out.reshape(side, side, side)


def _igl_seconds(values: np.ndarray, box: np.ndarray, repeats: int) -> float | None:
    try:
        import igl
    except ImportError:
        return None
    side = values.shape[0]
    axes = [np.linspace(low, high, side) for low, high in box]
    # libigl's corner (x, y, z) is S[x + y * nx + z * nx * ny]: x fastest
    grid = np.stack([axis.ravel(order="F") for axis in np.meshgrid(*axes, indexing="ij")], axis=1)
    flat = values.astype(np.float64).ravel(order="F")
    return _best(repeats, igl.marching_cubes, flat, grid, side, side, side, 0.0)[0]


def bench_network(gpu, name: str, sides: list[int], numpy_max: int, steps: int, repeats: int) -> list[dict]:
    config = validate(Config(dims=3, targets=[SPHERE], batch_size=1 << 14, **NETWORKS[name]))
    trainer = Trainer(gpu, config)
    trainer.train(steps)  # a sphere-like zero level for the marching to find
    params = trainer.parameters()
    network = export_network(trainer.plan, config, params, None)
    tables = np.load(io.BytesIO(tables_npy(trainer.plan, params))) if trainer.plan.grid is not None else None
    rows = []
    for side in sides:
        evaluator = VolumeEvaluator(trainer, side)
        evaluator.evaluate()  # the pipeline built
        gpu_s, volume = _best(repeats, evaluator.evaluate)
        numpy_s = _best(1, _numpy_field, network, tables, side)[0] if side <= numpy_max else None
        if volume.learned.min() >= 0 or volume.learned.max() < 0:
            print(f"{name:>14} N={side:<4} field: GPU {gpu_s * 1e3:9.2f} ms; no zero level: train longer (--steps)")
            continue
        marching_s, (vertices, faces) = _best(repeats, zero_level_mesh, volume)
        write_s = _best(repeats, ply_bytes, vertices, faces)[0]
        row = dict(network=name, side=side, gpu_s=gpu_s, numpy_s=numpy_s, skimage_s=marching_s)
        row.update(igl_s=_igl_seconds(volume.learned, volume.box, repeats), ply_s=write_s, faces=len(faces))
        rows.append(row)
        numpy_ms = "-" if numpy_s is None else f"{numpy_s * 1e3:.0f} ms"
        igl_ms = "-" if row["igl_s"] is None else f"{row['igl_s'] * 1e3:.1f} ms"
        print(
            f"{name:>14} N={side:<4} field: GPU {gpu_s * 1e3:9.2f} ms, numpy {numpy_ms:>9}; marching cubes: "
            f"scikit-image {marching_s * 1e3:8.1f} ms, libigl {igl_ms:>9}; PLY {write_s * 1e3:6.1f} ms; "
            f"{len(faces):,} faces",
            flush=True,
        )
    for side in (32, 64):  # the surface metrics' lattices (software, GPU)
        tracker = SurfaceTracker(trainer, side)
        full = VolumeEvaluator(trainer, side, SLOPES | TRUTH)
        full.evaluate()
        lattice_s, volume = _best(repeats, full.evaluate)
        metrics_s = _best(repeats, surface_metrics, volume, tracker.truth_surface(volume))[0]
        rows.append(dict(network=name, metrics_side=side, lattice_s=lattice_s, metrics_s=metrics_s))
        print(
            f"{name:>14} metrics at {side}^3: lattice with gradients and truth {lattice_s * 1e3:.2f} ms, "
            f"numpy figures {metrics_s * 1e3:.1f} ms",
            flush=True,
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog("bench.mesh_export"), description=__doc__.split("\n\n")[0])
    parser.add_argument("--sides", default="64,128,256,512", help="lattice sides N (default 64,128,256,512)")
    parser.add_argument("--numpy-max", type=int, default=128, help="numpy's forward pass up to this N (default 128)")
    parser.add_argument("--networks", default=",".join(NETWORKS), help=f"of {', '.join(NETWORKS)}")
    parser.add_argument("--steps", type=int, default=300, help="training steps before measuring (default 300)")
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats, the best kept (default 3)")
    parser.add_argument("--device", default="auto")
    args = parser.parse_args(argv)
    gpu = create_gpu(args.device)
    print(f"device: {describe(gpu.device)}")
    sides = [int(side) for side in args.sides.split(",")]
    for name in args.networks.split(","):
        bench_network(gpu, name, sides, args.numpy_max, args.steps, args.repeats)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
