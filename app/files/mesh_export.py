"""--export-mesh: the zero level of a function of (x, y, z)'s first output as a triangle mesh, by
scikit-image's marching cubes (the mesh extra) on a lattice of N points an axis spanning the box
(app/views/volume.py), vertices in the box's units (a mesh truth's own units: its fit undone), faces
wound counter-clockwise seen from outside (f > 0); written as binary little-endian PLY or as OBJ."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import UserError
from ..train.trainer import Trainer
from ..truth.mesh_truth import load_mesh_field, unfit
from ..views.volume import Volume, VolumeEvaluator

MESH_SUFFIXES = (".ply", ".obj")
DEFAULT_RESOLUTION = 128
# 8 points an axis make the coarsest useful lattice; 512 already takes 0.5 GiB for its values and
# several times that inside marching cubes.
MIN_RESOLUTION, MAX_RESOLUTION = 8, 512


def check_resolution(resolution: int, option: str = "--mesh-resolution") -> None:
    if not MIN_RESOLUTION <= resolution <= MAX_RESOLUTION:
        raise UserError(
            f"{option} must be between {MIN_RESOLUTION} and {MAX_RESOLUTION} points an axis (got {resolution})"
        )


def check_mesh_path(text: str, option: str = "--export-mesh") -> None:
    if Path(text).suffix.lower() not in MESH_SUFFIXES:
        raise UserError(f"{option} must name a .ply or .obj file (got {text!r})")


def marching_cubes_function():
    try:
        from skimage.measure import marching_cubes
    except ImportError:
        raise UserError(
            "exporting a mesh needs scikit-image: pip install 'slang-visual-trainer[mesh]' (or pip install scikit-image)"
        ) from None
    return marching_cubes


def zero_level_mesh(volume: Volume) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (n, 3) float64 in the box's units, faces (m, 3) int64) of the learned values' zero
    level; a UserError where they do not cross zero. With f < 0 inside, scikit-image's default
    gradient direction winds the faces counter-clockwise seen from outside."""
    values = volume.learned
    finite = values[np.isfinite(values)]
    if not finite.size or finite.min() >= 0 or finite.max() < 0:
        low, high = (f"{finite.min():.4g}", f"{finite.max():.4g}") if finite.size else ("-", "-")
        raise UserError(
            f"the network's first output has no zero level in the box: it runs from {low} to {high} "
            f"on the {volume.side}^3 lattice"
        )
    marching_cubes = marching_cubes_function()
    vertices, faces, _, _ = marching_cubes(
        np.nan_to_num(values, nan=1.0), 0.0, spacing=tuple(volume.spacing), allow_degenerate=False
    )
    return vertices.astype(np.float64) + volume.box[:, 0], faces.astype(np.int64)


def ply_bytes(vertices: np.ndarray, faces: np.ndarray, comment: str = "the zero level of a learned field") -> bytes:
    """Binary little-endian PLY: float vertices, faces as a uchar count and int indices."""
    header = (
        f"ply\nformat binary_little_endian 1.0\ncomment slang visual trainer: {comment}\n"
        f"element vertex {len(vertices)}\nproperty float x\nproperty float y\nproperty float z\n"
        f"element face {len(faces)}\nproperty list uchar int vertex_indices\nend_header\n"
    )
    rows = np.empty(len(faces), dtype=np.dtype([("count", "u1"), ("indices", "<i4", 3)]))
    rows["count"], rows["indices"] = 3, faces
    return header.encode("ascii") + vertices.astype("<f4").tobytes() + rows.tobytes()


def obj_bytes(vertices: np.ndarray, faces: np.ndarray) -> bytes:
    """Wavefront OBJ: `v x y z` lines, then `f a b c` lines counting vertices from 1."""
    lines = ["# slang visual trainer: the zero level of a learned field"]
    lines += [f"v {x:.7g} {y:.7g} {z:.7g}" for x, y, z in vertices.tolist()]
    lines += [f"f {a} {b} {c}" for a, b, c in (faces + 1).tolist()]
    return ("\n".join(lines) + "\n").encode("ascii")


def mesh_bytes(path: Path, vertices: np.ndarray, faces: np.ndarray) -> bytes:
    return ply_bytes(vertices, faces) if path.suffix.lower() == ".ply" else obj_bytes(vertices, faces)


def export_mesh(trainer: Trainer, path: Path, resolution: int = DEFAULT_RESOLUTION) -> tuple[bytes, int, int]:
    """The file's bytes for `path` (.ply or .obj) of the trainer's current network, and its vertex
    and face counts; a UserError where there is no zero level or no scikit-image."""
    if trainer.plan.point_dim != 3:
        raise UserError("--export-mesh is for functions of (x, y, z): use --dims 3")
    marching_cubes_function()  # missing: said before the lattice is evaluated
    volume = VolumeEvaluator(trainer, resolution).evaluate()
    vertices, faces = zero_level_mesh(volume)
    if trainer.plan.mesh is not None:
        vertices = unfit(vertices, load_mesh_field(trainer.plan.mesh.spec, tuple(float(v) for v in volume.box.ravel())))
    return mesh_bytes(path, vertices, faces), len(vertices), len(faces)
