"""--export-mesh and the surface metrics of a signed distance of (x, y, z): the exported mesh of a
network whose zero level is a known sphere (a poly2 network computing (|p|^2 - r^2) / 2r) against
the analytic sphere, its PLY and OBJ read back by readers of this file (counts, outward faces), the
metrics against closed forms of two concentric spheres (numpy, and the GPU lattice of a run), and the
bad options' one-line refusals."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import run_app, run_headless_here

from app.views.surface_metrics import (
    BAND_SHARE,
    crossings,
    nearest,
    nearest_brute_force,
    surface_metrics,
    truth_surface,
)
from app.views.volume import Volume

BOX = np.array([[-1.0, 1.0], [-1.0, 1.0], [-1.0, 1.0]])
DIAGONAL = 2 * np.sqrt(3)
LEARNED_R, TRUTH_R = 0.4, 0.5
SPHERE_TRUTH = "sqrt(x*x + y*y + z*z) - 0.5"


# ---- analytic fields -----------------------------------------------------------------------------
def _lattice(side: int) -> np.ndarray:
    t = np.linspace(-1.0, 1.0, side)
    return np.stack(np.meshgrid(t, t, t, indexing="ij"), axis=-1)


def _quadric(p: np.ndarray, r: float) -> tuple[np.ndarray, np.ndarray]:
    """(|p|^2 - r^2) / 2r and its gradient p / r: zero on the sphere of radius r, |grad| = 1 there."""
    return (np.sum(p * p, axis=-1) - r * r) / (2 * r), p / r


def _distance(p: np.ndarray, r: float) -> tuple[np.ndarray, np.ndarray]:
    length = np.linalg.norm(p, axis=-1)
    return length - r, p / np.maximum(length, 1e-12)[..., None]


def _analytic_volume(side: int) -> Volume:
    p = _lattice(side)
    learned, learned_slopes = _quadric(p, LEARNED_R)
    truth, truth_slopes = _distance(p, TRUTH_R)
    return Volume(BOX, learned, learned_slopes, truth, truth_slopes)


def _shell_eikonal(r: float, a: float, b: float) -> float:
    """The mean of | |p| / r - 1 | over the shell a < |p| < b (volume-weighted: rho^2 d rho)."""

    def part(lo: float, hi: float, sign: float) -> float:  # the integral of sign (rho / r - 1) rho^2
        def antiderivative(rho):
            return rho**4 / (4 * r) - rho**3 / 3

        return sign * (antiderivative(hi) - antiderivative(lo))

    return (part(a, r, -1.0) + part(r, b, 1.0)) / ((b**3 - a**3) / 3)


# ---- the metrics against closed forms (numpy) ----------------------------------------------------
def test_the_metrics_of_two_concentric_spheres_are_their_closed_forms():
    side = 64
    figures = surface_metrics(_analytic_volume(side))
    h = 2 / (side - 1)
    assert figures["iou"] == pytest.approx((LEARNED_R / TRUTH_R) ** 3, rel=0.02)
    # every point of one sphere is 0.1 from the other; the lattice's points on it add at most h/2
    chamfer = (TRUTH_R - LEARNED_R) / DIAGONAL
    assert chamfer <= figures["chamfer"] <= np.hypot(TRUTH_R - LEARNED_R, h / 2) / DIAGONAL
    assert figures["normal_consistency"] > 0.999  # both radial
    band = BAND_SHARE * DIAGONAL  # the shell |truth| < band lies inside the box
    expected = _shell_eikonal(LEARNED_R, TRUTH_R - band, TRUTH_R + band)
    assert figures["eikonal_band"] == pytest.approx(expected, rel=0.02)
    p = _lattice(side)
    assert figures["eikonal_box"] == pytest.approx(np.mean(np.abs(np.linalg.norm(p, axis=-1) / LEARNED_R - 1)))


def test_crossings_lie_on_the_zero_level_with_outward_normals():
    volume = _analytic_volume(48)
    surface = crossings(volume.learned, volume.learned_slopes, volume.box)
    radius = np.linalg.norm(surface.points, axis=1)
    h = 2 / 47
    assert len(radius) > 1000 and np.max(np.abs(radius - LEARNED_R)) < h * h / LEARNED_R
    outward = np.einsum("ij,ij->i", surface.normals, surface.points / radius[:, None])
    assert np.min(outward) > 0.999
    # without gradients: the lattice's central differences, still outward
    rough = crossings(volume.learned, None, volume.box)
    assert np.min(np.einsum("ij,ij->i", rough.normals, rough.points / radius[:, None])) > 0.95


def test_the_nearest_point_searches_agree():
    rng = np.random.default_rng(3)
    points, others = rng.normal(size=(700, 3)), rng.normal(size=(900, 3))
    distance, index = nearest(points, others)
    brute_distance, brute_index = nearest_brute_force(points, others)
    np.testing.assert_array_equal(index, brute_index)
    np.testing.assert_allclose(distance, brute_distance, rtol=1e-12)
    assert np.allclose(distance, np.min(np.linalg.norm(points[:, None] - others[None], axis=2), axis=1))


def test_distances_go_to_the_surfaces_triangles_not_their_sample_points():
    """Chamfer's distances to a surface with triangles are to the surface: points above a square of
    two triangles are their height away, where the nearest of its four corners is much further."""
    pytest.importorskip("igl")
    from app.views.surface_metrics import Surface, distance_to

    corners = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]])
    square = Surface(corners, np.tile([0.0, 0.0, 1.0], (4, 1)), (corners, np.array([[0, 1, 2], [0, 2, 3]])))
    rng = np.random.default_rng(3)
    points = np.column_stack([rng.uniform(0.1, 0.9, (50, 2)), rng.uniform(-0.2, 0.2, 50)])
    np.testing.assert_allclose(distance_to(points, square), np.abs(points[:, 2]), atol=1e-12)
    np.testing.assert_allclose(distance_to(points, Surface(corners, square.normals)), nearest(points, corners)[0])
    assert np.all(nearest(points, corners)[0] > 0.1)


def test_no_zero_level_leaves_the_surface_figures_undefined():
    volume = _analytic_volume(16)
    volume.learned = np.ones_like(volume.learned)
    figures = surface_metrics(volume)
    assert figures["chamfer"] is None and figures["normal_consistency"] is None
    assert figures["iou"] == 0.0  # the truth's inside is not empty, the learned one is


# ---- the mesh files ------------------------------------------------------------------------------
def read_ply(path: Path) -> tuple[np.ndarray, np.ndarray]:
    data = path.read_bytes()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    header = data[:end].decode("ascii").splitlines()
    assert header[:2] == ["ply", "format binary_little_endian 1.0"]
    counts = {line.split()[1]: int(line.split()[2]) for line in header if line.startswith("element")}
    vertices = np.frombuffer(data, "<f4", counts["vertex"] * 3, end).reshape(-1, 3)
    rows = np.frombuffer(data, np.dtype([("n", "u1"), ("i", "<i4", 3)]), counts["face"], end + vertices.nbytes)
    assert np.all(rows["n"] == 3) and end + vertices.nbytes + rows.nbytes == len(data)
    return vertices.astype(np.float64), rows["i"].astype(np.int64)


def read_obj(path: Path) -> tuple[np.ndarray, np.ndarray]:
    vertices, faces = [], []
    for line in path.read_text().splitlines():
        if line.startswith("v "):
            vertices.append([float(v) for v in line.split()[1:]])
        elif line.startswith("f "):
            faces.append([int(i) - 1 for i in line.split()[1:]])
    return np.array(vertices), np.array(faces)


def signed_volume(vertices: np.ndarray, faces: np.ndarray) -> float:
    a, b, c = (vertices[faces[:, k]] for k in range(3))
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6)


def check_sphere_mesh(vertices: np.ndarray, faces: np.ndarray, r: float, side: int) -> None:
    """A closed mesh of the sphere of radius r, faces wound outward, as close as the lattice allows:
    its vertices' Chamfer distance to the sphere (their distance to it, exact) within h^2 / r."""
    h = 2 / (side - 1)
    assert faces.min() == 0 and faces.max() == len(vertices) - 1
    edges = np.sort(np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]), axis=1)
    _, uses = np.unique(edges, axis=0, return_counts=True)
    assert np.all(uses == 2)  # closed: every edge between two faces
    radial = np.abs(np.linalg.norm(vertices, axis=1) - r)
    assert np.mean(radial) < 0.5 * h * h / r and np.max(radial) < h * h / r
    centroids = vertices[faces].mean(axis=1)
    assert np.max(np.abs(np.linalg.norm(centroids, axis=1) - r)) < h * h / r
    assert signed_volume(vertices, faces) == pytest.approx(4 / 3 * np.pi * r**3, rel=3 * h / r)


def _sphere_network(path: Path, r: float | None) -> Path:
    """A network.json of (x, y, z), poly2 -> 1 -> 1 identity, computing (|p|^2 - r^2) / 2r (r None:
    the constant 1, no zero level)."""
    weights = [[0.0, 0.0, 0.0, 1 / (2 * r), 1 / (2 * r), 1 / (2 * r)]] if r else [[0.0] * 6]
    network = {
        "format": "slang-visual-trainer/network@1",
        "encoding": {"kind": "poly2"},
        "domain": {"x": [-1.0, 1.0], "y": [-1.0, 1.0], "z": [-1.0, 1.0]},
        "targets": [SPHERE_TRUTH],
        "layers": [
            {"weights": weights, "biases": [-r / 2 if r else 1.0], "activation": "identity"},
            {"weights": [[1.0]], "biases": [0.0], "activation": "identity"},
        ],
        "output": {"kind": "identity"},
    }
    path.write_text(json.dumps(network))
    return path


def _export(gpu, tmp_path: Path, mesh: str, side: int, r: float | None = LEARNED_R, *more: str):
    network = _sphere_network(tmp_path / "sphere.json", r)
    return run_headless_here(
        gpu,
        tmp_path,
        *("--load-network", str(network), "--iterations", "0", "--eikonal", "0.1"),
        *("--out", str(tmp_path / "run"), "--export-mesh", str(tmp_path / mesh), "--mesh-resolution", str(side)),
        *more,
    )


def test_the_exported_ply_is_the_sphere_and_summary_json_has_its_metrics(gpu, tmp_path):
    side = 40
    result = _export(gpu, tmp_path, "sphere.ply", side)
    assert result.returncode == 0, result.stderr
    assert f"mesh: {tmp_path / 'sphere.ply'}" in result.stdout
    check_sphere_mesh(*read_ply(tmp_path / "sphere.ply"), LEARNED_R, side)
    surface = json.loads((tmp_path / "run" / "summary.json").read_text())["surface"]
    assert surface["step"] == 0 and [row["step"] for row in surface["history"]] == [0]
    # the GPU's lattice (learned network, truth formula, their gradients) against numpy's
    expected = surface_metrics(_analytic_volume(surface["grid"]))
    for name, value in expected.items():
        assert surface[name] == pytest.approx(value, rel=1e-4, abs=1e-6), name
    assert surface["iou"] == pytest.approx(0.512, rel=0.05)
    assert surface["chamfer"] == pytest.approx(0.1 / DIAGONAL, rel=0.05)


def test_the_exported_obj_parses_back_outward(gpu, tmp_path):
    side = 24
    result = _export(gpu, tmp_path, "sphere.obj", side)
    assert result.returncode == 0, result.stderr
    vertices, faces = read_obj(tmp_path / "sphere.obj")
    check_sphere_mesh(vertices, faces, LEARNED_R, side)


def test_a_network_with_no_zero_level_is_one_line_and_no_file(gpu, tmp_path):
    result = _export(gpu, tmp_path, "none.ply", 16, None)
    lines = [line for line in result.stderr.strip().splitlines() if not line.startswith("note: ")]  # identity's hint
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert "no zero level in the box: it runs from 1 to 1" in lines[0] and "Traceback" not in result.stderr
    assert not (tmp_path / "none.ply").exists() and (tmp_path / "run" / "network.json").is_file()


@pytest.mark.parametrize(
    "args,message",
    [
        (("--export-mesh", "m.ply", "--mesh-resolution", "4"), "--mesh-resolution must be between 8 and 512"),
        (("--export-mesh", "m.ply", "--mesh-resolution", "513"), "--mesh-resolution must be between 8 and 512"),
        (("--export-mesh", "m.ply", "--mesh-resolution", "x"), "--mesh-resolution: invalid int value"),
        (("--mesh-resolution", "64"), "--mesh-resolution is --export-mesh's lattice"),
        (("--export-mesh", "m.stl"), "--export-mesh must name a .ply or .obj file"),
        (("--export-mesh", "m.ply", "--dims", "2"), "use --dims 3"),
    ],
)
def test_bad_mesh_options_are_one_line_and_exit_2(gpu, tmp_path, args, message):
    dims = () if "--dims" in args else ("--dims", "3", "--target", SPHERE_TRUTH)
    result = run_headless_here(gpu, tmp_path, *dims, *args, "--out", str(tmp_path / "run"))
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and message in lines[0], result.stderr
    assert not (tmp_path / "run").exists()


def test_without_scikit_image_the_export_is_refused_before_training(gpu, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "skimage.measure", None)  # its import raises ImportError
    result = _export(gpu, tmp_path, "sphere.ply", 16)
    lines = [line for line in result.stderr.strip().splitlines() if not line.startswith("note: ")]
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert "exporting a mesh needs scikit-image: pip install 'slang-visual-trainer[mesh]'" in lines[0]
    assert not (tmp_path / "run").exists()


def test_the_window_refuses_the_headless_mesh_options(gpu, tmp_path):
    result = run_app(gpu, tmp_path, "--export-mesh", "m.ply")
    assert result.returncode == 2 and "--export-mesh is for --headless runs" in result.stderr


# ---- a mesh's truth: its own surface samples --------------------------------------------------------
def test_a_mesh_truth_is_compared_through_its_own_surface_samples(tmp_path):
    pytest.importorskip("igl")
    from app.files.mesh_export import obj_bytes, zero_level_mesh
    from app.truth.mesh_truth import MeshTruth

    side = 40
    volume = _analytic_volume(side)
    (tmp_path / "ball.obj").write_bytes(obj_bytes(*zero_level_mesh(volume)))  # the sphere of radius 0.4
    mesh = MeshTruth(str(tmp_path / "ball.obj"), 16)
    # fitted into the box at 0.8 of its width: the sphere of radius 0.8, its samples' normals outward
    surface = truth_surface(volume, mesh)
    radius = np.linalg.norm(surface.points, axis=1)
    assert len(radius) > 10000 and np.all(np.abs(radius - 0.8) < 0.01)
    assert np.min(np.einsum("ij,ij->i", surface.normals, surface.points / radius[:, None])) > 0.99
    learned, slopes = _distance(_lattice(side), 0.7)
    figures = surface_metrics(Volume(BOX, learned, slopes, volume.truth, volume.truth_slopes), surface)
    assert figures["chamfer"] == pytest.approx(0.1 / DIAGONAL, rel=0.05)
    assert figures["normal_consistency"] > 0.99


def test_a_mesh_truths_export_is_in_the_mesh_files_own_units(gpu, tmp_path):
    """The ball fitted into the box from far off its origin: the learned zero level comes back there."""
    pytest.importorskip("igl")
    from app.files.mesh_export import obj_bytes, zero_level_mesh

    centre, radius = np.array([10.0, -4.0, 3.0]), 5.0
    vertices, faces = zero_level_mesh(_analytic_volume(24))  # the sphere of radius 0.4 at the origin
    (tmp_path / "ball.obj").write_bytes(obj_bytes(centre + vertices * (radius / LEARNED_R), faces))
    result = run_headless_here(
        gpu,
        tmp_path,
        *("--sdf", str(tmp_path / "ball.obj"), "--iterations", "40", "--batch-size", "2048"),
        *("--out", str(tmp_path / "run"), "--export-mesh", str(tmp_path / "out.ply"), "--mesh-resolution", "24"),
    )
    assert result.returncode == 0, result.stderr
    exported, _ = read_ply(tmp_path / "out.ply")
    # the box is the ball's fit undone: its centre +- 1.25 radii (the ball spans 0.8 of the box)
    assert len(exported) > 100 and np.max(np.abs(exported - centre)) <= 1.25 * radius + 1e-4
    assert np.linalg.norm(exported.mean(axis=0) - centre) < 0.25 * radius


# ---- a brief training: the history -----------------------------------------------------------------
def test_a_brief_run_records_the_figures_against_steps_and_seconds(gpu, tmp_path):
    result = run_headless_here(
        gpu,
        tmp_path,
        *("--dims", "3", "--target", SPHERE_TRUTH, "--eikonal", "0.1", "--activation", "softplus"),
        *("--encoding", "raw", "--hidden", "16", "--batch-size", "512", "--iterations", "600"),
        *("--eval-every", "100", "--out", str(tmp_path / "run")),
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    surface, history = summary["surface"], summary["surface"]["history"]
    steps = [row["step"] for row in history]
    assert steps == sorted(set(steps)) and steps[-1] == 600 and all(step % 100 == 0 for step in steps)
    seconds = [row["seconds"] for row in history]
    assert seconds == sorted(seconds) and seconds[-1] < summary["wall_seconds"]
    assert surface["step"] == 600 and surface["iou"] == history[-1]["iou"]
    assert history[-1]["eikonal_band"] < history[0]["eikonal_band"]  # it learns the sphere's distance
    assert history[-1]["iou"] > 0.5 and history[-1]["chamfer"] < 0.05


# ---- the window --------------------------------------------------------------------------------------
def test_the_window_shows_the_surface_figures_and_exports_the_mesh(make_session, tmp_path, monkeypatch):
    from app.ui import surface_live
    from app.ui.offscreen import OffscreenApp

    monkeypatch.setitem(surface_live.POINTS_PER_FRAME, True, 1 << 13)  # a CPU driver's pass in 4 frames

    session = make_session(
        dims=3, targets=[SPHERE_TRUTH], encoding="poly2", hidden=[1], activation="identity", eikonal=0.1
    )
    network = json.loads(_sphere_network(tmp_path / "sphere.json", LEARNED_R).read_text())
    params = np.zeros(session.trainer.plan.param_count, np.float32)
    for layer, entry in zip(session.trainer.plan.layers, network["layers"]):
        params[layer.offset : layer.bias_offset] = np.ravel(entry["weights"])
        params[layer.bias_offset : layer.end] = entry["biases"]
    session.trainer.set_parameters(params)
    ui = OffscreenApp(session, 1280, 800)
    try:
        ui.app.running = False  # the network stays the sphere of radius 0.4
        assert ui.frames_until(lambda: ui.app.figure_rows.get("surface", "").startswith("IoU"), force=True)
        tracker = ui.app.surface_live.tracker
        expected = surface_metrics(_analytic_volume(tracker.evaluator.side))
        row = tracker.latest
        for name, value in expected.items():
            assert row[name] == pytest.approx(value, rel=1e-4, abs=1e-6), name
        assert ui.app.figure_rows["surface"].startswith(f"IoU {expected['iou']:.4f}, Chamfer {expected['chamfer']:.3g}")
        # File > Export mesh, at --export-mesh's default lattice
        assert ui.app.files.act("mesh", str(tmp_path / "window.obj")) is None
        check_sphere_mesh(*read_obj(tmp_path / "window.obj"), LEARNED_R, 128)
        assert ui.app.files.act("mesh", str(tmp_path / "window.stl")) is not None  # named, not written
        assert not (tmp_path / "window.stl").exists()
    finally:
        ui.close()
