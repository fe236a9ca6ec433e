"""A CSV of two value columns of different scales (issue 25, item 8): height = sin(3x) cos(2y) in
[-1, 1] and temperature = 100 (x^2 + y^2) in [0, 200]. Each output is named after its column,
with a scale of its own: the data view's titles and colour bars (in the window and in
heatmaps.png) and the network diagram's output names; the figures are checked against the CSV
read by numpy."""

from __future__ import annotations

import imgui_bundle  # noqa: F401 (a dependency: a broken install fails here, never skips)
import numpy as np
import pytest

from app import datasets
from app.config.config import Config, validate
from app.loop.session import Session
from app.ui.data_images import Scale
from app.ui.offscreen import OffscreenApp
from app.ui.report import write_run_heatmaps

COLUMNS = ("height", "temperature")


def write_csv(path, rows: int = 400, seed: int = 5) -> np.ndarray:
    """The issue's CSV: x, y in [-1, 1], then the two value columns; returns its numbers."""
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(-1, 1, (2, rows))
    table = np.stack([x, y, np.sin(3 * x) * np.cos(2 * y), 100 * (x**2 + y**2)], axis=1)
    path.write_text("x,y," + ",".join(COLUMNS) + "\n" + "".join(",".join(f"{v:.6f}" for v in r) + "\n" for r in table))
    return np.loadtxt(path, delimiter=",", skiprows=1)


def session_of(gpu, path, **fields) -> Session:
    config = datasets.configure(validate(Config(hidden=[8], batch_size=64, **fields)), datasets.entry_for(str(path)))
    return Session(gpu, config, grid=64, heatmaps=True)


def expected_scales(table: np.ndarray) -> list[Scale]:
    tops = np.max(np.abs(table[:, 2:]), axis=0).astype(np.float32)
    return [Scale(name, f"{-top:.3g}", f"{top:.3g}") for name, top in zip(COLUMNS, tops)]


@pytest.fixture
def csv_table(tmp_path):
    path = tmp_path / "height_temperature.csv"
    return path, write_csv(path)


@pytest.fixture
def ui(gpu, csv_table):
    session = session_of(gpu, csv_table[0])
    session.advance(20)
    session.evaluate()
    app = OffscreenApp(session, 1280, 800)
    app.app.running = False
    app.frame(3, force=True)
    yield app
    app.close()


def test_each_value_column_has_its_title_and_own_scale_in_the_window(ui, csv_table):
    _, table = csv_table
    assert ui.app.data_scales == expected_scales(table)
    # two images, side by side, each under its title
    left, right = ui.app.rects["data view 0"], ui.app.rects["data view 1"]
    assert left[2] < right[0] and left[1] == right[1]


def test_the_diagram_names_the_outputs_after_the_columns(ui):
    plan = ui.session.trainer.plan
    outputs = [plan.neuron_offset(len(plan.sizes) - 1) + k for k in range(plan.output_dim)]
    labels = [ui.app.diagram_labels[n] for n in outputs]
    assert [text for text, _, _ in labels] == list(COLUMNS)
    panel = ui.app.windows["Network diagram"]
    assert all(panel[0] < left and right <= panel[2] for _, left, right in labels), (labels, panel)


def test_formulas_keep_f1_f2(make_session):
    ui = OffscreenApp(make_session(targets=["x", "y"]), 1280, 800)
    try:
        ui.frame(3)
        plan = ui.session.trainer.plan
        first = plan.neuron_offset(len(plan.sizes) - 1)
        assert [ui.app.diagram_labels[first + k][0] for k in range(2)] == ["f1", "f2"]
    finally:
        ui.close()


def test_heatmaps_png_has_a_title_and_scale_for_each_column(gpu, csv_table, tmp_path):
    path, table = csv_table
    session = session_of(gpu, path)
    session.advance(20)
    session.evaluate()
    assert write_run_heatmaps(session, tmp_path / "heatmaps.png") == expected_scales(table)
    assert (tmp_path / "heatmaps.png").stat().st_size > 0


def test_a_long_column_name_is_cut_short_not_clipped(gpu, tmp_path):
    path = tmp_path / "long.csv"
    long = "temperature_of_the_surface_in_degrees_celsius"
    rng = np.random.default_rng(2)
    x, y = rng.uniform(-1, 1, (2, 50))
    path.write_text(f"x,y,h,{long}\n" + "".join(f"{a:.4f},{b:.4f},{a * b:.4f},{a + b:.4f}\n" for a, b in zip(x, y)))
    ui = OffscreenApp(session_of(gpu, path), 1280, 800)
    try:
        ui.frame(3)
        plan = ui.session.trainer.plan
        text, left, right = ui.app.diagram_labels[plan.neuron_offset(len(plan.sizes) - 1) + 1]
        assert text.endswith("...") and long.startswith(text[:-3]) and len(text) > 6
        assert right <= ui.app.windows["Network diagram"][2]
        assert ui.app.data_scales[1].name == long  # the title is fitted as drawn; the scale keeps the name
    finally:
        ui.close()
