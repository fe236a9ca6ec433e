"""The one frame function shared by the window loop, the offscreen renderer and the benchmark: the
session's training submitted -> UI built while the GPU trains -> evaluation and UI drawing in one
command encoder. No exception leaves a frame (failures.py): a part that fails is logged, shown in
one line, and the frame goes on without it."""

from __future__ import annotations

import time
from collections.abc import Callable

import slangpy as spy
from imgui_bundle import imgui

from ..loop.frame_driver import FrameWork
from . import fonts, layout, menu, path_prompt, restore
from .failures import guarded, guarded_ui
from .panels import neuron_view, race, training
from .panels.table import LOSS, PANELS, shown_panels
from .state import AppState
from .style import BAD, MUTED, TRANSPARENT, WINDOW_BG
from .sweep import window as sweep_window

BACKGROUND = list(WINDOW_BG)  # the frame is cleared to the panels' background


def draw_ui(app: AppState) -> None:
    """The menu bar, the docked panels and the notices; the layout follows the window's size."""
    menu.draw(app)
    # The dock space and the docked panels fill no background (they draw it in begin()): the
    # frame was cleared to it, and on a CPU driver their two full-window fills cost more than half
    # a paused frame. Inside a panel the colour is the style's again (implot derives from it).
    panels = shown_panels(PANELS, app)
    imgui.push_style_color(imgui.Col_.window_bg, TRANSPARENT)
    layout.dock_space(app.dock, panels, app.windows, app.layout_reset, app)
    imgui.pop_style_color()
    app.layout_reset = False
    for panel in panels:
        imgui.push_style_color(imgui.Col_.window_bg, TRANSPARENT)
        expanded = imgui.begin(panel.title, None, panel.flags)[0]
        imgui.pop_style_color()
        if expanded:
            part = f"the {panel.title} panel"
            if not guarded_ui(app, part, lambda panel=panel: panel.draw(app)):
                _failed(app, part)
            layout.note_content(app.dock, panel.title)
        app.remember_window(panel.title)
        imgui.end()
    if app.selected_neuron is not None and LOSS in app.windows:  # drawn over the Loss panel
        guarded_ui(app, "the neuron view", lambda: neuron_view.draw(app, app.windows[LOSS]))
    if app.race is not None:
        part = "the Race panel"
        if not guarded_ui(app, part, lambda: race.draw_window(app)):
            app.race = None  # a race that cannot be drawn cannot be steered: it ends, the main network goes on
    if not guarded_ui(app, "the sweep window", lambda: sweep_window.draw(app)):
        app.sweep.visible = False  # hidden rather than failing every frame; View > Sweep window tries again
    guarded_ui(app, "the restore prompt", lambda: restore.draw_offer(app))
    if not guarded_ui(app, "the path field", lambda: path_prompt.draw(app)):
        app.files.prompt = None  # a field that fails to draw must not hold back every other file action
    training.shortcuts(app)
    menu.notice(app)


def _failed(app: AppState, part: str) -> None:
    """What a panel that raised shows instead of what it could not draw."""
    imgui.push_text_wrap_pos(0.0)
    imgui.text_colored(BAD, app.failures.by_part[part])
    imgui.text_colored(MUTED, "Training goes on; the rest of the window works. Details: see the menu bar.")
    imgui.pop_text_wrap_pos()


def _updates(app: AppState) -> None:
    fonts.want_config(app.config)  # a new CSV's column names: their fonts merged before the frame
    app.files.poll()
    if app.session.poll_rebuild():
        app.on_new_network()
    app.targets.poll()
    app.data.poll()
    app.sweep.poll()  # a running sweep's new trials, in the sweep window
    app.run_grad_check_if_wanted()
    if app.race is not None:
        app.race.frame(app.running)


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
    guarded(app, "the frame's updates", lambda: _updates(app))
    ok, work = _recorded(app, "recording the frame's training", lambda: app.frames.submit_training(app.trains_main))
    if not ok:
        work = FrameWork(0, 0.0)
    app.renderer.begin_frame(size[0], size[1], delta_time)
    guarded_ui(app, "the window's UI", lambda: draw_ui(app))
    draw_data = app.renderer.finish()
    encoder = app.gpu.device.create_command_encoder()
    ok, _ = _recorded(
        app, "recording the frame's evaluation", lambda: app.frames.record_frame(encoder, work, app.trains_main)
    )
    if not ok:  # dropped: a fresh encoder, every timestamp the frame reads written
        encoder = app.gpu.device.create_command_encoder()
        for mark in range(4):
            app.frames.timer.mark(encoder, mark)
        work = FrameWork(0, 0.0)
    target = _draw(app, encoder, draw_data, size, acquire, force)
    app.frames.timer.mark(encoder, 4)
    app.gpu.submit_buffer(encoder.finish())
    waited = time.perf_counter()
    app.gpu.device.wait()
    waited = time.perf_counter() - waited
    app.stats.wait_ms = waited * 1000
    if target is not None:
        app.redraw.drawn()
    gpu_seconds = app.frames.timer.read()
    work_seconds = time.perf_counter() - start
    guarded(
        app, "reading the frame's results", lambda: app.frames.finish_frame(work, gpu_seconds, waited, work_seconds)
    )
    guarded(app, "the frame's figures", lambda: app.after_frame(work, delta_time, work_seconds, gpu_seconds))
    return target


def _draw(app: AppState, encoder: spy.CommandEncoder, draw_data, size, acquire, force: bool) -> spy.Texture | None:
    """The GPU drawing panels asked for (an image view) and, where wanted, the UI into the
    target `acquire` gives; returns that target, or None where the frame kept what it shows."""
    gpu_draws = list(app.gpu_draws)
    app.gpu_draws.clear()
    for draw in gpu_draws:
        draw(encoder)
    redraw = app.redraw.wanted(draw_data, app.texture_state(), size, app.running, app.gpu.software)
    target = acquire() if redraw or force or gpu_draws else None
    if target is not None:
        encoder.clear_texture_float(target, clear_value=BACKGROUND)
        app.renderer.draw(draw_data, target, encoder)
    return target


def _recorded(app: AppState, part: str, record: Callable[[], FrameWork | None]) -> tuple[bool, FrameWork | None]:
    """(True, `record()`'s result); if it raises, the counters it advanced are put back (the
    trainer's step, a step in pieces, the evaluation pass, the guard's snapshots), so the state
    is the one the GPU holds, the failure is shown, and (False, None) comes back. Command
    buffers that were already submitted when it raised still run: their steps are lost to the
    counters, the weights keep them."""
    session = app.session
    parts = [session.trainer, session.evaluator, session.guard, app.frames]
    if session.heatmaps is not None:
        parts.append(session.heatmaps)
    saved = [(part_, dict(vars(part_))) for part_ in parts]
    try:
        result = record()
    except Exception as error:
        for part_, attributes in saved:
            vars(part_).clear()
            vars(part_).update(attributes)
        app.failures.record(part, error)
        return False, None
    return True, result
