"""File > Open sweep...'s window: a sweep folder's trials as a table, a scatter of the metric
against a parameter and parallel coordinates, one trial selected in all three (a running sweep's
trials joining as they finish); for that trial, Load network and Train again. A floating window
over the panels, closed with its title bar's cross; opening another folder replaces what it shows."""

from __future__ import annotations

from imgui_bundle import imgui

from ...errors import counted
from ...files.sweep_folder import STATES
from ..style import MUTED, em, too_small
from . import marks, parallel, scatter, table
from .axes import value_text
from .viewer import SweepViewer

TITLE = "Sweep"
SHARE = 0.9  # of the main window, each way, when it opens
TABLE_SHARE = 0.38  # of the window's content below the header, for the table


def _header(viewer: SweepViewer) -> None:
    folder = viewer.folder
    states = [t.state for t in folder.trials]
    counts = ", ".join(f"{states.count(s)} {s}" for s in STATES if s in states)
    best = folder.best
    shown = f"trial {best.trial}, {best.value:.4g}" if best is not None else "none yet (no trial has completed)"
    imgui.text(f"{counted(len(states), 'trial')} ({counts}); {folder.metric}, {folder.mode}imised; best: {shown}")
    imgui.same_line(0, em(1))
    imgui.text_colored(MUTED, str(folder.path))


def _selected(app, viewer: SweepViewer) -> None:
    """The selected trial in a line, and its two buttons."""
    trial = viewer.selected_trial
    if trial is None:
        imgui.text_colored(MUTED, "click a trial (a row, a point or a line) to load its network or train it again")
        return
    imgui.align_text_to_frame_padding()
    imgui.text_colored(marks.text_colour(trial), f"trial {trial.id}, {trial.state}:")
    imgui.same_line()
    values = ", ".join(f"{f.name} {value_text(trial.parameters[f.name])}" for f in viewer.folder.searched)
    imgui.text(f"{viewer.folder.metric} {value_text(trial.metric) or '(none)'}; {values}; seed {trial.seed}")
    imgui.same_line(0, em(1))
    if imgui.button("Load network"):
        viewer.load_network()
    app.remember("sweep load")
    if imgui.is_item_hovered():
        imgui.set_tooltip(
            f"trials/{trial.id}/network.json's layers, truth and weights, from step 0;\n"
            "the optimizer, learning rate and batch size stay as they are"
        )
    imgui.same_line()
    if imgui.button("Train again"):
        viewer.train_again()
    app.remember("sweep train")
    if imgui.is_item_hovered():
        imgui.set_tooltip(f"trains trials/{trial.id}/summary.json's config and seed from step 0, as a new run")


def _waiting(viewer: SweepViewer) -> None:
    """A sweep whose first trial has not finished: what the window shows until one has."""
    imgui.text("No trial has finished yet: each appears here as it finishes.")
    imgui.same_line(0, em(1))
    imgui.text_colored(MUTED, str(viewer.path))
    if viewer.waiting:  # a folder that does not read as a sweep (yet)
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(MUTED, viewer.waiting)
        imgui.pop_text_wrap_pos()


def _body(app, viewer: SweepViewer) -> None:
    if viewer.shown is None:
        _waiting(viewer)
        return
    _header(viewer)
    _selected(app, viewer)
    if too_small(40, 20, "the sweep"):
        return
    available = imgui.get_content_region_avail()
    table.draw(app, viewer, table.fitted_height(viewer, available.y * TABLE_SHARE))
    marks.legend(viewer.shown)
    available = imgui.get_content_region_avail()
    spacing = imgui.get_style().item_spacing.x
    half = imgui.ImVec2((available.x - spacing) / 2, available.y)
    imgui.begin_group()
    scatter.draw(app, viewer, half)
    imgui.end_group()
    imgui.same_line()
    imgui.begin_group()
    parallel.draw(app, viewer, half)
    imgui.end_group()


def draw(app) -> None:
    """The window, while a sweep is open in it."""
    viewer = app.sweep
    if viewer.path is None or not viewer.visible:
        return
    viewport = imgui.get_main_viewport()
    size = viewport.work_size
    imgui.set_next_window_size(imgui.ImVec2(size.x * SHARE, size.y * SHARE), imgui.Cond_.appearing)
    imgui.set_next_window_pos(viewport.get_center(), imgui.Cond_.appearing, imgui.ImVec2(0.5, 0.5))
    # No keyboard navigation inside: keyboard focus landed on Load network after the path field's
    # Enter, and Space (play / pause) would then have pressed it too
    flags = imgui.WindowFlags_.no_docking | imgui.WindowFlags_.no_saved_settings | imgui.WindowFlags_.no_collapse
    flags |= imgui.WindowFlags_.no_nav_inputs
    title = f"{TITLE}: {viewer.path.name}###sweep"
    expanded, viewer.visible = imgui.begin(title, viewer.visible, flags)
    if expanded:
        _body(app, viewer)
    position, extent = imgui.get_window_pos(), imgui.get_window_size()
    app.rects["sweep window"] = (position.x, position.y, position.x + extent.x, position.y + extent.y)
    imgui.end()
