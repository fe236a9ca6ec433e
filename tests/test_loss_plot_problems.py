"""The loss plot across problems (issue 25, item 9). The spiral (binary cross-entropy) changed to
a CSV of values or to formulas (squared error) in the window: a new run at step 0 with a fresh
network, as Apply makes; the loss axis titled with the new run's loss; the spiral's run not drawn
on it, and the legend saying so; changed back, the spiral's earlier run is drawn again and the
squared error's is hidden. The earlier runs' colours are distinct from every series' (the
accuracies' green was one of them), measured in CIELAB; checkpoints keep each run's loss, and a
run saved without it is hidden too."""

from __future__ import annotations

import itertools

import imgui_bundle  # noqa: F401 (a dependency: a broken install fails here, never skips)
import numpy as np
import pytest
from imgui_bundle import imgui, implot
from old_checkpoints import full_series_bytes
from test_ui_data import SPIRAL
from test_ui_files import install_fake_dialogs
from test_ui_offscreen import _centre
from test_value_columns import write_csv

from app.config.config import Config, validate
from app.config.truths import truth_name
from app.files import checkpoint
from app.files import checkpoint_format as ckpt
from app.loop.session import Session
from app.train.trainer import Trainer
from app.ui.offscreen import OffscreenApp
from app.ui.panels import loss_colours, psnr_plot
from app.ui.panels.loss_series import comparable

DISTINCT = 25.0  # CIE76 colour difference between any two series drawn together (2.3 is a just noticeable one)


def lab(colour) -> np.ndarray:
    """sRGB (0-1) to CIELAB (D65), from the definitions."""
    c = np.asarray(colour, np.float64)[:3]
    linear = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ linear
    xyz /= np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def rgb(colour: imgui.ImVec4) -> tuple[float, float, float]:
    return colour.x, colour.y, colour.z


def test_the_earlier_colours_are_distinct_from_every_series_colour():
    others = [loss_colours.TRAIN, loss_colours.TRAIN_SET, loss_colours.EVAL, psnr_plot.PSNR]
    others += [*loss_colours.ACCURACY.values(), *loss_colours.OUTPUTS]
    for earlier, other in itertools.product(loss_colours.EARLIER, others):
        assert np.linalg.norm(lab(rgb(earlier)) - lab(rgb(other))) > DISTINCT, (rgb(earlier), rgb(other))
    a, b = (lab(rgb(c)) for c in loss_colours.EARLIER)
    assert np.linalg.norm(a - b) > DISTINCT


class Recorder:
    """What the loss plot draws in a frame: each line's label and colour, and the axes' titles."""

    def __init__(self, monkeypatch):
        self.lines: dict[str, tuple[float, float, float]] = {}
        self.axes: tuple[str, str] | None = None
        plot_line, setup_axes = implot.plot_line, implot.setup_axes

        def line(label, x, y, spec):
            self.lines[label] = rgb(spec.line_color)
            plot_line(label, x, y, spec)

        def axes(x_label, y_label, *rest):
            self.axes = (x_label, y_label)
            setup_axes(x_label, y_label, *rest)

        monkeypatch.setattr(implot, "plot_line", line)
        monkeypatch.setattr(implot, "setup_axes", axes)

    def frame(self, ui) -> None:
        self.lines.clear()
        ui.frame(force=True)

    def assert_distinct(self) -> None:
        for (a, ca), (b, cb) in itertools.combinations(self.lines.items(), 2):
            assert np.linalg.norm(lab(ca) - lab(cb)) > DISTINCT, (a, ca, b, cb)


@pytest.fixture
def ui(gpu):
    app = OffscreenApp(Session(gpu, validate(Config(**SPIRAL)), grid=64, heatmaps=True), 1280, 800)
    app.frame(3)
    yield app
    app.close()


def _trained_then_paused(ui, steps: int) -> None:
    ui.app.running = True
    assert ui.frames_until(lambda: ui.session.trainer.step >= steps), f"{steps} steps"
    ui.app.running = False
    ui.frame()


def _rebuilt(ui) -> None:
    assert ui.frames_until(lambda: ui.session.rebuild is None, 120), "the rebuild ends"
    assert ui.session.rebuild_error is None, ui.session.rebuild_error


def _pick(ui, combo: str, index: int) -> None:
    """Opens `combo` with a click and clicks its entry `index`, one line of the list each."""
    x0, y0, x1, y1 = ui.app.rects[combo]
    ui.click((x0 + x1) / 2, (y0 + y1) / 2)
    ui.renderer.make_current()
    step = imgui.get_text_line_height_with_spacing()
    ui.click((x0 + x1) / 2, y1 + imgui.get_style().window_padding.y + (index + 0.25) * step)


def test_spiral_to_a_csv_of_values_and_back(ui, monkeypatch, tmp_path, gpu):
    record = Recorder(monkeypatch)
    _trained_then_paused(ui, 40)
    spiral_run = ui.session.history.current
    assert spiral_run.loss == "logistic" and spiral_run.train.count >= 40
    # File > Load CSV: two value columns
    path = tmp_path / "values.csv"
    write_csv(path)
    install_fake_dialogs(monkeypatch).answers = [str(path)]
    ui.click(*_centre(ui, "load csv"))
    assert ui.frames_until(lambda: ui.session.config.dataset.get("csv") == str(path), 120)
    _rebuilt(ui)
    session = ui.session
    assert session.trainer.step == 0 and session.trainer.samples_seen == 0, "a new run at step 0"
    fresh = Trainer(gpu, session.config)
    assert np.array_equal(session.trainer.parameters(), fresh.parameters()), "a fresh network, as Apply makes"
    assert session.history.current.loss == "squared" and session.history.current.train.count == 0
    assert session.history.earlier[-1] is spiral_run
    _trained_then_paused(ui, 5)
    assert session.history.current.train.x[0] == 1, "the curve starts at step 1"
    record.frame(ui)
    # the current run's loss (without "loss: " where the legend's lines leave the plot short)
    assert record.axes[1] in ("loss: squared error summed over outputs", "squared error summed over outputs")
    assert not any(label.startswith("earlier") for label in record.lines), record.lines
    assert "test: height" in record.lines
    assert ui.app.loss_note == "1 earlier run of another loss hidden (binary cross-entropy)"
    record.assert_distinct()
    # back to the spiral: its earlier run is drawn again, on its own loss's axis
    _pick(ui, "dataset", 4)
    _rebuilt(ui)
    assert ui.session.config.dataset == {"generator": "spiral"}
    assert ui.session.trainer.step == 0 and ui.session.history.current.loss == "logistic"
    _trained_then_paused(ui, 5)
    record.frame(ui)
    assert record.axes[1] in ("loss: binary cross-entropy", "binary cross-entropy")
    earlier = [label for label in record.lines if label.startswith("earlier")]
    assert earlier == [f"earlier: {spiral_run.label}##0"], record.lines
    assert record.lines[earlier[0]] == rgb(loss_colours.EARLIER[0])
    assert ui.app.loss_note == "1 earlier run of another loss hidden (squared error summed over outputs)"
    assert {"train acc.", "test acc.", "batch", "test"} <= set(record.lines)
    record.assert_distinct()


def test_spiral_to_formulas_starts_at_step_0(ui):
    _trained_then_paused(ui, 30)
    _pick(ui, "dataset", 0)
    _rebuilt(ui)
    assert ui.session.config.dataset is None
    assert ui.session.trainer.step == 0 and ui.session.history.current.loss == "squared"
    assert [run.loss for run in ui.session.history.runs] == ["logistic", "squared"]


def test_another_dataset_of_the_same_problem_trains_on(ui):
    _trained_then_paused(ui, 30)
    step, run = ui.session.trainer.step, ui.session.history.current
    _pick(ui, "dataset", 1)  # circle: two classes, as the spiral
    assert ui.session.config.dataset == {"generator": "circle"}
    assert ui.session.rebuild is None and ui.session.trainer.step == step and ui.session.history.current is run


def test_checkpoints_keep_each_runs_loss_and_old_ones_hide_their_earlier_runs(gpu):
    session = Session(gpu, validate(Config(**SPIRAL)), grid=32)
    session.advance(10)
    session.reset(seed=1)
    session.advance(10)
    saved = checkpoint.capture(session)
    decoded = ckpt.decode(ckpt.encode(saved)).runs
    assert [run.loss for run in decoded] == ["logistic", "logistic"]
    assert [run.problem for run in decoded] == [session.history.current.problem] * 2 == ["points/logistic/1"] * 2
    # a version 2 file saved no loss: its last run takes the network's, the earlier one is hidden
    old = ckpt.decode(full_series_bytes(saved, 2))
    assert [(run.loss, run.problem) for run in old.runs] == [(None, None)] * 2
    fresh = Session(gpu, saved.config, grid=32)
    checkpoint.restore(fresh, old)
    shown, note = comparable(fresh.history)
    assert fresh.history.current.loss == "logistic" and shown == []
    assert note == "1 earlier run of another loss hidden (saved without its loss)"


def test_a_checkpoint_of_an_unknown_loss_is_refused_in_one_line(gpu):
    session = Session(gpu, validate(Config(**SPIRAL)), grid=32)
    session.advance(5)
    saved = checkpoint.capture(session)
    saved.runs[0].loss = "hinge"
    with pytest.raises(ckpt.CheckpointError, match="has a run of an unknown loss") as error:
        ckpt.decode(ckpt.encode(saved), "c.ckpt")
    assert "\n" not in str(error.value)


def test_runs_are_named_by_their_data():
    """Issue 42: after a grey image and then a star, two earlier runs were both "earlier: 4-16-1
    seed 0"."""
    image = {"file": "/pictures/grey.png", "width": 8, "height": 8, "channels": 1, "sha256": "0" * 64}
    edited = ["sin(3*x)", "2*x + y", "0.5*x*x + 1.2*y", "x + 0.5*y*y"]
    configs = [
        Config(image=image),
        Config(sdf="star"),
        Config(sdf="/shapes/key.svg"),
        Config(dataset={"generator": "spiral"}),
        Config(dataset={"csv": "/data/values.csv"}),
        Config(slang_target={"file": "/code/waves.slang"}),
        Config(),
        Config(targets=edited),
    ]
    names = [truth_name(config) for config in configs]
    assert names[:7] == [
        "image grey.png",
        "shape star",
        "shape key.svg",
        "spiral",
        "values.csv",
        "waves.slang",
        "formulas",
    ]
    assert names[7] == "sin(3*x); 2*x + y; 0.5*x*x + 1.2*y; x..." and len(set(names)) == len(names)
