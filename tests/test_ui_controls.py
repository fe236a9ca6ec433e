"""The window's controls as a new user meets them, driven with injected mouse and keyboard input
in the offscreen UI: each checks the value the widget set, not only that it drew."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import paused_at_a_step_boundary
from imgui_bundle import imgui  # a dependency: a broken install fails here, never skips
from test_ui_offscreen import _centre, _type

from app.kernels.view_constants import INVALID_COLOUR
from app.model.optimizers import OPTIMIZERS
from app.ui.offscreen import OffscreenApp
from app.ui.panels.batch_slider import BATCH_SIZES


def _click_at(ui, name: str, fraction: float) -> None:
    x0, y0, x1, y1 = ui.app.rects[name]
    ui.click(x0 + fraction * (x1 - x0), (y0 + y1) / 2)


SLIDERS = {  # name: (the value it set, what a click at `fraction` of its width should set, tolerance)
    "batch size": (lambda ui: math.log2(ui.session.config.batch_size), lambda f: 4 + 16 * f, 1.0),
    "learning rate": (lambda ui: math.log10(ui.session.config.lr), lambda f: -5 + 5 * f, 0.25),
    "layer 1 width": (lambda ui: ui.app.draft.hidden[0], lambda f: 1 + 255 * f, 8),
    "heatmap size": (lambda ui: ui.app.layout.image_em, lambda f: 4 + 10 * f, 0.5),
}


@pytest.mark.parametrize("name", SLIDERS)
def test_every_slider_sets_the_value_under_the_click(ui, name):
    value, expected, tolerance = SLIDERS[name]
    seen = []
    for fraction in (0.1, 0.5, 0.9):
        _click_at(ui, name, fraction)
        seen.append(value(ui))
        assert seen[-1] == pytest.approx(expected(fraction), abs=tolerance), (name, fraction, seen)
    assert seen == sorted(seen), "further right is more"


def test_momentum_slider_and_round_values(ui):
    ui.click(*_centre(ui, "learning rate"))
    lr = ui.session.config.lr
    assert lr <= 1.0 and lr == float(f"{lr:.2e}"), f"the slider sets a round learning rate, not {lr!r}"
    ui.app.apply_hot("optimizer", optimizer="sgd")
    ui.frame()
    _click_at(ui, "momentum", 0.75)
    assert ui.session.config.beta1 == pytest.approx(0.99 * 0.75, abs=0.05)
    assert ui.session.config.beta1 == round(ui.session.config.beta1, 2)
    assert ui.session.config.batch_size in BATCH_SIZES


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_each_optimizer_shows_its_own_hyper_parameters(ui, name):
    ui.app.apply_hot("optimizer", optimizer=name)
    ui.app.rects.clear()
    ui.frame()
    mine = {hyper.name for hyper in OPTIMIZERS[name].hypers}
    every = {hyper.name for optimizer in OPTIMIZERS.values() for hyper in optimizer.hypers}
    assert mine <= set(ui.app.rects) and not (every - mine) & set(ui.app.rects)


def test_typing_adamws_weight_decay(ui):
    ui.app.apply_hot("optimizer", optimizer="adamw")
    ui.frame()
    ui.click(*_centre(ui, "weight decay"))
    _type(ui, "0.05")
    assert ui.session.config.weight_decay == pytest.approx(0.05)
    ui.click(*_centre(ui, "weight decay"))
    _type(ui, "1.5")
    assert "weight decay must be in [0, 1)" in ui.app.field_errors["weight decay"]
    assert ui.session.config.weight_decay == pytest.approx(0.05), "the state is kept"


def test_a_rejected_value_is_reported_by_its_field_and_cleared_when_fixed(ui):
    ui.click(*_centre(ui, "exact lr"))
    _type(ui, "-1")
    assert "learning rate" in ui.app.field_errors["exact lr"]
    assert ui.session.config.lr == pytest.approx(0.01), "the state is kept"
    field, message = ui.app.rects["exact lr"], ui.app.rects["exact lr error"]
    panel = ui.app.windows["Training"]
    assert 0 <= message[1] - field[3] < 20, "the message is right under the field"
    assert panel[0] <= message[0] and message[2] <= panel[2] and message[3] <= panel[3], "and in view"
    ui.click(*_centre(ui, "exact lr"))
    _type(ui, "0.02")
    assert ui.session.config.lr == pytest.approx(0.02)
    ui.frame()
    assert ui.app.field_errors == {}


def test_typing_a_seed_starts_again_from_it(ui):
    ui.click(*_centre(ui, "seed"))
    _type(ui, "7")
    assert ui.session.config.seed == 7
    assert ui.session.history.current.label.endswith("seed 7")
    ui.click(*_centre(ui, "seed"))
    _type(ui, "-3")
    assert ui.session.config.seed == 7 and "seed" in ui.app.field_errors["seed"]


def _inside(rect, width, height) -> bool:
    x0, y0, x1, y1 = rect
    return 0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height


def _overlap(a, b) -> float:
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


@pytest.mark.parametrize("size", [(600, 400), (1600, 1000), (2560, 1440)])
def test_the_layout_follows_the_window_size(ui, size):
    ui.resize(*size)
    ui.frame(3)
    windows = ui.app.windows
    for name, rect in windows.items():
        assert _inside(rect, *size), (name, rect)
        assert rect[2] - rect[0] >= 0.1 * size[0] * 0.5 and rect[3] - rect[1] >= 40, (name, rect)
    rects = list(windows.values())
    assert all(_overlap(a, b) == 0 for i, a in enumerate(rects) for b in rects[i + 1 :])
    covered = sum((r[2] - r[0]) * (r[3] - r[1]) for r in rects)
    assert covered > 0.95 * size[0] * (size[1] - imgui.get_frame_height())


def _drag(ui, start: tuple[float, float], end: tuple[float, float]) -> None:
    ui.move(*start)
    ui.renderer.make_current()
    imgui.get_io().add_mouse_button_event(0, True)
    ui.frame()
    ui.move(*end)
    ui.renderer.make_current()
    imgui.get_io().add_mouse_button_event(0, False)
    ui.frame(4)


def _drag_left_splitter(ui, dx: float) -> None:
    """Drags the splitter right of the Training panel (the left column's edge) by `dx`."""
    training = ui.app.windows["Training"]
    y = (training[1] + training[3]) / 2
    _drag(ui, (training[2] + 1, y), (training[2] + 1 + dx, y))


def test_reset_layout_undoes_a_dragged_splitter(ui):
    # paused: the panels' heights follow their rows, which a loaded machine's training changed
    # between the default taken here and the reset (Training 616 px, then 631)
    paused_at_a_step_boundary(ui)
    ui.frame(3)
    default = dict(ui.app.windows)
    training = default["Training"]
    _drag_left_splitter(ui, 120)
    assert ui.app.windows["Training"][2] > training[2] + 60, "the splitter moved"
    ui.resize(1000, 700)
    ui.frame(4)
    assert ui.app.dock.ratios is not None, "the dragged layout is kept through a resize"
    ui.resize(1280, 800)
    ui.frame(3)
    ui.click(*_centre(ui, "menu view"))
    ui.click(*_centre(ui, "reset layout"))
    ui.frame(4)
    assert ui.app.dock.ratios is None
    for name, rect in default.items():
        assert np.allclose(ui.app.windows[name], rect, atol=2), name


def test_dragged_panel_sizes_come_back_at_the_next_launch(ui, make_session, tmp_path, monkeypatch):
    from app.files import saved
    from app.ui import settings

    monkeypatch.setattr(saved, "settings_path", lambda: tmp_path / "settings.json")
    paused_at_a_step_boundary(ui)  # each window paused, showing the same rows (as in the test above)
    ui.frame(3)
    default = dict(ui.app.windows)
    _drag_left_splitter(ui, 120)
    diagram = ui.app.windows["Network diagram"]
    x = (diagram[0] + diagram[2]) / 2
    _drag(ui, (x, diagram[3] + 1), (x, diagram[3] + 1 - 100))  # the diagram/loss splitter, up
    dragged = dict(ui.app.windows)
    assert dragged["Training"][2] > default["Training"][2] + 60
    assert dragged["Network diagram"][3] < default["Network diagram"][3] - 50, "the second splitter moved"
    settings.save(ui.app)
    assert saved.load()["view"]["panel_ratios"] == pytest.approx(list(ui.app.dock.ratios))

    def launch(data: dict) -> OffscreenApp:
        later = OffscreenApp(make_session(), 1280, 800)
        later.app.running = False
        settings.restore_view(later.app, data)
        later.frame(3)
        return later

    later = launch(saved.load())
    try:
        assert later.app.dock.ratios == pytest.approx(ui.app.dock.ratios)
        for name, rect in dragged.items():
            assert np.allclose(later.app.windows[name], rect, atol=2), (name, later.app.windows[name], rect)
        later.click(*_centre(later, "menu view"))
        later.click(*_centre(later, "reset layout"))
        later.frame(4)
        for name, rect in default.items():
            assert np.allclose(later.app.windows[name], rect, atol=2), name
        settings.save(later.app)
        assert saved.load()["view"]["panel_ratios"] is None, "a reset layout is saved as the defaults"
    finally:
        later.close()
    fresh = launch({})  # --fresh: the CLI passes no saved settings
    try:
        assert fresh.app.dock.ratios is None
        assert np.allclose(fresh.app.windows["Training"], default["Training"], atol=2)
    finally:
        fresh.close()


@pytest.mark.parametrize("value", ["wide", [0.3], [0.3, 0.5, 0.4, float("nan")], [0.99, 0.5, 0.5, 0.5], None])
def test_saved_panel_ratios_that_do_not_fit_are_ignored(ui, value):
    from app.ui import settings

    # Paused, so that both windows show the same figures: a samples/s row that wraps to a second
    # line while the machine is loaded would move the default split between them.
    ui.app.running = False
    ui.frame(3)
    default = dict(ui.app.windows)
    later = OffscreenApp(ui.session, 1280, 800)
    try:
        later.app.running = False
        settings.restore_view(later.app, {"view": {"panel_ratios": value}})
        later.frame(3)
        assert later.app.dock.ratios is None
        for name, rect in default.items():
            assert np.allclose(later.app.windows[name], rect, atol=2), name
    finally:
        later.renderer.destroy()


def test_a_new_panel_is_one_row_of_the_table(make_session, monkeypatch):
    """What adding a panel takes: its draw function and a row in app/ui/panels/table.py (patched
    in here). It is drawn, docked in its column between the rows around it, and saved."""
    from app.ui import frame
    from app.ui.layout import Panel, fraction

    drawn = []

    def notes(app) -> None:
        drawn.append(app.frame_index)
        imgui.text("notes")

    panels = (*frame.PANELS[:-1], Panel("Notes", notes, column=2, height=fraction(0.5)), frame.PANELS[-1])
    monkeypatch.setattr(frame, "PANELS", panels)
    ui = OffscreenApp(make_session(), 1280, 800)
    try:
        ui.frame(6)  # built, settled, measured
        assert drawn, "its body was drawn"
        diagram, added, loss = (ui.app.windows[name] for name in ("Network diagram", "Notes", "Loss"))
        assert diagram[3] <= added[1] + 3 and added[3] <= loss[1] + 3, "stacked between its neighbours"
        assert added[0] == diagram[0] == loss[0] and added[2] == diagram[2], "in the right column"
        assert (added[3] - added[1]) == pytest.approx((loss[3] - loss[1]), abs=4), "half of what is left"
        assert len(ui.app.dock.measured) == 5, "one more ratio"
    finally:
        ui.close()


def test_non_finite_predictions_have_their_own_colour_and_legend(ui):
    ui.click(*_centre(ui, "pause"))
    trainer = ui.session.trainer
    trainer.set_parameters(np.full(trainer.plan.param_count, np.nan, np.float32))
    # A pass runs in ranges of cells sized to the frame's time budget: on a loaded CPU driver it
    # takes more frames (40 were once too few in CI), so wait on the clock instead.
    ui.frames_until(lambda: ui.session.invalid_cells.all())
    grid = ui.session.heatmaps.grid
    assert np.all(ui.session.invalid_cells == grid * grid), "every cell is counted as not finite"
    atlas = ui.session.heatmaps.atlas.to_numpy().astype(np.float32)[..., :3]
    np.testing.assert_allclose(
        atlas[:, grid : 2 * grid], np.broadcast_to(INVALID_COLOUR, atlas[:, grid : 2 * grid].shape), atol=0.01
    )
    assert np.all(np.isfinite(ui.session.error_max)), "colour bars keep a finite range"
    truth = atlas[:, :grid]
    assert not np.any(np.all(np.abs(truth - INVALID_COLOUR) < 0.01, axis=-1)), "the truth is finite"


def test_samples_seen_is_cumulative_across_batch_changes(ui):
    ui.frame(3)
    first = ui.session.trainer.step
    assert ui.session.trainer.samples_seen == first * 4096
    ui.app.apply_hot("batch size", batch_size=256)
    ui.frame(3)
    later = ui.session.trainer.step - first
    assert later > 0 and ui.session.trainer.samples_seen == first * 4096 + later * 256


def test_unchecked_checkboxes_stand_out_from_the_background(ui):
    ui.click(*_centre(ui, "show f1"))
    assert ui.app.layout.outputs == [1, 2, 3]
    ui.frame()
    x0, y0, x1, y1 = (int(v) for v in ui.app.rects["show f1"])
    pixels = ui.target.to_numpy()[..., :3].astype(int)
    box = pixels[y0:y1, x0 : x0 + (y1 - y0)]  # the square part of the widget
    background = pixels[y0 + (y1 - y0) // 2, x0 - 3]
    assert np.abs(box - background).max() > 40, "the empty box's frame is visible"


def test_diagram_titles_never_overlap(make_session):
    ui = OffscreenApp(make_session(hidden=[8] * 8), 1280, 800)
    try:
        ui.frame(3)
        titles = sorted(ui.app.diagram_titles)
        assert len(titles) == 10
        assert all(a[1] < b[0] for a, b in zip(titles, titles[1:])), titles
    finally:
        ui.close()
