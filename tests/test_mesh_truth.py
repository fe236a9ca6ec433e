"""A triangle mesh's signed distance as the truth (--sdf mesh.obj, --dims 3): libigl's distances
against a brute-force numpy distance and winding number on a small mesh the test makes, the four
file formats, the fit into the box, one line for each kind of bad mesh, and on the GPU the truth
the kernels read and a step's gradient over the mesh's samples against numpy twins."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import gpu_loss_and_gradient
from reference import grid_centres, kernel_parameters, loss_and_gradient
from tensor_core_checks import tensor_cores_for

from app.check.sample_twin import mesh_samples
from app.config.config import Config, validate
from app.errors import UserError
from app.loop.session import Session
from app.truth import mesh_truth
from app.truth.mesh_truth import load_mesh_field, read_mesh, signed_distance, trilinear

BOX = (-1.0, 1.0, -1.0, 1.0, -1.0, 1.0)


def torus(n: int = 24, m: int = 12, big: float = 1.0, small: float = 0.4) -> tuple[np.ndarray, np.ndarray]:
    """A closed torus of 2 n m triangles, outward, with a flat side (a notch) cut into its tube."""
    u = np.linspace(0, 2 * np.pi, n, endpoint=False)[:, None]
    v = np.linspace(0, 2 * np.pi, m, endpoint=False)[None, :]
    tube = small * np.where(np.cos(v) > 0.6, 0.6 / np.maximum(np.cos(v), 1e-9), 1.0)  # flat outer band
    x, y, z = (big + tube * np.cos(v)) * np.cos(u), (big + tube * np.cos(v)) * np.sin(u), tube * np.sin(v)
    vertices = np.stack([x.ravel(), y.ravel(), np.broadcast_to(z, x.shape).ravel()], axis=1)
    faces = []
    for i in range(n):
        for j in range(m):
            a, b = i * m + j, ((i + 1) % n) * m + j
            c, d = ((i + 1) % n) * m + (j + 1) % m, i * m + (j + 1) % m
            faces += [[a, b, c], [a, c, d]]
    return vertices, np.array(faces)


def brute_force(points: np.ndarray, vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """The distance to the nearest triangle (projection inside it, else the nearest edge point),
    negative where the exact winding number (sum of the triangles' solid angles) is over 1/2."""
    a, b, c = (vertices[faces[:, k]][None] for k in range(3))
    p = points[:, None]

    def segment(p, s, t):
        d = t - s
        w = np.clip(np.einsum("...k,...k", p - s, d) / np.einsum("...k,...k", d, d), 0, 1)
        return np.linalg.norm(p - (s + w[..., None] * d), axis=-1)

    normal = np.cross(b - a, c - a)
    normal = normal / np.linalg.norm(normal, axis=-1, keepdims=True)
    height = np.einsum("...k,...k", p - a, normal)
    q = p - height[..., None] * normal
    inside = np.ones(height.shape, bool)
    for s, t in ((a, b), (b, c), (c, a)):
        inside &= np.einsum("...k,...k", np.cross(t - s, q - s), normal) >= 0
    distance = np.where(
        inside, np.abs(height), np.minimum(np.minimum(segment(p, a, b), segment(p, b, c)), segment(p, c, a))
    )
    ra, rb, rc = a - p, b - p, c - p
    la, lb, lc = (np.linalg.norm(r, axis=-1) for r in (ra, rb, rc))
    numerator = np.einsum("...k,...k", ra, np.cross(rb, rc))
    denominator = la * lb * lc + np.einsum("...k,...k", ra, rb) * lc + np.einsum("...k,...k", rb, rc) * la
    denominator += np.einsum("...k,...k", rc, ra) * lb
    winding = np.sum(2 * np.arctan2(numerator, denominator), axis=1) / (4 * np.pi)
    return np.where(winding > 0.5, -1.0, 1.0) * distance.min(axis=1)


def write_obj(path, vertices, faces) -> None:
    lines = [f"v {x:.17g} {y:.17g} {z:.17g}" for x, y, z in vertices] + [
        f"f {a + 1} {b + 1} {c + 1}" for a, b, c in faces
    ]
    path.write_text("\n".join(lines) + "\n")


def write_off(path, vertices, faces) -> None:
    lines = ["OFF", f"{len(vertices)} {len(faces)} 0"] + [f"{x:.17g} {y:.17g} {z:.17g}" for x, y, z in vertices]
    path.write_text("\n".join(lines + [f"3 {a} {b} {c}" for a, b, c in faces]) + "\n")


def write_ply(path, vertices, faces) -> None:
    header = ["ply", "format ascii 1.0", f"element vertex {len(vertices)}", "property float x", "property float y",
              "property float z", f"element face {len(faces)}", "property list uchar int vertex_indices", "end_header"]  # fmt: skip
    rows = [f"{x:.17g} {y:.17g} {z:.17g}" for x, y, z in vertices] + [f"3 {a} {b} {c}" for a, b, c in faces]
    path.write_text("\n".join(header + rows) + "\n")


def write_stl(path, vertices, faces) -> None:
    lines = ["solid torus"]
    for tri in vertices[faces]:
        lines += [
            "facet normal 0 0 0",
            "outer loop",
            *(f"vertex {x:.17g} {y:.17g} {z:.17g}" for x, y, z in tri),
            "endloop",
            "endfacet",
        ]
    path.write_text("\n".join(lines + ["endsolid torus"]) + "\n")


@pytest.fixture(scope="module")
def mesh_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("mesh") / "torus.obj"
    write_obj(path, *torus())
    return path


def test_the_distance_is_exact_and_signed_by_the_winding_number_against_brute_force():
    vertices, faces = torus()
    rng = np.random.default_rng(0)
    surface, normals = mesh_truth.surface_samples(vertices, faces, 300, 1)
    points = np.concatenate([rng.uniform(-1.5, 1.5, (700, 3)), surface + normals * rng.uniform(-0.05, 0.05, (300, 1))])
    expected = brute_force(points, vertices, faces)
    assert (expected < 0).sum() > 100 and (expected > 0).sum() > 100
    np.testing.assert_allclose(signed_distance(points, vertices, faces), expected, atol=1e-9)
    # A hole of two triangles: the winding number still tells inside from outside away from it
    holed = np.delete(faces, [5, 6], axis=0)
    far = np.linalg.norm(points - vertices[faces[5:7]].reshape(-1, 3).mean(axis=0), axis=1) > 0.5
    assert np.all(np.sign(signed_distance(points, vertices, holed))[far] == np.sign(expected)[far])


@pytest.mark.parametrize("writer,suffix", [(write_off, ".off"), (write_ply, ".ply"), (write_stl, ".stl")])
def test_off_ply_and_stl_read_as_the_same_shape_as_obj(tmp_path, mesh_file, writer, suffix):
    vertices, faces = torus()
    path = tmp_path / f"torus{suffix}"
    writer(path, vertices, faces)
    read_vertices, read_faces = read_mesh(str(path))
    assert len(read_faces) == len(faces)
    points = np.random.default_rng(2).uniform(-1.4, 1.4, (200, 3))
    expected = signed_distance(points, *read_mesh(str(mesh_file)))
    np.testing.assert_allclose(signed_distance(points, read_vertices, read_faces), expected, atol=1e-6)


def test_the_mesh_is_fitted_into_the_box_by_one_scale_and_shift(mesh_file):
    field = load_mesh_field(str(mesh_file), (0.0, 4.0, -1.0, 1.0, 2.0, 3.0), 8)
    vertices, _ = read_mesh(str(mesh_file))
    np.testing.assert_allclose(field.vertices, vertices * field.scale + field.shift)
    np.testing.assert_allclose(mesh_truth.unfit(field.vertices, field), vertices, atol=1e-12)  # and back
    low, high = field.vertices.min(axis=0), field.vertices.max(axis=0)
    np.testing.assert_allclose((low + high) / 2, [2.0, 0.0, 2.5], atol=1e-12)  # centred
    assert np.isclose(np.max((high - low) / [4.0, 2.0, 1.0]), mesh_truth.FIT_SHARE)  # the tightest axis


def test_the_fine_grid_is_exact_near_the_surface_and_the_coarse_grid_further_out(monkeypatch):
    monkeypatch.setattr(mesh_truth, "COARSE_RESOLUTION", 12)
    vertices, faces = torus()
    box = (-1.5, 1.5, -1.5, 1.5, -0.7, 0.7)
    fine = mesh_truth.grid_distance(box, 30, vertices, faces).ravel()
    points = mesh_truth.grid_points(box, 30)
    exact = signed_distance(points, vertices, faces)
    coarse = mesh_truth.grid_distance(box, 12, vertices, faces)
    np.testing.assert_allclose(coarse.ravel(), signed_distance(mesh_truth.grid_points(box, 12), vertices, faces))
    read = trilinear(coarse, box, points)  # the coarse grid's reading, and its band
    band = np.abs(read) < mesh_truth.BAND_CELLS * 3.0 / 11
    assert 0.1 < band.mean() < 0.9 and np.all(np.abs(exact[~band]) > 0.05)
    np.testing.assert_allclose(fine[band], exact[band], atol=1e-12)
    np.testing.assert_allclose(fine[~band], read[~band], atol=1e-12)


@pytest.mark.parametrize(
    "text,suffix,message",
    [
        ("", ".obj", "no triangles"),
        ("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 2 9\n", ".obj", "past its 4 vertices"),
        ("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 2 4 3\n", ".obj", "encloses no volume"),
        ("OFF\nthis is not\n", ".off", "not a mesh it can read|no triangles"),  # libigl's reader says either
    ],
)
def test_a_bad_mesh_is_one_line_naming_what_is_wrong(tmp_path, text, suffix, message):
    path = tmp_path / f"bad{suffix}"
    path.write_text(text)
    with pytest.raises(UserError, match=message) as error:
        read_mesh(str(path))
    assert "\n" not in str(error.value) and "bad" in str(error.value)


def test_a_mesh_with_a_vertex_not_finite_is_refused():
    vertices, faces = torus()
    vertices[7, 1] = np.nan  # binary STL and PLY carry NaN where text formats fail to parse
    with pytest.raises(UserError, match="vertex 7 is not finite"):
        mesh_truth.check_mesh(vertices, faces, "'nan.stl'")


def test_a_mesh_past_the_size_limit_and_a_missing_file_are_refused(tmp_path, mesh_file, monkeypatch):
    monkeypatch.setattr(mesh_truth, "MAX_MESH_BYTES", 100)
    with pytest.raises(UserError, match="larger than the 0 MiB"):
        read_mesh(str(mesh_file))
    with pytest.raises(UserError, match="no file"):
        validate(Config(sdf=str(tmp_path / "none.obj"), dims=3))
    with pytest.raises(UserError, match="is a mesh, a shape in 3D: use --dims 3"):
        validate(Config(sdf=str(mesh_file)))


@pytest.mark.parametrize("hidden, precision, path", [([12], "float", "tiles"), ([32, 32], "half", "fused")])
def test_the_kernels_read_the_grid_trilinearly_and_a_steps_gradient_matches_numpy(
    gpu, monkeypatch, mesh_file, hidden, precision, path
):
    """On the fused trainer too (tensor cores, emulated where the device has none): its loss reads
    the mesh's truth again at each sample's point."""
    if path == "fused":
        tensor_cores_for(gpu, monkeypatch, fused=True)
    config = validate(
        Config(dims=3, sdf=str(mesh_file), encoding="fourier", frequencies=2, hidden=hidden, activation="tanh",
               precision=precision, batch_size=256, seed=4)
    )  # fmt: skip
    session = Session(gpu, config, grid=16)
    assert session.trainer.plan.truth_kind == "mesh" and session.trainer.plan.output_dim == 1
    assert session.trainer.plan.gradient_path == path
    field = load_mesh_field(str(mesh_file), BOX)
    session.evaluate()
    truths = session.evaluator.read().truths[..., 0].ravel()
    x, y = (v.ravel() for v in grid_centres(config.domain, 16))
    slice_points = np.stack([x, y, np.zeros_like(x)], axis=1)  # the xy slice at z = 0
    np.testing.assert_allclose(truths, trilinear(field.distance, BOX, slice_points), atol=1e-5)
    assert truths.min() < 0 < truths.max()
    # one step: half its samples near the surface, as the numpy twin draws them
    points = mesh_samples(config.seed, 0, config.batch_size, config.domain, config.z_range, field)
    near = np.abs(trilinear(field.distance, BOX, points[1::2]))
    assert np.max(near) < 0.05 and np.median(np.abs(trilinear(field.distance, BOX, points[0::2]))) > 0.1
    truth = trilinear(field.distance, BOX, points)[:, None]
    x, y, z = (points[:, k].astype(np.float32) for k in range(3))
    expected_loss, expected = loss_and_gradient(
        config, kernel_parameters(config, session.trainer.parameters()), x, y, truth, z=z
    )
    loss, gradient = gpu_loss_and_gradient(session.trainer)
    tolerance = 2e-2 if precision == "half" else 1e-4
    assert abs(loss - expected_loss) / expected_loss < tolerance
    assert np.max(np.abs(gradient - expected)) / np.max(np.abs(expected)) < tolerance


def test_the_window_takes_a_mesh_and_refuses_a_bad_one_keeping_the_network(gpu, tmp_path, mesh_file):
    from app.ui.shape_edits import ShapeEdits

    session = Session(gpu, validate(Config(hidden=[8])), grid=8)
    session.trainer.train(3)
    kept = session.trainer.parameters().copy()
    edits = ShapeEdits(session)
    bad = tmp_path / "flat.obj"
    bad.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 2 4 3\n")
    assert "encloses no volume" in edits.choose(str(bad)) and "\n" not in edits.error
    assert session.rebuild is None and np.array_equal(session.trainer.parameters(), kept)  # trains on
    assert edits.choose(str(mesh_file)) is None  # the rebuild starts, in 3D on the mesh preset
    built = session.rebuild.config
    assert (built.dims, built.sdf, built.encoding, built.eikonal) == (3, str(mesh_file), "hashgrid", 0.0)
    session.cancel_rebuild()
