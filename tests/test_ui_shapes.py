"""Shapes in the offscreen window: the Heatmaps panel's shape combo and File > Open shape... (its
path field, where no dialog program is installed) make a shape's signed distance the truth; the
row names it; a file that is no shape is one line where the file actions' failures appear, and
the running network trains on. with_shape's domains are checked without a window."""

from __future__ import annotations

import imgui_bundle  # noqa: F401 (a dependency: a broken install fails here, never skips)
import numpy as np
import pytest
import slangpy as spy
from helpers import paused_at_a_step_boundary
from test_ui_files import _choose, _through_the_field, no_dialog_program  # noqa: F401 (a fixture)
from test_ui_offscreen import _centre

from app.config.config import Config
from app.config.files import SHAPE_PRESET, load_preset
from app.config.truths import with_shape
from app.resources import asset
from app.truth.eval_grid import cell_centre
from app.ui.panels import data

CIRCLE_RADIUS = 0.5  # the built-in circle's (app/truth/shapes/builtin.py)


def _pick(ui, entry: str) -> None:
    """Opens the shape combo and clicks `entry`."""
    ui.click(*_centre(ui, "shape"))
    ui.frame()
    ui.click(*_centre(ui, f"shape {entry}"))


def _rebuilt(ui) -> None:
    assert ui.frames_until(lambda: ui.session.rebuild is None, 120), "the rebuild finishes"
    assert ui.session.rebuild_error is None, ui.session.rebuild_error
    ui.app.rects.clear()
    ui.frame(2)


def _truth(ui) -> tuple[np.ndarray, np.ndarray]:
    """The evaluated truth of output 1 and the (x, y) of its cells."""
    evaluation = ui.session.evaluator.read()
    grid = evaluation.truths.shape[0]
    domain = ui.session.config.domain
    points = np.array([[cell_centre(domain, grid, i, j) for i in range(grid)] for j in range(grid)])
    return evaluation.truths[:, :, 0], points


def test_a_builtin_from_the_combo_then_another_then_none(ui):
    _pick(ui, "star")
    assert ui.session.rebuild is not None and not ui.session.rebuild.keep_weights
    assert "starts afresh" in ui.app.notice[0], "a shape after formulas is another problem: said so"
    _rebuilt(ui)
    config = ui.session.config
    assert config.sdf == "star" and config.output_dim == 1 and ui.session.trainer.plan.sdf is not None
    preset = load_preset(SHAPE_PRESET)
    assert (config.encoding, config.hidden, config.eikonal) == (preset.encoding, preset.hidden, preset.eikonal), (
        "a new network for a shape is the shape preset's"
    )
    assert ui.session.heatmaps.contours.shown, "a distance field's look"
    assert "target f1" not in ui.app.rects and "add output" not in ui.app.rects, "no expression to edit"
    assert data.truth_entry(config) == "shape: star"
    truth, points = _truth(ui)
    centre = np.unravel_index(np.argmin(np.hypot(points[..., 0], points[..., 1])), truth.shape)
    assert truth[centre] < 0 < truth[0, 0], "negative inside, positive in the corner"

    paused_at_a_step_boundary(ui)
    step, weights = ui.session.trainer.step, ui.session.trainer.parameters()
    _pick(ui, "circle")
    assert ui.session.rebuild.keep_weights and "goes on from the current weights" in ui.app.notice[0]
    _rebuilt(ui)
    assert ui.session.config.sdf == "circle" and ui.session.trainer.step == step
    assert np.array_equal(ui.session.trainer.parameters(), weights), "shape to shape keeps the network"
    truth, points = _truth(ui)
    exact = np.hypot(points[..., 0], points[..., 1]) - CIRCLE_RADIUS
    assert np.abs(truth - exact).max() < 1e-3, "the circle's signed distance"

    _pick(ui, "none")
    _rebuilt(ui)
    config = ui.session.config
    assert config.sdf is None and config.output_dim == len(config.targets) == 4, "the targets, kept"
    assert "target f1" in ui.app.rects


def test_opening_a_shape_through_the_path_field(ui, no_dialog_program):  # noqa: F811 (the fixture)
    heart = asset("shapes", "heart.svg")
    _choose(ui, "shape", frames=2)
    prompt = ui.app.files.prompt
    assert prompt is not None and prompt.action == "shape" and prompt.text.endswith("shape.svg")
    _through_the_field(ui, heart)
    assert ui.app.files.prompt is None, ui.app.notice
    _rebuilt(ui)
    config = ui.session.config
    assert config.sdf == str(heart) and config.output_dim == 1
    assert config.target_labels() == ["signed distance to heart.svg"]
    assert ui.app.rects["shape"] and "heart.svg" in data.truth_entry(config)


def _svg_without_a_path(path):
    path.write_text('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><text>no path</text></svg>')


def _all_white_png(path):
    spy.Bitmap(np.full((16, 16, 3), 255, np.uint8)).write(str(path))


def _csv_without_normals(path):
    path.write_text("x,y\n0,0\n0.5,0.2\n-0.3,0.4\n")


BAD_SHAPES = {  # name: (file, how it is made, the UserError's words)
    "an SVG without a path": ("bad.svg", _svg_without_a_path, "has no filled path or shape"),
    "an all-white PNG": ("white.png", _all_white_png, "is all light"),
    "a CSV without normals": ("points.csv", _csv_without_normals, "a point set needs normal columns"),
    "a missing file": ("missing.svg", None, "no file"),
}


@pytest.mark.parametrize("kind", BAD_SHAPES)
def test_a_bad_shape_is_one_line_and_the_network_trains_on(ui, no_dialog_program, tmp_path, kind):  # noqa: F811
    name, make, words = BAD_SHAPES[kind]
    path = tmp_path / name
    if make is not None:
        make(path)
    trainer, config = ui.session.trainer, ui.session.config
    _choose(ui, "shape", frames=2)
    _through_the_field(ui, path)
    error = ui.app.files.prompt.error
    assert error.startswith("shape not opened: ") and words in error and "\n" not in error, error
    assert ui.app.notice[0] == error and ui.app.shapes.error in error
    assert ui.session.rebuild is None and ui.session.trainer is trainer and ui.session.config == config
    ui.app.files.prompt = None
    ui.frame()
    assert "shape error" in ui.app.rects, "the shape row shows it too"
    step = trainer.step
    assert ui.frames_until(lambda: ui.session.trainer.step > step), "the previous network trains on"
    assert ui.session.trainer is trainer


def test_with_shape_takes_the_domain_a_shape_needs():
    formulas = Config(domain=[-2.0, 2.0, -1.0, 1.0])
    assert with_shape(formulas, "star").domain == [-2.0, 2.0, -1.0, 1.0], "the formulas' own"
    assert with_shape(Config(sdf="star", domain=[-3.0, 3.0, -3.0, 3.0]), "box").domain == [-3.0, 3.0, -3.0, 3.0]
    key = str(asset("shapes", "key.png"))  # square: its aspect ratio's domain is the default
    after_key = with_shape(Config(sdf=key, domain=[-1.0, 1.0, -1.0, 1.0]), "circle")
    assert after_key.domain == [-1.0, 1.0, -1.0, 1.0] and after_key.sdf == "circle"
    points = Config(dataset={"generator": "spiral"}, domain=[-6.0, 6.0, -6.0, 6.0])
    from_points = with_shape(points, "ring")
    assert from_points.dataset is None and from_points.domain == [-1.0, 1.0, -1.0, 1.0], "the points' domain goes"
