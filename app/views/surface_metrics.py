"""How close a learned signed distance of (x, y, z) is to the truth, on a lattice (volume.py): IoU of
the insides (f < 0), the eikonal error mean | |grad f| - 1 | near the surface and over the box, and
between the two zero levels the Chamfer distance (a fraction of the box's diagonal) and the normal
consistency, from the lattice's zero crossings (marching cubes' vertices) and a mesh's own surface
samples, their distances to the other surface's triangles (docs/guide/space.md, 'How close')."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..truth.mesh_truth import MeshTruth, load_mesh_field
from .volume import Volume

BAND_SHARE = 0.1  # the eikonal error's band: |truth| below this share of the box's diagonal
BRUTE_CHUNK = 1 << 22  # pairs a chunk of the brute-force nearest-point search holds


@dataclass
class Surface:
    """Points on a zero level, with unit normals pointing toward increasing f."""

    points: np.ndarray  # (n, 3) float64
    normals: np.ndarray  # (n, 3) float64
    triangles: tuple[np.ndarray, np.ndarray] | None = None  # (vertices, faces) the points lie on, if known


def crossings(values: np.ndarray, slopes: np.ndarray | None, box: np.ndarray) -> Surface:
    """Where each edge of the lattice between an inside (f < 0) and an outside point crosses zero,
    by linear interpolation (marching cubes places its vertices there); the normal is the gradient
    interpolated alike, or the lattice's central differences without `slopes`."""
    values = values.astype(np.float64)
    spacing = (box[:, 1] - box[:, 0]) / (np.array(values.shape) - 1)
    if slopes is None:
        slopes = np.stack(np.gradient(values, *spacing), axis=-1)
    inside = values < 0
    points, normals = [], []
    for axis in range(3):
        low = [slice(None)] * 3
        high = [slice(None)] * 3
        low[axis], high[axis] = slice(None, -1), slice(1, None)
        low, high = tuple(low), tuple(high)
        cut = np.nonzero(inside[low] != inside[high])
        v0, v1 = values[low][cut], values[high][cut]
        t = v0 / (v0 - v1)
        index = np.stack(cut, axis=-1).astype(np.float64)
        index[:, axis] += t
        points.append(box[:, 0] + index * spacing)
        g0, g1 = slopes[low][cut].astype(np.float64), slopes[high][cut].astype(np.float64)
        normals.append(g0 + t[:, None] * (g1 - g0))
    points, normals = np.concatenate(points), np.concatenate(normals)
    length = np.linalg.norm(normals, axis=1, keepdims=True)
    return Surface(points, normals / np.where(length > 0, length, 1.0))


def lattice_surface(values: np.ndarray, slopes: np.ndarray | None, box: np.ndarray) -> Surface:
    """crossings(), with the zero level's triangles by scikit-image's marching cubes where it is
    installed (their vertices are those crossings), so that distances to it are to the surface."""
    surface = crossings(values, slopes, box)
    try:
        from skimage.measure import marching_cubes
    except ImportError:
        return surface
    if not len(surface.points):
        return surface
    spacing = (box[:, 1] - box[:, 0]) / (np.array(values.shape) - 1)
    vertices, faces, _, _ = marching_cubes(np.nan_to_num(values, nan=1.0), 0.0, spacing=tuple(spacing))
    surface.triangles = (vertices.astype(np.float64) + box[:, 0], faces.astype(np.int64))
    return surface


def distance_to(points: np.ndarray, surface: Surface, to_nearest: np.ndarray | None = None) -> np.ndarray:
    """Each point's distance to the surface: to its triangles (libigl's AABB tree) where they are
    known, else to the nearest of its points (`to_nearest`, where nearest() gave it already), a
    floor of about half their spacing."""
    if surface.triangles is not None:
        try:
            import igl
        except ImportError:
            igl = None
        if igl is not None:
            vertices, faces = surface.triangles
            squared, _, _ = igl.point_mesh_squared_distance(np.ascontiguousarray(points, np.float64), vertices, faces)
            return np.sqrt(squared)
    return nearest(points, surface.points)[0] if to_nearest is None else to_nearest


def nearest(points: np.ndarray, others: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each point, the distance to the nearest of `others` and its index: scipy's k-d tree
    where scipy is installed (the mesh extra brings it), else a brute-force search in chunks."""
    try:
        from scipy.spatial import cKDTree
    except ImportError:
        return nearest_brute_force(points, others)
    distance, index = cKDTree(others).query(points)
    return distance, index


def nearest_brute_force(points: np.ndarray, others: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    distance, index = np.empty(len(points)), np.empty(len(points), np.int64)
    squares = np.einsum("ij,ij->i", others, others)
    rows = max(1, BRUTE_CHUNK // max(len(others), 1))
    for start in range(0, len(points), rows):
        chunk = points[start : start + rows]
        # |a - b|^2 = |a|^2 + |b|^2 - 2 a.b, in float64: the products run as one matrix product
        d2 = np.einsum("ij,ij->i", chunk, chunk)[:, None] + squares[None, :] - 2.0 * chunk @ others.T
        best = np.argmin(d2, axis=1)
        index[start : start + rows] = best
        distance[start : start + rows] = np.linalg.norm(chunk - others[best], axis=1)
    return distance, index


def chamfer_and_normals(learned: Surface, truth: Surface) -> tuple[float | None, float | None]:
    """The symmetric Chamfer distance (the mean of both ways' mean distance to the other surface:
    distance_to) and the normal consistency (the mean |n . n'| at the nearest points, both ways);
    None for both where either surface has no point."""
    if not len(learned.points) or not len(truth.points):
        return None, None
    to_truth, at_truth = nearest(learned.points, truth.points)
    to_learned, at_learned = nearest(truth.points, learned.points)
    to_truth = distance_to(learned.points, truth, to_truth)
    to_learned = distance_to(truth.points, learned, to_learned)
    chamfer = 0.5 * (float(np.mean(to_truth)) + float(np.mean(to_learned)))
    one_way = np.abs(np.einsum("ij,ij->i", learned.normals, truth.normals[at_truth]))
    other_way = np.abs(np.einsum("ij,ij->i", truth.normals, learned.normals[at_learned]))
    return chamfer, 0.5 * (float(np.mean(one_way)) + float(np.mean(other_way)))


def iou(learned: np.ndarray, truth: np.ndarray) -> float | None:
    """Intersection over union of the insides (f < 0) at the lattice's points; None if both are empty."""
    inside, inside_truth = learned < 0, truth < 0
    union = int(np.count_nonzero(inside | inside_truth))
    return int(np.count_nonzero(inside & inside_truth)) / union if union else None


def eikonal_error(slopes: np.ndarray, where: np.ndarray | None = None) -> float | None:
    """The mean of | |grad f| - 1 | at the lattice's points (those `where` is true); None for none."""
    lengths = np.linalg.norm(slopes.astype(np.float64), axis=-1)
    chosen = lengths if where is None else lengths[where]
    return float(np.mean(np.abs(chosen - 1.0))) if chosen.size else None


def diagonal(box: np.ndarray) -> float:
    return float(np.linalg.norm(box[:, 1] - box[:, 0]))


def truth_surface(volume: Volume, mesh: MeshTruth | None = None) -> Surface:
    """The truth's surface the Chamfer distance and normal consistency compare with: a mesh's own
    area-weighted samples with their faces' normals (fitted into the box: app/truth/mesh_truth.py),
    else the truth's zero level on the same lattice, for any truth (a formula, a Slang file)."""
    if mesh is not None:
        field = load_mesh_field(mesh.spec, tuple(float(v) for v in volume.box.ravel()), mesh.resolution)
        return Surface(
            field.surface.astype(np.float64), field.normals.astype(np.float64), (field.vertices, field.faces)
        )
    return lattice_surface(volume.truth, volume.truth_slopes, volume.box)


def surface_metrics(volume: Volume, truth: Surface | None = None) -> dict:
    """IoU, Chamfer distance (a fraction of the box's diagonal), normal consistency and the eikonal
    error in the band |truth| < BAND_SHARE x diagonal and over the box; None where undefined (no
    zero level, an empty band). `truth`: the truth's surface, truth_surface(volume) by default."""
    diag = diagonal(volume.box)
    # The learned surface's normals at the lattice's scale, as its Chamfer distance and an exported
    # mesh see it: a hash grid's own gradient wrinkles below that scale, which the eikonal error shows.
    learned = lattice_surface(volume.learned, None, volume.box)
    chamfer, normals = chamfer_and_normals(learned, truth if truth is not None else truth_surface(volume))
    band = np.abs(volume.truth) < BAND_SHARE * diag
    return {
        "iou": iou(volume.learned, volume.truth),
        "chamfer": None if chamfer is None else chamfer / diag,
        "normal_consistency": normals,
        "eikonal_band": eikonal_error(volume.learned_slopes, band),
        "eikonal_box": eikonal_error(volume.learned_slopes),
    }
