"""A signed distance field as the ground truth (--sdf SHAPE): one output, the signed distance to the
shape's boundary, negative inside, computed by app/truth/shapes/ on a grid that the kernels read as
an image target, bilinearly, so its derivatives come from the same forward mode. The grid follows
the domain; a point set is a shape only with normals (docs/architecture.md, 'Shapes and their
distances')."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UserError
from . import image_truth
from .mesh_truth import MESH_SUFFIXES
from .shapes import BUILTINS, SILHOUETTE_SUFFIXES, ShapeField, load_shape
from .shapes import builtin as builtin_shapes

SDF_RESOLUTION = 512
FILE_SUFFIXES = (".svg", *SILHOUETTE_SUFFIXES, ".csv")


@dataclass(frozen=True)
class SdfTruth:
    """A plan's distance-field truth: the spec and its grid's size."""

    spec: str
    width: int
    height: int


def is_file_spec(spec: str) -> bool:
    """A file (a 2D shape's, or a mesh's: app/truth/mesh_truth.py) rather than a built-in's name."""
    return Path(spec).suffix.lower() in FILE_SUFFIXES + MESH_SUFFIXES


def check_sdf(label: str, value: Any) -> str | None:
    """Config.sdf's check, cheap enough for every validation: a built-in spec's names, or a file
    of a known kind that exists. Its content is read (and refused, with its own line) when the
    run starts: load_field."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise UserError(
            f"{label} must be a built-in shape ({', '.join(BUILTINS)}, or A+B), a .svg, .png, .jpg or .csv file, "
            f"or a mesh ({', '.join(MESH_SUFFIXES)})"
        )
    spec = value.strip()
    if not is_file_spec(spec):
        builtin_shapes.parse(spec)  # a UserError naming the choices
        return spec
    if not Path(spec).is_file():
        raise UserError(f"{label}: no file {spec!r}")
    return spec


def check_normal_weight(normal_weight: float, sdf: str | None) -> None:
    """A one-line UserError where --normal-weight is asked of a run whose truth, `sdf` (None for
    another truth), has no normals: every shape has them but a silhouette (its outline is pixel
    edges)."""
    if normal_weight <= 0:
        return
    if sdf is None:
        raise UserError("--normal-weight needs an --sdf shape: it aligns the gradient with the boundary's normals")
    if Path(sdf).suffix.lower() in SILHOUETTE_SUFFIXES:
        raise UserError(
            f"--normal-weight needs a shape with normals (a built-in, an SVG or a CSV of x,y,nx,ny): "
            f"the silhouette {Path(sdf).name!r} has none"
        )


def sdf_truth(spec: str) -> SdfTruth:
    """The plan's record of a spec: a silhouette's size from its header, else the grid's."""
    if Path(spec).suffix.lower() in SILHOUETTE_SUFFIXES:
        try:
            _, width, height = image_truth.header_size(Path(spec).read_bytes())
        except (OSError, ValueError) as error:
            raise UserError(f"--sdf {spec!r}: not a readable PNG or JPEG ({error})") from None
        return SdfTruth(spec, width, height)
    return SdfTruth(spec, SDF_RESOLUTION, SDF_RESOLUTION)


def sdf_domain(spec: str, domain: list[float]) -> list[float]:
    """The domain a run of `spec` takes: a silhouette's aspect ratio's, else `domain`."""
    if Path(spec).suffix.lower() in SILHOUETTE_SUFFIXES:
        truth = sdf_truth(spec)
        return image_truth.aspect_domain(truth.width, truth.height)
    return list(domain)


@functools.lru_cache(maxsize=4)
def load_field(spec: str, domain: tuple[float, float, float, float]) -> ShapeField:
    """The shape over the domain (kept for the last few: the trainer, the evaluator and a rebuild
    ask again). A point set without normals is refused here."""
    field = load_shape(spec, domain, SDF_RESOLUTION)
    if field.kind == "points" and field.normals is None:
        raise UserError(f"--sdf {spec!r}: a point set needs normal columns (x, y, nx, ny) to give a signed distance")
    return field


def boundary_points(field: ShapeField) -> tuple[np.ndarray, np.ndarray]:
    """The boundary samples inside the domain and their outward normals, float32 (n, 2) each, for
    the normal alignment term (none for a silhouette): outside it the grid's truth is clamped."""
    if field.normals is None:
        return np.zeros((0, 2), np.float32), np.zeros((0, 2), np.float32)
    x0, x1, y0, y1 = field.domain
    x, y = field.points[:, 0], field.points[:, 1]
    inside = (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)
    return field.points[inside], field.normals[inside]


def boundary_words(field: ShapeField) -> np.ndarray:
    """What follows the grid in the kernels' truth buffer (shadergen/truth.py's boundary
    drawSample): the boundary points' count as a uint, 3 words of padding (16-byte rows), then
    x, y, nx, ny for each point. A shape with no normals has none (count 0)."""
    points, normals = boundary_points(field)
    header = np.array([len(points), 0, 0, 0], np.uint32).view(np.float32)
    return np.concatenate([header, np.hstack([points, normals]).astype(np.float32).ravel()])


def upload_sdf(gpu, spec: str, domain):
    """A GPU buffer of the grid, then the boundary points with their normals (boundary_words)."""
    field = load_field(spec, tuple(float(v) for v in domain))
    words = np.concatenate([field.distance.ravel().astype(np.float32), boundary_words(field)])
    buffer = gpu.buffer(words.nbytes)
    gpu.write(buffer, words)
    return buffer
