"""Shapes for signed distance fields (--sdf SHAPE): the truth is the signed distance to a 2D shape's
boundary, NEGATIVE INSIDE, in the domain's units; pure numpy. A built-in (builtin.py) or a file by
its extension (.svg, a .png/.jpg silhouette, a .csv of points). load_shape gives the distance on a
grid laid out as image targets are, shape_distance at any points (docs/architecture.md, 'Shapes and
their distances'; the files: docs/formats.md, 'Input files')."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...errors import UserError
from . import builtin
from .grid import bilinear, centres, check_crossing, check_domain, check_resolution
from .points import check_points_in_domain, points_distance, read_points
from .segments import Outline
from .silhouette import load_silhouette
from .svg import load_svg

BUILTINS: tuple[str, ...] = builtin.BUILTINS
DEFAULT_DOMAIN = (-1.0, 1.0, -1.0, 1.0)
SILHOUETTE_SUFFIXES = (".png", ".jpg", ".jpeg")


@dataclass(frozen=True)
class ShapeField:
    """A shape's signed distance on a grid over `domain`, and its boundary samples."""

    name: str  # "circle", "circle+box", or the file's name
    kind: str  # "builtin", "svg", "silhouette" or "points"
    distance: np.ndarray  # float32 (H, W) at pixel centres, row 0 at the top
    points: np.ndarray | None  # float32 (n, 2) boundary samples
    normals: np.ndarray | None  # float32 (n, 2) outward unit normals, where known
    domain: tuple[float, float, float, float] = DEFAULT_DOMAIN
    outline: Outline | None = field(default=None, repr=False, compare=False)  # an SVG's, for exact distances


def _kind(spec: str) -> str:
    suffix = Path(spec).suffix.lower()
    if suffix == ".svg":
        return "svg"
    if suffix in SILHOUETTE_SUFFIXES:
        return "silhouette"
    return "points" if suffix == ".csv" else "builtin"


def _float32(values: np.ndarray | None) -> np.ndarray | None:
    return None if values is None else np.ascontiguousarray(values, np.float32)


def load_shape(spec: str, domain: tuple[float, float, float, float], resolution: int = 512) -> ShapeField:
    """The ShapeField of a spec over the domain; a UserError of one line for any bad spec, file or
    domain, or a shape with no boundary inside the domain."""
    if not isinstance(spec, str) or not spec.strip():
        raise UserError(f"a shape must be a built-in ({', '.join(BUILTINS)}) or a .svg, .png, .jpg or .csv file")
    spec, domain, resolution = spec.strip(), check_domain(domain), check_resolution(resolution)
    kind, name = _kind(spec), Path(spec).name
    xy = centres(domain, resolution, resolution)
    outline = normals = None
    if kind == "builtin":
        names = builtin.parse(spec)
        name, distance = "+".join(names), builtin.distance(names, xy)
        points, normals = builtin.boundary(names)
    elif kind == "svg":
        outline, normals = load_svg(spec, domain)
        distance = outline.signed_distance_grid(xy[:resolution, 0], xy[::resolution, 1])
        points, normals = outline.samples(normals, spacing=min(domain[1] - domain[0], domain[3] - domain[2]) / 1024)
    elif kind == "silhouette":
        grid, points = load_silhouette(spec, domain)
        return ShapeField(name, kind, grid, points, None, domain)
    else:
        points, normals = read_points(spec)
        check_points_in_domain(repr(spec), points, domain)
        distance = points_distance(points, normals, xy)
    grid = distance.reshape(resolution, resolution).astype(np.float32)
    if kind != "points" or normals is not None:
        check_crossing(repr(spec), grid, domain)
    return ShapeField(name, kind, grid, _float32(points), _float32(normals), domain, outline)


def shape_distance(spec_or_field: str | ShapeField, xy: np.ndarray) -> np.ndarray:
    """float64 signed distances (n,) at points xy (n, 2). A spec string that is not a built-in is
    loaded over DEFAULT_DOMAIN at the default resolution first (an SVG's placement and a grid's
    extent depend on the domain: pass the ShapeField to keep another)."""
    xy = np.asarray(xy, np.float64)
    if xy.ndim != 2 or xy.shape[1] != 2:
        raise ValueError(f"shape_distance takes points (n, 2), not an array of shape {xy.shape}")
    shape = spec_or_field
    if isinstance(shape, str):
        if _kind(shape.strip()) == "builtin":
            return builtin.distance(builtin.parse(shape.strip()), xy)
        shape = load_shape(shape, DEFAULT_DOMAIN)
    if shape.kind == "builtin":
        return builtin.distance(builtin.parse(shape.name), xy)
    if shape.kind == "svg":
        return shape.outline.signed_distance(xy)
    return bilinear(shape.distance, shape.domain, xy)
