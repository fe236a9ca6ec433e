"""A CSV of two value columns of different scales (issue 25, item 8): height = sin(3x) cos(2y) in
[-1, 1] and temperature = 100 (x^2 + y^2) in [0, 200]. Each output is named after its column,
with a scale of its own: the data view's titles and colour bars (in the window and in
heatmaps.png), the network diagram's output names, and each column's test loss (on the GPU,
against numpy's; in the loss plot as a line named after it; in summary.json, loss.csv and
checkpoints). The figures are checked against the CSV read by numpy."""

from __future__ import annotations

import csv
import json

import imgui_bundle  # noqa: F401 (a dependency: a broken install fails here, never skips)
import numpy as np
import pytest
from helpers import run_headless_here
from reference import forward as reference_forward
from reference import kernel_parameters

from app import datasets
from app.config.config import Config, validate
from app.config.truths import with_dataset
from app.files import checkpoint
from app.loop.session import Session
from app.ui.data_images import Scale
from app.ui.offscreen import OffscreenApp
from app.ui.report import write_run_heatmaps
from app.views.point_metrics import METRICS

COLUMNS = ("height", "temperature")


def write_csv(path, rows: int = 400, seed: int = 5) -> np.ndarray:
    """The issue's CSV: x, y in [-1, 1], then the two value columns; returns its numbers."""
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(-1, 1, (2, rows))
    table = np.stack([x, y, np.sin(3 * x) * np.cos(2 * y), 100 * (x**2 + y**2)], axis=1)
    path.write_text("x,y," + ",".join(COLUMNS) + "\n" + "".join(",".join(f"{v:.6f}" for v in r) + "\n" for r in table))
    return np.loadtxt(path, delimiter=",", skiprows=1)


def session_of(gpu, path, **fields) -> Session:
    config = with_dataset(validate(Config(hidden=[8], batch_size=64, **fields)), datasets.entry_for(str(path)))
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


def test_eight_columns_wrap_into_rows_inside_the_panel(gpu, tmp_path):
    """Eight value columns side by side ran past the Heatmaps panel (a scroll bar, four shown)."""
    path = tmp_path / "eight.csv"
    rng = np.random.default_rng(4)
    x, y = rng.uniform(-1, 1, (2, 120))
    names = [f"v{k}" for k in range(8)]
    rows = (
        ",".join(f"{v:.4f}" for v in [a, b, *(np.sin(k * a + b) * 10.0 ** (k - 3) for k in range(8))])
        for a, b in zip(x, y)
    )
    path.write_text("x,y," + ",".join(names) + "\n" + "\n".join(rows) + "\n")
    ui = OffscreenApp(session_of(gpu, path), 1280, 800)
    try:
        ui.frame(3)
        assert [scale.name for scale in ui.app.data_scales] == names
        panel = ui.app.windows["Heatmaps"]
        images = [ui.app.rects[f"data view {k}"] for k in range(8)]
        assert all(panel[0] < r[0] and r[2] <= panel[2] and r[3] <= panel[3] for r in images), (images, panel)
        assert len({r[1] for r in images}) == 2, "two rows of four"
        assert all(r[2] - r[0] >= 100 for r in images), "each at least 100 pixels a side"
    finally:
        ui.close()


def test_the_diagram_names_the_outputs_after_the_columns(ui):
    plan = ui.session.trainer.plan
    outputs = [plan.neuron_offset(len(plan.sizes) - 1) + k for k in range(plan.output_dim)]
    labels = [ui.app.diagram_labels[n] for n in outputs]
    assert [text for text, _ in labels] == list(COLUMNS)
    panel = ui.app.windows["Network diagram"]
    assert all(panel[0] < rect[0] and rect[2] <= panel[2] for _, rect in labels), (labels, panel)


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
        text, rect = ui.app.diagram_labels[plan.neuron_offset(len(plan.sizes) - 1) + 1]
        assert text.endswith("...") and long.startswith(text[:-3]) and len(text) > 6
        assert rect[2] <= ui.app.windows["Network diagram"][2]
        assert ui.app.data_scales[1].name == long  # the title is fitted as drawn; the scale keeps the name
    finally:
        ui.close()


# ---- each column's test loss ---------------------------------------------------------------------
def _numpy_test_losses(session) -> np.ndarray:
    """Each output's squared error averaged over the test set, from tests/reference.py's network."""
    data = session.trainer.data.dataset
    params = kernel_parameters(session.config, session.trainer.parameters())
    outputs = reference_forward(session.config, params, data.x, data.y)
    n = data.train_count
    return np.mean((outputs[n:] - data.truth[n:].astype(np.float64)) ** 2, axis=0)


def test_each_columns_test_loss_matches_numpy_and_they_add_up(gpu, csv_table):
    session = session_of(gpu, csv_table[0])
    session.advance(60)
    metrics = session.evaluator.evaluate().metrics
    got = [metrics["test_loss[height]"], metrics["test_loss[temperature]"]]
    expected = _numpy_test_losses(session)
    assert np.allclose(got, expected, rtol=1e-4), (got, expected)
    assert got[1] > 100 * got[0], "the scales differ: the total hides the height's fit"
    assert sum(got) == pytest.approx(metrics["test_loss"], rel=1e-5)
    assert session.evaluator.evaluate().metrics == metrics, "a fixed order of sums: the same bits again"


def test_classes_and_one_column_have_no_split(gpu, tmp_path):
    rng = np.random.default_rng(3)
    x, y = rng.uniform(-1, 1, (2, 80))
    one = tmp_path / "one.csv"
    one.write_text("x,y,h\n" + "".join(f"{a:.4f},{b:.4f},{a - b:.4f}\n" for a, b in zip(x, y)))
    session = session_of(gpu, one)
    session.advance(5)
    assert set(session.evaluator.evaluate().metrics) == set(METRICS), "one column: its loss is the test loss"
    spiral = Session(gpu, validate(Config(dataset={"generator": "spiral"}, points=100, hidden=[8])), grid=32)
    spiral.advance(5)
    assert set(spiral.evaluator.evaluate().metrics) == set(METRICS)


def test_the_loss_plot_draws_each_columns_test_loss_named_after_it(ui, monkeypatch):
    from imgui_bundle import implot

    drawn = {}
    plot_line = implot.plot_line

    def recording(label, x, y, spec):
        drawn[label] = (np.array(x), np.array(y), (spec.line_color.x, spec.line_color.y, spec.line_color.z))
        plot_line(label, x, y, spec)

    monkeypatch.setattr(implot, "plot_line", recording)
    session = ui.session
    for _ in range(3):
        session.advance(10)
        session.evaluate()
    ui.frame(force=True)
    run = session.history.current
    for column in COLUMNS:
        x, y, colour = drawn[f"test: {column}"]
        record = run.metrics[f"test_loss[{column}]"]
        assert np.array_equal(x, record.x) and np.array_equal(y, record.y), column
    assert np.array_equal(drawn["test"][1], run.eval.y) and "train set" in drawn
    colours = [drawn[label][2] for label in ("test: height", "test: temperature", "test", "train set", "batch")]
    assert len(set(colours)) == len(colours), colours
    names = [entry.name for entry in ui.app.loss_series]
    assert names == ["batch", "train set", "test", "test: height", "test: temperature"]
    # the legend's entries wrap inside the panel: none runs past its right edge
    panel = ui.app.windows["Loss"]
    assert all(ui.app.rects[f"legend {name}"][2] <= panel[2] for name in names)


def test_a_click_on_a_legend_entry_hides_its_curve_and_another_shows_it(ui, monkeypatch):
    from imgui_bundle import implot
    from test_ui_offscreen import _centre

    drawn = []
    plot_line = implot.plot_line
    monkeypatch.setattr(implot, "plot_line", lambda label, *rest: (drawn.append(label), plot_line(label, *rest)))
    ui.session.evaluate()
    ui.frame(force=True)
    ui.click(*_centre(ui, "legend test: temperature"))
    assert ui.app.loss_hidden == {"test: temperature"}
    drawn.clear()
    ui.frame(force=True)
    assert "test: temperature" not in drawn and "test: height" in drawn
    ui.click(*_centre(ui, "legend test: temperature"))
    assert ui.app.loss_hidden == set()
    drawn.clear()
    ui.frame(force=True)
    assert "test: temperature" in drawn


def test_summary_and_loss_csv_list_each_columns_test_loss(gpu, csv_table, tmp_path):
    path, _ = csv_table
    result = run_headless_here(gpu, tmp_path, "--dataset", str(path), "--iterations", "200", "--eval-every", "100",
                               "--hidden", "8", "--out", str(tmp_path / "out"))  # fmt: skip
    assert result.returncode == 0, result.stderr
    metrics = json.loads((tmp_path / "out" / "summary.json").read_text())["data"]["metrics"]
    by_column = [metrics[f"test_loss[{name}]"] for name in COLUMNS]
    assert sum(by_column) == pytest.approx(metrics["test_loss"], rel=1e-5)
    with open(tmp_path / "out" / "loss.csv") as handle:
        rows = list(csv.reader(handle))
    names = ["test_loss[height]", "test_loss[temperature]"]
    assert rows[0] == ["step", "train_loss", "test_loss", "train_set_loss", *names]
    last = dict(zip(rows[0], rows[200]))
    assert int(last["step"]) == 200
    assert [float(last[name]) for name in names] == by_column, "the last evaluation's, in both files"
    assert rows[150][4:] == ["", ""], "empty where no evaluation was taken"


def test_a_checkpoint_keeps_each_columns_curve(gpu, csv_table, tmp_path):
    session = session_of(gpu, csv_table[0])
    for _ in range(2):
        session.advance(10)
        session.evaluate()
    checkpoint.save(tmp_path / "c.ckpt", checkpoint.capture(session))
    loaded = checkpoint.load(tmp_path / "c.ckpt").runs[-1].metrics
    for column in COLUMNS:
        record = session.history.current.metrics[f"test_loss[{column}]"]
        assert np.array_equal(loaded[f"test_loss[{column}]"].y, record.y) and record.count == 2


def test_after_formulas_the_csvs_loss_has_the_axis_to_itself(ui, make_session):
    """Issue 42: a CSV's squared error of about 1,000 (a sweep trial trained again) shared the axis
    with the formulas' run before it, of the same loss, and squashed it flat. Runs of another
    problem are hidden as runs of another loss are, and the note names them by their data."""
    formulas = make_session()
    formulas.advance(5)
    history = ui.session.history
    history.runs.insert(0, formulas.history.current)  # as a rebuild keeps it
    assert history.current.label == "height_temperature.csv, 4-8-2 seed 0"
    assert history.current.loss == history.earlier[0].loss
    ui.frame(force=True)
    assert not any(entry.earlier for entry in ui.app.loss_series), [entry.label for entry in ui.app.loss_series]
    assert ui.app.loss_note == "1 earlier run of another problem hidden (formulas, 4-16-4 seed 0)"
