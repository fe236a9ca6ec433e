"""Signed distance fields trained from the command line (--sdf), checked in float64 numpy from the
network.json they leave (tests/reference.py's forward mode) against the shapes' exact distances:
the eikonal circle's gradient length and zero level, and a silhouette's learned outline."""

import json
import types

import numpy as np
from helpers import run_headless_here
from reference import forward_with_input_gradients

from app.bench.sdf_sharpness import circle_figures, outline_error_px, write_silhouette
from app.files.network_io import forward


def _trained(folder):
    """network.json as (config, flat parameters) for tests/reference.py."""
    layers = json.loads((folder / "network.json").read_text())["layers"]
    encoding = json.loads((folder / "network.json").read_text())["encoding"]
    config = types.SimpleNamespace(
        encoding=encoding["kind"],
        frequencies=encoding.get("frequencies", 0),
        features=[],
        hidden=[len(layer["biases"]) for layer in layers[:-1]],
        output_dim=len(layers[-1]["biases"]),
        activation=layers[0]["activation"],
        output_activation=layers[-1]["activation"],
    )
    params = np.concatenate([np.concatenate([np.ravel(layer["weights"]), layer["biases"]]) for layer in layers])
    return config, params


def _train(gpu, tmp_path, name, *args):
    """A headless run of these options, in this process (helpers.run_app), as network.json."""
    out = tmp_path / name
    run = run_headless_here(gpu, tmp_path, "--seed", "0", "--out", str(out), *args)
    assert run.returncode == 0, run.stderr
    return _trained(out)


def test_eikonal_circle_has_unit_gradient_near_its_boundary(gpu, tmp_path):
    """The circle of radius 0.5 trained with the eikonal term (weight 1): | |grad f| - 1 | over a
    dense grid's points (step 0.01) in the band |d| < 0.3 (d = |p| - 0.5, the true distance) is
    within 2% at 95% of them and within 3% everywhere, and |f| < 0.01 at 360 points of the true
    circle. Measured on lavapipe (tanh 16 on poly2, 15,000 steps, 3.5 s): mean 0.0059, 95th
    percentile 0.0108, largest 0.0181; |f| at most 0.0039. With eikonal weight 0.1 and 10,000 steps
    the 95th percentile was 0.0245. Not every seed gets there: of seeds 0-3, 0 and 2 do (95th
    percentile 0.9-1.1%), 1 and 3 stall at 8-10% (at 30,000 steps too: a 16-unit network's local
    minima; tanh 32 brings three of four under 1.5%, at twice the time)."""
    config, params = _train(
        gpu, tmp_path, "circle", "--sdf", "circle", "--eikonal", "1", "--encoding", "poly2", "--hidden", "16", "--activation", "tanh",
        "--batch-size", "256", "--lr", "0.03", "--iterations", "15000",
    )  # fmt: skip
    axis = np.arange(-1.0, 1.0 + 1e-9, 0.01)
    x, y = (a.ravel() for a in np.meshgrid(axis, axis))
    band = np.abs(np.hypot(x, y) - 0.5) < 0.3
    _, gradient, _ = forward_with_input_gradients(config, params, x[band], y[band])
    off = np.abs(np.linalg.norm(gradient[:, 0, :], axis=1) - 1.0)
    figures = (off.mean(), np.percentile(off, 95), off.max())
    assert band.sum() > 15_000 and np.percentile(off, 95) <= 0.02 and off.max() <= 0.03, figures
    angle = np.linspace(0.0, 2.0 * np.pi, 360, endpoint=False)
    on_circle, _, _ = forward_with_input_gradients(config, params, 0.5 * np.cos(angle), 0.5 * np.sin(angle))
    assert np.abs(on_circle).max() < 0.01, np.abs(on_circle).max()


def test_normal_alignment_turns_the_gradient_to_a_sparse_outlines_normals(gpu, tmp_path):
    """24 points of an ellipse (semi-axes 0.6 and 0.35) with their outward normals, a sparse
    outline whose distance grid is scalloped between the points. After the same 1,000 steps, the
    angle between the learned gradient and the true ellipse's normal at 360 points of it is at
    most half with --normal-weight 1 what it is without. Measured on lavapipe (tanh 16, seed 0):
    mean 4.88 degrees without, 1.71 with; 95th percentile 8.2 against 3.7 (after 2,000 steps:
    1.67 against 0.71, 5.9 against 1.4)."""
    t = np.linspace(0, 2 * np.pi, 24, endpoint=False)
    rows = np.stack([0.6 * np.cos(t), 0.35 * np.sin(t), 0.35 * np.cos(t), 0.6 * np.sin(t)], axis=1)
    (tmp_path / "ellipse.csv").write_text("x,y,nx,ny\n" + "\n".join(",".join(f"{v:.6f}" for v in r) for r in rows))
    angle = np.linspace(0, 2 * np.pi, 360, endpoint=False)
    x, y = 0.6 * np.cos(angle), 0.35 * np.sin(angle)
    normal = np.stack([0.35 * np.cos(angle), 0.6 * np.sin(angle)], axis=1)
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    off = {}
    for weight in ("0", "1"):
        config, params = _train(
            gpu, tmp_path, f"w{weight}", "--sdf", str(tmp_path / "ellipse.csv"), "--normal-weight", weight, "--eikonal", "0",
            "--encoding", "poly2", "--hidden", "16", "--activation", "tanh", "--batch-size", "256", "--iterations", "1000",
        )  # fmt: skip
        _, gradient, _ = forward_with_input_gradients(config, params, x, y)
        g = gradient[:, 0, :]
        cos = np.sum(g * normal, axis=1) / np.linalg.norm(g, axis=1)
        off[weight] = np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))
    assert off["1"].mean() <= 0.5 * off["0"].mean(), (off["0"].mean(), off["1"].mean())
    assert np.percentile(off["1"], 95) <= 0.5 * np.percentile(off["0"], 95)


def _learned_values(folder):
    """f at points (n, 2) in float64 from a run's network.json and its grid's tables."""
    network = json.loads((folder / "network.json").read_text())
    tables = np.load(folder / network["encoding"]["tables"]) if "tables" in network["encoding"] else None
    return lambda points: forward(network, points[:, 0], points[:, 1], tables)[:, 0]


def _h_shape(size: int = 128) -> np.ndarray:
    """An H: posts 20 px wide, 15 px apart, joined by a bar 10 px thick: the gaps above and below
    the bar are notches 15 px wide with two concave corners each."""
    row, column = np.mgrid[0:size, 0:size]
    posts = ((column >= 30) & (column < 50)) | ((column >= 65) & (column < 85))
    bar = (column >= 50) & (column < 65) & (row >= 60) & (row < 70)
    return (posts & (row >= 20) & (row < 108)) | bar


# Steps within the targets for seeds 0 and 1 on lavapipe (4,000 are asked: docs/benchmarks.md): the
# outline is sharp from the first few hundred; the circle's gradient settles later.
OUTLINE_STEPS, CIRCLE_STEPS = 300, 600


def test_a_shape_alone_keeps_its_notches_and_bars_sharp(gpu, tmp_path):
    """--sdf with no other option (the shape preset) on an H of 128 x 128 pixels: the learned zero
    level is within 1.5 px of the drawn outline at the 95th percentile, both ways (every learned
    crossing's true distance; every outline point's distance to the nearest learned crossing), and
    within 3 px everywhere. Measured on lavapipe at 300 steps, seeds 0 and 1: 0.54 and 0.38 px
    (worst 1.22)."""
    inside = _h_shape()
    path = write_silhouette(inside, tmp_path / "h.png")
    out = tmp_path / "h"
    run = run_headless_here(gpu, tmp_path, "--sdf", path, "--iterations", str(OUTLINE_STEPS), "--out", str(out))
    assert run.returncode == 0, run.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["config"]["encoding"] == "hashgrid", "the shape preset's network"
    figures = outline_error_px(_learned_values(out), inside, summary["config"]["domain"])
    assert figures["p95"] <= 1.5 and figures["worst"] <= 3.0, figures


def test_a_circle_alone_has_unit_gradient_and_its_zero_on_the_circle(gpu, tmp_path):
    """--sdf circle with no other option: | |grad f| - 1 | (central differences of the float64
    twin) is within 2% on average over the band |d| < 0.3, and |f| < 0.01 at 360 points of the
    circle. Measured on lavapipe at 600 steps, seeds 0 and 1: 1.54% and 1.67%, |f| <= 0.0012."""
    out = tmp_path / "circle"
    run = run_headless_here(gpu, tmp_path, "--sdf", "circle", "--iterations", str(CIRCLE_STEPS), "--out", str(out))
    assert run.returncode == 0, run.stderr
    figures = circle_figures(_learned_values(out))
    assert figures["gradient_mean"] <= 0.02 and figures["on_circle"] < 0.01, figures
