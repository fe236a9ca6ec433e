"""The one frame function shared by the window loop, the offscreen renderer and the benchmark:
UI -> the session's training and evaluation work -> UI drawing, all in one command encoder.

No exception leaves a frame (app/ui/failures.py): each panel, the UI around them, the frame's
updates, its training work and what it reads back are caught apart, logged and shown in one
line, and the frame goes on without the part that failed."""

from __future__ import annotations

import time

import slangpy as spy
from imgui_bundle import imgui

from ..budget import TrainingWork
from ..frame_driver import FrameWork
from ..ui import layout, menu, path_prompt, restore
from ..ui.failures import guarded, guarded_ui
from ..ui.panels import neuron_view, training
from ..ui.panels.table import LOSS, PANELS
from ..ui.state import AppState
from ..ui.style import BAD, MUTED

BACKGROUND = [0.06, 0.065, 0.075, 1.0]


def draw_ui(app: AppState) -> None:
    """The menu bar, the docked panels and the notices; the layout follows the window's size."""
    menu.draw(app)
    layout.dock_space(app.dock, PANELS, app.windows, app.layout_reset, app)
    app.layout_reset = False
    for panel in PANELS:
        if imgui.begin(panel.title, None, panel.flags)[0]:
            part = f"the {panel.title} panel"
            if not guarded_ui(app, part, lambda panel=panel: panel.draw(app)):
                _failed(app, part)
        app.remember_window(panel.title)
        imgui.end()
    if app.selected_neuron is not None and LOSS in app.windows:  # drawn over the Loss panel
        guarded_ui(app, "the neuron view", lambda: neuron_view.draw(app, app.windows[LOSS]))
    guarded_ui(app, "the restore prompt", lambda: restore.draw_offer(app))
    guarded_ui(app, "the path field", lambda: path_prompt.draw(app))
    training.shortcuts(app)
    menu.notice(app)


def _failed(app: AppState, part: str) -> None:
    """What a panel that raised shows instead of what it could not draw."""
    imgui.push_text_wrap_pos(0.0)
    imgui.text_colored(BAD, app.failures.by_part[part])
    imgui.text_colored(MUTED, "Training goes on; the rest of the window works. Details: see the menu bar.")
    imgui.pop_text_wrap_pos()


def _updates(app: AppState) -> None:
    app.files.poll()
    if app.session.poll_rebuild():
        app.on_new_network()
    app.targets.poll()
    app.run_grad_check_if_wanted()


def frame(app: AppState, target: spy.Texture, delta_time: float) -> None:
    """Builds the UI, records the training work (app.frames, the frame driver) and the UI into one
    encoder, submits, waits and hands the results back through the frame driver."""
    start = time.perf_counter()
    guarded(app, "the frame's updates", lambda: _updates(app))
    app.renderer.begin_frame(target.width, target.height, delta_time)
    guarded_ui(app, "the window's UI", lambda: draw_ui(app))
    encoder, work = _record_work(app)
    encoder.clear_texture_float(target, clear_value=BACKGROUND)
    app.renderer.end_frame(target, encoder)
    app.frames.timer.mark(encoder, 3)
    app.gpu.device.submit_command_buffer(encoder.finish())
    waited = time.perf_counter()
    app.gpu.device.wait()
    waited = time.perf_counter() - waited
    gpu_seconds = app.frames.timer.read()
    work_seconds = time.perf_counter() - start
    guarded(
        app, "reading the frame's results", lambda: app.frames.finish_frame(work, gpu_seconds, waited, work_seconds)
    )
    guarded(app, "the frame's figures", lambda: app.after_frame(work, delta_time, work_seconds, gpu_seconds))


def _record_work(app: AppState) -> tuple[spy.CommandEncoder, FrameWork]:
    """A new encoder with the frame's training and evaluation recorded. If recording raises, that
    encoder is dropped unsubmitted and the counters it advanced are put back (the trainer's step,
    a step in pieces, the evaluation pass, the guard's snapshots), so the state is the one the
    GPU holds; the frame then draws the UI alone."""
    session, device = app.session, app.gpu.device
    parts = [session.trainer, session.evaluator, session.guard, app.frames]
    if session.heatmaps is not None:
        parts.append(session.heatmaps)
    saved = [(part, dict(vars(part))) for part in parts]
    encoder = device.create_command_encoder()
    try:
        return encoder, app.frames.record_frame(encoder, app.running)
    except Exception as error:
        for part, attributes in saved:
            vars(part).clear()
            vars(part).update(attributes)
        app.failures.record("recording the frame's training", error)
        encoder = device.create_command_encoder()
        for mark in range(3):  # every timestamp the frame reads is written: nothing waits on one
            app.frames.timer.mark(encoder, mark)
        return encoder, FrameWork(TrainingWork("", 0, 0), range(0), 0, False, 0.0)
