"""The one frame function shared by the window loop, the offscreen renderer and the benchmark:
UI -> the session's training and evaluation work -> UI drawing, all in one command encoder."""

from __future__ import annotations

import time
from collections.abc import Callable

import slangpy as spy
from imgui_bundle import imgui

from ..ui import layout, menu
from ..ui.panels import neuron_view, training
from ..ui.panels.table import LOSS, PANELS
from ..ui.state import AppState
from ..ui.style import TRANSPARENT, WINDOW_BG

BACKGROUND = list(WINDOW_BG)  # the frame is cleared to the panels' background


def draw_ui(app: AppState) -> None:
    """The menu bar, the docked panels and the notices; the layout follows the window's size."""
    menu.draw(app)
    # The dock space and the docked panels fill no background (they draw it in begin()): the
    # frame was cleared to it. Their fills covered the window twice, 13 of a paused frame's 23 ms
    # on lavapipe. Inside a panel the colour is the style's again (implot derives from it).
    imgui.push_style_color(imgui.Col_.window_bg, TRANSPARENT)
    layout.dock_space(app.dock, PANELS, app.windows, app.layout_reset, app)
    imgui.pop_style_color()
    app.layout_reset = False
    for panel in PANELS:
        imgui.push_style_color(imgui.Col_.window_bg, TRANSPARENT)
        expanded = imgui.begin(panel.title, None, panel.flags)[0]
        imgui.pop_style_color()
        if expanded:
            panel.draw(app)
        app.remember_window(panel.title)
        imgui.end()
    if app.selected_neuron is not None and LOSS in app.windows:  # drawn over the Loss panel
        neuron_view.draw(app, app.windows[LOSS])
    training.shortcuts(app)
    menu.notice(app)


def frame(
    app: AppState,
    size: tuple[int, int],
    acquire: Callable[[], spy.Texture | None],
    delta_time: float,
    force: bool = False,
) -> spy.Texture | None:
    """Submits the frame's training (app.frames, the frame driver), builds the UI at `size` while
    the GPU trains, records the evaluation and, where app.redraw wants it (or `force`), the UI
    into the target `acquire` gives, in one encoder; submits, waits and hands the results back
    through the frame driver. Returns the target drawn into, or None where the frame kept what
    the target shows."""
    start = time.perf_counter()
    app.files.poll()
    if app.session.poll_rebuild():
        app.on_new_network()
    app.targets.poll()
    app.data.poll()
    app.run_grad_check_if_wanted()
    work = app.frames.submit_training(app.running)
    app.renderer.begin_frame(size[0], size[1], delta_time)
    draw_ui(app)
    draw_data = app.renderer.finish()
    target = None
    with app.gpu.submit(wait=False) as encoder:
        app.frames.record_frame(encoder, work, app.running)
        gpu_draws = list(app.gpu_draws)  # what panels asked to draw on the GPU (an image view)
        app.gpu_draws.clear()
        for draw in gpu_draws:
            draw(encoder)
        redraw = app.redraw.wanted(draw_data, app.texture_state(), size, app.running, app.gpu.software)
        if redraw or force or gpu_draws:
            target = acquire()
        if target is not None:
            encoder.clear_texture_float(target, clear_value=BACKGROUND)
            app.renderer.draw(draw_data, target, encoder)
        app.frames.timer.mark(encoder, 4)
    waited = time.perf_counter()
    app.gpu.device.wait()
    waited = time.perf_counter() - waited
    app.stats.wait_ms = waited * 1000
    if target is not None:
        app.redraw.drawn()
    gpu_seconds = app.frames.timer.read()
    work_seconds = time.perf_counter() - start
    app.frames.finish_frame(work, gpu_seconds, waited, work_seconds)
    app.after_frame(work, delta_time, work_seconds, gpu_seconds)
    return target
