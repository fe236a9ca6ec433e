"""The one frame function shared by the window loop, the offscreen renderer and the benchmark:
UI -> the session's training and evaluation work -> UI drawing, all in one command encoder."""

from __future__ import annotations

import time

import slangpy as spy
from imgui_bundle import imgui

from app.ui.panels import diagram, heatmaps, loss_plot, network, training
from app.ui.state import AppState
from app.ui.style import em

BACKGROUND = [0.06, 0.065, 0.075, 1.0]
_COND = imgui.Cond_.first_use_ever  # the default layout; a saved layout wins


def _panel(title: str, pos, size, body, app, flags: int = 0) -> None:
    imgui.set_next_window_pos(imgui.ImVec2(*pos), _COND)
    imgui.set_next_window_size(imgui.ImVec2(*size), _COND)
    if imgui.begin(title, None, flags)[0]:
        body(app)
    imgui.end()


def draw_ui(app: AppState) -> None:
    """Lays out the panels: controls on the left, heatmaps in the middle, network diagram and
    loss plot on the right. Widths are in em; the right column takes what remains."""
    w, h = imgui.get_io().display_size
    gap = em(0.35)
    left_w = em(22)
    # three images, two colour bars with their tick labels, spacing and the scrollbar gutter
    mid_w = min(max(em(3 * app.layout.image_em + 14.5), em(26)), w - left_w - em(24))
    right_x = left_w + mid_w + 3 * gap
    right_w = max(w - right_x - gap, em(12))
    train_h = em(35.5)
    _panel("Training", (gap, gap), (left_w, train_h), training.draw, app)
    _panel("Network", (gap, train_h + 2 * gap), (left_w, h - train_h - 3 * gap), network.draw, app)
    _panel("Heatmaps", (left_w + 2 * gap, gap), (mid_w, h - 2 * gap), heatmaps.draw, app,
           imgui.WindowFlags_.horizontal_scrollbar)
    diagram_h = (h - 3 * gap) * 0.5
    _panel("Network diagram", (right_x, gap), (right_w, diagram_h), diagram.draw, app,
           imgui.WindowFlags_.no_scrollbar)
    _panel("Loss", (right_x, diagram_h + 2 * gap), (right_w, h - diagram_h - 3 * gap), loss_plot.draw, app,
           imgui.WindowFlags_.no_scrollbar)
    training.shortcuts(app)


def frame(app: AppState, target: spy.Texture, delta_time: float) -> None:
    """Builds the UI, records the session's work and the UI into one encoder, submits, waits and
    hands the results back to the session."""
    start = time.perf_counter()
    if app.session.poll_rebuild():
        app.on_new_network()
    app.renderer.begin_frame(target.width, target.height, delta_time)
    draw_ui(app)
    with app.gpu.submit(wait=False) as encoder:
        work = app.session.record_frame(encoder, app.timer, app.running)
        encoder.clear_texture_float(target, clear_value=BACKGROUND)
        app.renderer.end_frame(target, encoder)
        app.timer.mark(encoder, 3)
    waited = time.perf_counter()
    app.gpu.device.wait()
    waited = time.perf_counter() - waited
    gpu_seconds = app.timer.read()
    work_seconds = time.perf_counter() - start
    app.session.finish_frame(work, gpu_seconds, waited, work_seconds)
    app.after_frame(work, delta_time, work_seconds, gpu_seconds)
