"""A triangle mesh's signed distance as the truth of (x, y, z) (--sdf mesh.obj|.off|.stl|.ply): the file
read, checked and fitted into the box by one scale and shift; its exact distance, signed by the
generalized winding number, at the vertices of a grid the kernels read trilinearly
(shaders/truth/mesh_truth.slang), exact near the surface; surface samples that every other training
sample starts from (docs/guide/space.md, 'Meshes')."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import UserError

MESH_SUFFIXES = (".obj", ".off", ".stl", ".ply")
MAX_MESH_BYTES = 256 << 20  # a file larger than this is refused before it is read
MAX_TRIANGLES = 2_000_000
MESH_RESOLUTION = 160  # the truth grid's vertices along each axis of the box
# The grid is exact everywhere at COARSE_RESOLUTION, and at MESH_RESOLUTION only within BAND_CELLS of
# the coarse grid's cells of the surface (elsewhere read from the coarse one): the fine grid's accuracy
# where the surface is, for a fraction of its distances.
COARSE_RESOLUTION = 64
BAND_CELLS = 1.5
FIT_SHARE = 0.8  # the fitted mesh spans this share of the box along its tightest axis
SURFACE_SAMPLES = 1 << 16  # points on the surface, drawn by area, that near-surface samples start from
SURFACE_SEED = 0x5EED
SURFACE_BAND = 0.02  # near-surface samples move up to this share of the box's width along the normal
MIN_VOLUME_SHARE = 1e-6  # of its bounding box's: less is a mesh with no volume (flat, or no closed part)


@dataclass(frozen=True)
class MeshTruth:
    """A plan's mesh truth: the file and the grid's vertices along each axis."""

    spec: str
    resolution: int


@dataclass(frozen=True)
class MeshField:
    """The fitted mesh and its truth over the box [x0, x1, y0, y1, z0, z1]."""

    vertices: np.ndarray  # (n, 3) float64, in the box's units (after the fit)
    faces: np.ndarray  # (m, 3) int64
    scale: float  # box units per mesh unit: fitted = mesh * scale + shift
    shift: np.ndarray  # (3,)
    box: tuple[float, ...]
    distance: np.ndarray  # (R, R, R) float32, [k along z, j along y, i along x] at the grid's vertices
    surface: np.ndarray  # (SURFACE_SAMPLES, 3) float32 points on the surface
    normals: np.ndarray  # (SURFACE_SAMPLES, 3) float32, their faces' outward normals
    seconds: float = 0.0  # reading, fitting and the truth's grid and samples took this long


def is_mesh_spec(spec: str | None) -> bool:
    return spec is not None and Path(spec).suffix.lower() in MESH_SUFFIXES


def _igl():
    try:
        import igl
    except ImportError:
        raise UserError(
            "a mesh's distance needs libigl: pip install 'slang-visual-trainer[mesh]' (or pip install libigl)"
        ) from None
    return igl


def read_mesh(path: str) -> tuple[np.ndarray, np.ndarray]:
    """The vertices (n, 3) and triangles (m, 3) of a mesh file, or a one-line UserError naming what
    is wrong with it: missing, too large, not a mesh, empty, NaN vertices, faces past the vertices,
    no volume."""
    name = repr(Path(path).name)
    try:
        size = Path(path).stat().st_size
    except OSError as error:
        raise UserError(f"--sdf {name}: cannot read it ({error.strerror})") from None
    if size > MAX_MESH_BYTES:
        raise UserError(f"--sdf {name}: {size:,} bytes is larger than the {MAX_MESH_BYTES >> 20} MiB a mesh may be")
    igl = _igl()
    with _stderr_kept() as said:  # libigl's readers print their complaint to stderr: it goes in the line
        try:
            vertices, faces = igl.read_triangle_mesh(str(path))
        except Exception:  # RuntimeError or ValueError, on a file it can't parse
            vertices = faces = None
    if vertices is None:
        reason = said[0].removeprefix("Error: ").strip() if said else "unknown format"
        raise UserError(f"--sdf {name}: not a mesh it can read ({reason[:120]})")
    vertices, faces = np.asarray(vertices, np.float64), np.asarray(faces, np.int64)
    check_mesh(vertices, faces, name)
    return vertices, faces


@contextlib.contextmanager
def _stderr_kept():
    """Standard error at the file-descriptor level (where C++ writes) kept in a file while the block
    runs; yields a list that holds its non-empty lines afterwards."""
    said: list[str] = []
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as kept:
        os.dup2(kept.fileno(), 2)
        try:
            yield said
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            kept.seek(0)
            said += [line for line in kept.read().decode(errors="replace").splitlines() if line.strip()]


def check_mesh(vertices: np.ndarray, faces: np.ndarray, name: str) -> None:
    if faces.size == 0 or vertices.size == 0:
        raise UserError(f"--sdf {name}: the mesh has no triangles")
    if vertices.ndim != 2 or vertices.shape[1] != 3 or faces.ndim != 2 or faces.shape[1] != 3:
        raise UserError(f"--sdf {name}: a mesh of triangles in 3D is needed (got faces of {faces.shape[-1]} corners)")
    if len(faces) > MAX_TRIANGLES:
        raise UserError(f"--sdf {name}: {len(faces):,} triangles, more than the {MAX_TRIANGLES:,} a mesh may have")
    if not np.all(np.isfinite(vertices)):
        raise UserError(f"--sdf {name}: vertex {int(np.argwhere(~np.isfinite(vertices))[0, 0])} is not finite")
    if faces.min() < 0 or faces.max() >= len(vertices):
        raise UserError(f"--sdf {name}: a face indexes vertex {int(faces.max())}, past its {len(vertices):,} vertices")
    corners = vertices[faces]
    volume = abs(np.einsum("ij,ij->i", corners[:, 0], np.cross(corners[:, 1], corners[:, 2])).sum()) / 6.0
    extent = np.ptp(vertices, axis=0)
    if volume <= MIN_VOLUME_SHARE * float(np.prod(np.maximum(extent, 1e-300))) or np.min(extent) <= 0:
        raise UserError(f"--sdf {name}: the mesh encloses no volume (flat, or open all round)")


def fit(vertices: np.ndarray, box) -> tuple[float, np.ndarray]:
    """One scale and shift that centre the mesh's bounding box in the box, its extent FIT_SHARE of
    the box's along the tightest axis."""
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    box_low, box_high = np.array(box[0::2], np.float64), np.array(box[1::2], np.float64)
    scale = FIT_SHARE * float(np.min((box_high - box_low) / np.maximum(high - low, 1e-300)))
    shift = (box_low + box_high) / 2 - scale * (low + high) / 2
    return scale, shift


def signed_distance(points: np.ndarray, vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """The exact distance to the nearest triangle, negative where the fast winding number says
    inside. libigl's own value is (1 - 2|w|) times the distance with this sign type, so the
    distance is taken from the closest point instead (docs/benchmarks.md, 'Mesh distances')."""
    igl = _igl()
    signed, _, closest, _ = igl.signed_distance(
        np.ascontiguousarray(points, np.float64), vertices, faces, igl.SIGNED_DISTANCE_TYPE_FAST_WINDING_NUMBER
    )
    return np.where(signed < 0, -1.0, 1.0) * np.linalg.norm(points - closest, axis=1)


def grid_vertices(box, resolution: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The truth grid's coordinates along x, y and z: `resolution` each, from the box's low to its high edge."""
    return tuple(np.linspace(box[2 * a], box[2 * a + 1], resolution) for a in range(3))


def grid_points(box, resolution: int) -> np.ndarray:
    """The grid's vertices (resolution^3, 3), x fastest, then y, then z."""
    xs, ys, zs = grid_vertices(box, resolution)
    z, y, x = np.meshgrid(zs, ys, xs, indexing="ij")
    return np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)


def grid_distance(box, resolution: int, vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """The signed distance at the grid's vertices, (R, R, R) [z, y, x]: exact within BAND_CELLS coarse
    cells of the surface, read trilinearly from an exact COARSE_RESOLUTION grid further out (all
    exact for a grid no finer than that)."""
    if resolution <= COARSE_RESOLUTION:
        points = grid_points(box, resolution)
        return signed_distance(points, vertices, faces).reshape(resolution, resolution, resolution)
    distance = upsample(grid_distance(box, COARSE_RESOLUTION, vertices, faces), resolution)
    cell = max(box[2 * a + 1] - box[2 * a] for a in range(3)) / (COARSE_RESOLUTION - 1)
    band = np.nonzero(np.abs(distance) < BAND_CELLS * cell)
    axes = grid_vertices(box, resolution)
    points = np.stack([axes[0][band[2]], axes[1][band[1]], axes[2][band[0]]], axis=1)
    distance[band] = signed_distance(points, vertices, faces)
    return distance


def upsample(grid: np.ndarray, resolution: int) -> np.ndarray:
    """A grid's trilinear reading at the vertices of a finer grid over the same box (trilinear()
    there), one axis at a time: a linear map with two weights a row."""
    coarse = grid.shape[0]
    u = np.linspace(0.0, coarse - 1, resolution)
    lower = np.minimum(np.floor(u).astype(np.int64), coarse - 2)
    weights = np.zeros((resolution, coarse))
    weights[np.arange(resolution), lower] = 1 - (u - lower)
    weights[np.arange(resolution), lower + 1] = u - lower
    fine = np.einsum("ai,ijk->ajk", weights, grid.astype(np.float64))
    fine = np.einsum("bj,ajk->abk", weights, fine)
    return np.einsum("ck,abk->abc", weights, fine)


def surface_samples(vertices: np.ndarray, faces: np.ndarray, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`count` points on the surface, faces drawn by area and points uniform on each, with their
    faces' unit normals (outward for a mesh oriented as the winding number takes it)."""
    corners = vertices[faces]
    cross = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    area = np.linalg.norm(cross, axis=1)
    rng = np.random.default_rng(seed)
    chosen = rng.choice(len(faces), size=count, p=area / area.sum())
    u, v = rng.random(count), rng.random(count)
    flip = u + v > 1
    u[flip], v[flip] = 1 - u[flip], 1 - v[flip]
    a, b, c = corners[chosen, 0], corners[chosen, 1], corners[chosen, 2]
    points = a + u[:, None] * (b - a) + v[:, None] * (c - a)
    normals = cross[chosen] / np.maximum(area[chosen], 1e-300)[:, None]
    return points.astype(np.float32), normals.astype(np.float32)


@functools.lru_cache(maxsize=2)
def load_mesh_field(spec: str, box: tuple[float, ...], resolution: int = MESH_RESOLUTION) -> MeshField:
    """The mesh at `spec`, fitted into `box`, its distance at the grid's vertices and its surface
    samples (kept for the last two: the trainer, the evaluator and a rebuild ask again)."""
    start = time.perf_counter()
    vertices, faces = read_mesh(spec)
    scale, shift = fit(vertices, box)
    fitted = vertices * scale + shift
    distance = grid_distance(box, resolution, fitted, faces)
    surface, normals = surface_samples(fitted, faces, SURFACE_SAMPLES, SURFACE_SEED)
    seconds = time.perf_counter() - start
    return MeshField(fitted, faces, scale, shift, tuple(box), distance.astype(np.float32), surface, normals, seconds)


def unfit(points: np.ndarray, field: MeshField) -> np.ndarray:
    """Points of the box back in the mesh file's units (the fit undone)."""
    return (points - field.shift) / field.scale


def trilinear(distance: np.ndarray, box, points: np.ndarray) -> np.ndarray:
    """The grid's trilinear interpolation at points (n, 3), as the kernels read it (the numpy twin of
    shaders/truth/mesh_truth.slang), clamped at the box's faces."""
    resolution = distance.shape[0]
    low, high = np.array(box[0::2]), np.array(box[1::2])
    u = np.clip((points - low) / (high - low), 0.0, 1.0) * (resolution - 1)
    lower = np.minimum(np.floor(u).astype(np.int64), resolution - 2)
    t = u - lower
    i, j, k = lower[:, 0], lower[:, 1], lower[:, 2]
    value = np.zeros(len(points))
    for dz in (0, 1):
        for dy in (0, 1):
            for dx in (0, 1):
                weight = (
                    (t[:, 0] if dx else 1 - t[:, 0])
                    * (t[:, 1] if dy else 1 - t[:, 1])
                    * (t[:, 2] if dz else 1 - t[:, 2])
                )
                value += weight * distance[k + dz, j + dy, i + dx]
    return value


def mesh_fit(field: MeshField) -> dict:
    """How the mesh sits in the box, as summary.json and network.json record it: a point of the box
    is (a point of the mesh file) x scale + shift."""
    return {"scale": float(field.scale), "shift": [float(v) for v in field.shift]}


def mesh_entry(spec: str, box) -> dict:
    """summary.json's "mesh": the file, its size, the fit, the truth's grid and how far its trilinear
    reading is from the exact distance (interpolation_error), and the seconds its preparation took."""
    field = load_mesh_field(spec, tuple(float(v) for v in box))
    return {
        "file": spec,
        "vertices": len(field.vertices),
        "triangles": len(field.faces),
        "fit": mesh_fit(field),
        "truth_grid": field.distance.shape[0],
        "interpolation_error": interpolation_error(field),
        "prepare_seconds": field.seconds,
    }


def mesh_words(field: MeshField) -> np.ndarray:
    """The kernels' truth buffer: the grid (R^3 floats, x fastest), the surface samples' count as a
    uint and 3 words of padding, then x, y, z, nx, ny, nz of each sample."""
    header = np.array([len(field.surface), 0, 0, 0], np.uint32).view(np.float32)
    rows = np.hstack([field.surface, field.normals]).astype(np.float32).ravel()
    return np.concatenate([field.distance.ravel(), header, rows])


def upload_mesh(gpu, spec: str, box):
    words = mesh_words(load_mesh_field(spec, tuple(float(v) for v in box)))
    buffer = gpu.buffer(words.nbytes)
    gpu.write(buffer, words)
    return buffer


def interpolation_error(field: MeshField, count: int = 20000, seed: int = 1) -> dict[str, float]:
    """How far the trilinear grid is from the exact distance: at points uniform in the box and at
    points within two grid cells of the surface, the 95th percentile and the largest |error|, as
    fractions of the box's diagonal (the Chamfer target's unit)."""
    rng = np.random.default_rng(seed)
    low, high = np.array(field.box[0::2]), np.array(field.box[1::2])
    diagonal = float(np.linalg.norm(high - low))
    cell = float(np.max(high - low)) / (field.distance.shape[0] - 1)
    uniform = low + rng.random((count, 3)) * (high - low)
    picks = rng.integers(0, len(field.surface), count)
    near = field.surface[picks] + field.normals[picks] * rng.uniform(-2 * cell, 2 * cell, (count, 1))
    near = np.clip(near, low, high)
    figures = {}
    for name, points in (("box", uniform), ("near_surface", near)):
        error = np.abs(
            trilinear(field.distance, field.box, points) - signed_distance(points, field.vertices, field.faces)
        )
        figures[f"{name}_p95"] = float(np.percentile(error, 95)) / diagonal
        figures[f"{name}_max"] = float(error.max()) / diagonal
    return figures
