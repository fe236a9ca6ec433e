"""The full UI rendered offscreen through frame(), driven by injected mouse and keyboard input."""

from __future__ import annotations

import time

import numpy as np
import pytest
from helpers import paused_at_a_step_boundary
from imgui_bundle import imgui  # a dependency: a broken install fails here, never skips

from app.ui.offscreen import OffscreenApp


@pytest.fixture
def ui(make_session):
    app = OffscreenApp(make_session(), 1280, 800)
    app.frame(2)  # lay out once so widget rects are known
    yield app
    app.close()


def _centre(ui, name):
    x0, y0, x1, y1 = ui.app.rects[name]
    return (x0 + x1) / 2, (y0 + y1) / 2


def _type(ui, text: str) -> None:
    """Select all, type `text`, press Enter (one frame per event group, as a user would)."""
    ui.renderer.make_current()
    io = imgui.get_io()
    io.add_key_event(imgui.Key.mod_ctrl, True)
    io.add_key_event(imgui.Key.a, True)
    ui.frame()
    ui.renderer.make_current()
    io = imgui.get_io()
    io.add_key_event(imgui.Key.a, False)
    io.add_key_event(imgui.Key.mod_ctrl, False)
    io.add_input_characters_utf8(text)
    ui.frame()
    ui.press(imgui.Key.enter)


def test_pause_stops_step_count(ui):
    before = ui.session.trainer.step
    assert ui.frames_until(lambda: ui.session.trainer.step > before), "training runs by default"
    ui.click(*_centre(ui, "pause"))
    paused_at = ui.session.trainer.step
    ui.frame(3)  # frames that would train, were it running
    assert not ui.app.running
    assert ui.session.trainer.step == paused_at


def test_learning_rate_reaches_trainer(ui):
    ui.click(*_centre(ui, "exact lr"))
    _type(ui, "0.0375")
    assert ui.session.config.lr == pytest.approx(0.0375)
    assert ui.app.error is None


def test_invalid_learning_rate_shows_error_and_keeps_state(ui):
    ui.click(*_centre(ui, "exact lr"))
    _type(ui, "-1")
    assert ui.session.config.lr == pytest.approx(0.01)
    assert ui.app.error and "learning rate" in ui.app.error


def test_apply_new_width_rebuilds_and_trains(ui):
    # drag the width slider to the right, as a user would
    x, y = _centre(ui, "layer 1 width")
    ui.move(x - 60, y)
    ui.renderer.make_current()
    imgui.get_io().add_mouse_button_event(0, True)
    ui.frame()
    ui.move(x - 20, y)
    ui.renderer.make_current()
    imgui.get_io().add_mouse_button_event(0, False)
    ui.frame()
    width = ui.app.draft.hidden[0]
    assert width != 16 and ui.session.config.hidden == [16], "a draft until applied"
    ui.click(*_centre(ui, "apply"))
    old, trained_during_rebuild = ui.session.trainer, 0
    deadline = time.monotonic() + 60
    while ui.session.rebuild is not None and time.monotonic() < deadline:
        before = old.step
        ui.frame()  # the UI keeps drawing, and the old network training, while the new one compiles
        trained_during_rebuild += old.step - before
    assert ui.session.rebuild is None, "rebuild did not finish in 60 s"
    assert trained_during_rebuild > 0, "the old network trains on during the rebuild"
    assert ui.session.config.hidden == [width] and ui.session.trainer is not old
    # the first frames of a new network measure what a step costs
    assert ui.frames_until(lambda: ui.session.trainer.step >= 2), "the new network trains"
    assert np.isfinite(ui.session.train_loss)


def test_loss_plot_has_the_steps_losses_as_a_headless_run_trains_them(ui, gpu):
    """The window's loss curve holds every step's loss, the very values a Trainer of the same
    config gives without a window (same seed, same samples: bit for bit), and an evaluation."""
    from app.train.trainer import Trainer

    run = ui.session.history.current
    assert ui.frames_until(lambda: run.train.count >= 12 and run.eval.count >= 1), "12 steps and an evaluation"
    paused_at_a_step_boundary(ui)
    steps = ui.session.trainer.step
    window = run.train.y[:steps]
    headless = Trainer(gpu, ui.session.config).train(steps)
    assert len(window) == steps >= 12 and np.array_equal(window, headless.astype(window.dtype)), (window, headless)
    assert headless[-1] < headless[0], "the loss falls"


def test_heatmaps_not_blank_and_truth_differs_from_untrained(make_session):
    ui = OffscreenApp(make_session(), 1280, 800)
    try:
        ui.app.running = False  # untrained network
        # the first evaluation passes may be split over frames, then the heatmaps are drawn
        assert ui.frames_until(lambda: ui.session.heatmaps.drawn >= 1, force=True), "the heatmaps are drawn"
        ui.frame(2, force=True)  # and the UI around them, whose windows imgui sizes from the frame before
        atlas = ui.session.heatmaps.atlas.to_numpy().astype(np.float32)[..., :3]
        g = ui.session.heatmaps.grid
        truth, learned = atlas[:, :g], atlas[:, g : 2 * g]
        assert truth.std() > 0.05 and learned.std() > 0.01, "heatmaps are not flat"
        assert np.abs(truth - learned).mean() > 0.05
        pixels = ui.target.to_numpy()[..., :3].astype(np.float32)
        assert pixels.std() > 10, "the UI drew something"
    finally:
        ui.close()
