"""The data in the offscreen window: points drawn in their class colours over the learned
function (training points hidden by their toggle, the decision boundary with "discretize"),
data controls that change the points while the network trains on, and a CSV loaded through
File > Load CSV (the native dialog replaced by a fake): a bad one is a message naming its row
and column and changes nothing, a good one of three classes rebuilds the network for them."""

from __future__ import annotations

import imgui_bundle  # noqa: F401 (a dependency: a broken install fails here, never skips)
import numpy as np
import pytest
from test_ui_files import install_fake_dialogs
from test_ui_offscreen import _centre

from app import datasets
from app.config.config import Config, validate
from app.kernels.view_constants import BACKGROUND_LIGHTEN, CLASS_COLOURS
from app.loop.session import Session
from app.ui.offscreen import OffscreenApp
from app.views.data_view import point_radius

SPIRAL = dict(dataset={"generator": "spiral"}, domain=[-6.0, 6.0, -6.0, 6.0], points=120, batch_size=32, hidden=[8])


@pytest.fixture
def ui(gpu):
    app = OffscreenApp(Session(gpu, validate(Config(**SPIRAL)), grid=64, heatmaps=True), 1280, 800)
    app.frame(3)
    yield app
    app.close()


def _linear(srgb) -> np.ndarray:
    c = np.asarray(srgb, np.float64)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _lonely_training_point(ui) -> tuple[int, int, int]:
    """(column, row, class) in the view of a training point with no other point near it."""
    data, view = ui.session.trainer.data.dataset, ui.session.heatmaps.data_view
    x0, x1, y0, y1 = ui.session.config.domain
    px = (data.x - x0) / (x1 - x0) * view.size
    py = (1 - (data.y - y0) / (y1 - y0)) * view.size
    gaps = np.hypot(px[:, None] - px[None, :], py[:, None] - py[None, :]) + np.eye(data.count) * 1e9
    lonely = [i for i in range(data.train_count) if gaps[i].min() > 4 * point_radius(data.count, view.size)]
    i = lonely[0]
    return int(px[i]), int(py[i]), int(data.classes[i])


def _pixel(ui, column: int, row: int) -> np.ndarray:
    return ui.session.heatmaps.data_view.view.to_numpy()[row, column, :3].astype(np.float64)


def test_points_are_drawn_in_their_class_colour_and_hide(ui):
    column, row, cls = _lonely_training_point(ui)
    assert np.allclose(_pixel(ui, column, row), _linear(CLASS_COLOURS[cls]), atol=0.02)
    ui.click(*_centre(ui, "training points"))
    ui.frame()
    assert not ui.session.heatmaps.data_view.show_train
    hidden = _pixel(ui, column, row)
    assert not np.allclose(hidden, _linear(CLASS_COLOURS[cls]), atol=0.05), "the background shows through"
    ui.click(*_centre(ui, "discretize"))
    ui.frame()
    ui.click(*_centre(ui, "test points"))
    ui.frame()
    image = ui.session.heatmaps.data_view.view.to_numpy()[..., :3].astype(np.float64)
    lightened = [_linear(np.array(c) * (1 - BACKGROUND_LIGHTEN) + BACKGROUND_LIGHTEN) for c in CLASS_COLOURS[:2]]
    nearest = np.min([np.abs(image - c).max(axis=2) for c in lightened], axis=0)
    assert np.mean(nearest < 0.01) > 0.97, "discretized, without points: each place one of two colours"


def test_data_controls_change_the_points_as_training_goes_on(ui):
    trainer, seed = ui.session.trainer, ui.session.config.data_seed
    ui.click(*_centre(ui, "regenerate"))
    assert ui.session.config.data_seed != seed and ui.session.trainer is trainer
    x0, y0, x1, y1 = ui.app.rects["train ratio"]
    ui.click(x0 + 0.9 * (x1 - x0), (y0 + y1) / 2)  # the slider's value is taken when let go
    ui.frame()
    assert ui.session.config.train_ratio > 0.75
    assert trainer.data.train_count == int(120 * ui.session.config.train_ratio)
    step = trainer.step
    assert ui.frames_until(lambda: trainer.step > step, seconds=30) and ui.app.data.error == ""


def test_load_csv_through_the_file_menu(ui, monkeypatch, tmp_path):
    fake = install_fake_dialogs(monkeypatch)
    bad, good = tmp_path / "bad.csv", tmp_path / "three.csv"
    bad.write_text("x,y,label\n1,2,a\n3,oops,b\n")
    rng = np.random.default_rng(1)
    good.write_text("".join(f"{x:.3f},{y:.3f},{c}\n" for (x, y), c in zip(rng.normal(0, 2, (90, 2)), "abc" * 30)))
    fake.answers = [str(bad), str(good)]
    config = ui.session.config
    ui.click(*_centre(ui, "load csv"))
    assert ui.frames_until(lambda: ui.app.data.loading is None and ui.app.files.pending is None, 120)
    assert "row 3, column 2 (y): 'oops' is not a number" in ui.app.data.error
    assert ui.session.config == config, "a bad file changes nothing"
    ui.click(*_centre(ui, "load csv"))
    assert ui.frames_until(lambda: ui.session.config.dataset.get("csv") == datasets.entry_for(str(good))["csv"], 120)
    assert ui.session.trainer.plan.output_dim == 3 and ui.session.trainer.plan.loss_name == "softmax"
    assert fake.opened == ["Load CSV of points", "Load CSV of points"] and ui.app.data.error == ""
    ui.frame(2)
    assert ui.session.heatmaps.data_view is not None and ui.session.evaluator.passes > 0
