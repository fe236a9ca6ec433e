"""Issue 16: a frame never takes the app down. An exception inside a frame is caught where it
happened, shown in the window as one line that names a log file with the traceback, the training
state is kept and the app goes on."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import paused_at_a_step_boundary
from imgui_bundle import imgui  # a dependency: a broken install fails here, never skips

from app.ui.offscreen import OffscreenApp


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "slang-visual-trainer"


def _failing_panel(app) -> None:
    """A panel that leaves ImGui's stacks open, then raises, every frame."""
    imgui.text("about to fail")
    imgui.push_id("left open")
    imgui.begin_disabled(True)
    if imgui.begin_table("open table", 2):
        imgui.table_next_column()
        imgui.text("cell")
        raise ZeroDivisionError("a panel's bug")


def test_a_failing_panel_is_shown_and_logged_and_the_app_goes_on(make_session, monkeypatch, cache):
    from app.ui import frame
    from app.ui.layout import Panel, fraction

    panels = (*frame.PANELS[:-1], Panel("Broken", _failing_panel, column=2, height=fraction(0.5)), frame.PANELS[-1])
    monkeypatch.setattr(frame, "PANELS", panels)
    ui = OffscreenApp(make_session(), 1280, 800)
    try:
        ui.frame(6)
        step = ui.session.trainer.step
        ui.frame(10)
        assert ui.frames_until(lambda: ui.session.trainer.step > step, seconds=30), "training goes on"
        line = ui.app.failures.line
        assert line.startswith("the Broken panel failed: ZeroDivisionError: a panel's bug (details: ")
        assert "errors.log" in line, line
        log = (cache / "errors.log").read_text()
        assert log.count("ZeroDivisionError: a panel's bug") == 1, "logged once, not every frame"
        assert "_failing_panel" in log, "with its traceback"
        assert ui.app.failures.count >= 16
        assert {"pause", "failure", "dismiss failure"} <= set(ui.app.rects), "the other panels and the line are drawn"
        ui.click(*_centre(ui, "pause"))
        assert not ui.app.running, "and the window still answers clicks"
        ui.click(*_centre(ui, "dismiss failure"))
        ui.frame()
        ui.save(str(cache / "failing-panel.png"))
    finally:
        ui.close()


def _centre(ui, name):
    x0, y0, x1, y1 = ui.app.rects[name]
    return (x0 + x1) / 2, (y0 + y1) / 2


def test_a_failure_while_recording_training_keeps_the_state(make_session, monkeypatch, cache):
    ui = OffscreenApp(make_session(), 1280, 800)
    try:
        ui.frame(4)
        trainer = ui.session.trainer
        paused_at_a_step_boundary(ui)  # a loaded machine's frame may end inside a step split in pieces
        ui.frame()
        before = (trainer.step, trainer.samples_seen, trainer.parameters())
        submit = ui.app.frames.submit_training

        def failing(running):
            # the frame's steps recorded into a command buffer, then a failure before its submit
            trainer.record_steps(ui.session.gpu.device.create_command_encoder(), 3)
            raise RuntimeError("recording failed")

        monkeypatch.setattr(ui.app.frames, "submit_training", failing)
        ui.frame(3)
        assert "recording the frame's training failed: RuntimeError: recording failed" in ui.app.failures.line
        assert (trainer.step, trainer.samples_seen) == before[:2], "the steps never submitted are not counted"
        np.testing.assert_array_equal(trainer.parameters(), before[2])
        monkeypatch.setattr(ui.app.frames, "submit_training", submit)
        ui.app.running = True  # on the clock: a loaded machine's frames may hold no step
        assert ui.frames_until(lambda: trainer.step > before[0], seconds=30), "training goes on"
        assert np.isfinite(ui.session.train_loss)
        assert ui.session.history.current.train.x[-1] == trainer.step, "and its losses are the steps it took"
    finally:
        ui.close()


def test_a_failing_update_does_not_stop_the_frame(make_session, monkeypatch, cache):
    ui = OffscreenApp(make_session(), 1280, 800)
    try:
        ui.frame(2)

        def poll():
            raise OSError("the watched file's disk went away")

        monkeypatch.setattr(ui.app.targets, "poll", poll)
        step = ui.session.trainer.step
        assert ui.frames_until(lambda: ui.session.trainer.step > step, seconds=30), "training goes on"
        assert ui.app.failures.line.startswith("the frame's updates failed: OSError")
    finally:
        ui.close()
