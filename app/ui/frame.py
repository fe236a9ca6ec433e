"""The one frame function shared by the window loop, the offscreen renderer and the benchmark:
UI -> the session's training and evaluation work -> UI drawing, all in one command encoder."""

from __future__ import annotations

import time

import slangpy as spy
from imgui_bundle import imgui

from ..ui import layout, menu
from ..ui.panels import neuron_view, training
from ..ui.panels.table import LOSS, PANELS
from ..ui.state import AppState

BACKGROUND = [0.06, 0.065, 0.075, 1.0]


def draw_ui(app: AppState) -> None:
    """The menu bar, the docked panels and the notices; the layout follows the window's size."""
    menu.draw(app)
    layout.dock_space(app.dock, PANELS, app.windows, app.layout_reset, app)
    app.layout_reset = False
    for panel in PANELS:
        if imgui.begin(panel.title, None, panel.flags)[0]:
            panel.draw(app)
        app.remember_window(panel.title)
        imgui.end()
    if app.selected_neuron is not None and LOSS in app.windows:  # drawn over the Loss panel
        neuron_view.draw(app, app.windows[LOSS])
    training.shortcuts(app)
    menu.notice(app)


def frame(app: AppState, target: spy.Texture, delta_time: float) -> None:
    """Builds the UI, records the training work (app.frames, the frame driver) and the UI into one
    encoder, submits, waits and hands the results back through the frame driver."""
    start = time.perf_counter()
    app.files.poll()
    if app.session.poll_rebuild():
        app.on_new_network()
    app.targets.poll()
    app.run_grad_check_if_wanted()
    app.renderer.begin_frame(target.width, target.height, delta_time)
    draw_ui(app)
    with app.gpu.submit(wait=False) as encoder:
        work = app.frames.record_frame(encoder, app.running)
        for draw in app.gpu_draws:  # what panels asked to draw on the GPU (an image view)
            draw(encoder)
        app.gpu_draws.clear()
        encoder.clear_texture_float(target, clear_value=BACKGROUND)
        app.renderer.end_frame(target, encoder)
        app.frames.timer.mark(encoder, 3)
    waited = time.perf_counter()
    app.gpu.device.wait()
    waited = time.perf_counter() - waited
    gpu_seconds = app.frames.timer.read()
    work_seconds = time.perf_counter() - start
    app.frames.finish_frame(work, gpu_seconds, waited, work_seconds)
    app.after_frame(work, delta_time, work_seconds, gpu_seconds)
