"""The sweep viewer's table: a row a trial, a column for each of trials.csv's, sorted by any
column with a click on its header (ImGui's sort specs, read into SweepViewer.sort). A click on a
row selects its trial; a failed or pruned row shows its error (or why it was pruned) on hover."""

from __future__ import annotations

from imgui_bundle import imgui

from ...files.sweep_folder import Trial, trials_header
from ..style import em, fit_text
from . import marks
from .axes import value_text
from .viewer import SweepViewer

FLAGS = (
    imgui.TableFlags_.sortable
    | imgui.TableFlags_.resizable
    | imgui.TableFlags_.row_bg
    | imgui.TableFlags_.borders
    | imgui.TableFlags_.scroll_x
    | imgui.TableFlags_.scroll_y
    | imgui.TableFlags_.sizing_fixed_fit
)
MAX_ERROR_EM = 30  # a long error is cut short in its cell; the whole of it is in the row's tooltip


def columns(viewer: SweepViewer) -> list[str]:
    """trials.csv's columns, in its order."""
    return trials_header(viewer.folder.metric, (f.name for f in viewer.folder.searched))


def _cells(viewer: SweepViewer, trial: Trial) -> list[str]:
    folder = viewer.folder
    figures = [value_text(trial.metric), value_text(trial.steps), value_text(trial.wall_s), trial.gpu, str(trial.seed)]
    return [trial.state, *figures, *(value_text(trial.parameters[f.name]) for f in folder.searched), trial.error]


def _take_sort(viewer: SweepViewer, names: list[str]) -> None:
    specs = imgui.table_get_sort_specs()
    if specs is None or not specs.specs_dirty or specs.specs_count == 0:
        return
    spec = specs.get_specs(0)
    viewer.sort(names[spec.column_index], spec.sort_direction == imgui.SortDirection.descending)
    specs.specs_dirty = False


def _headers(app, names: list[str]) -> None:
    imgui.table_next_row(imgui.TableRowFlags_.headers)
    for k, name in enumerate(names):
        imgui.table_set_column_index(k)
        imgui.table_header(name)
        app.remember(f"sweep header {name}")


def _row(app, viewer: SweepViewer, trial: Trial) -> None:
    imgui.table_next_row()
    imgui.table_set_column_index(0)
    best = trial.id == viewer.folder.best_trial
    # not allow_overlap: that waits a frame of hover before a click counts (a click at once was lost)
    if imgui.selectable(f"{trial.id}##row", trial.id == viewer.selected, imgui.SelectableFlags_.span_all_columns)[0]:
        viewer.select(trial.id)
    app.remember(f"sweep row {trial.id}")
    if trial.error and imgui.is_item_hovered():
        imgui.set_tooltip(f"{trial.state}: {trial.error}")
    if best:
        imgui.same_line()
        imgui.text_colored(marks.BEST, "best")
    colour = marks.text_colour(trial)
    for k, text in enumerate(_cells(viewer, trial), start=1):
        imgui.table_set_column_index(k)
        imgui.text_colored(colour, fit_text(text, em(MAX_ERROR_EM)))


def fitted_height(viewer: SweepViewer, most: float) -> float:
    """The table's height: its rows and header, and a scroll bar's room, up to `most`."""
    style = imgui.get_style()
    row = imgui.get_text_line_height() + 2 * style.cell_padding.y
    return min(most, (len(viewer.folder.trials) + 1) * row + style.scrollbar_size + 2 * style.frame_border_size)


def draw(app, viewer: SweepViewer, height: float) -> None:
    names = columns(viewer)
    if not imgui.begin_table(f"trials##{viewer.folder.path}", len(names), FLAGS, imgui.ImVec2(0, height)):
        return
    imgui.table_setup_scroll_freeze(1, 1)  # the header row and the trial column stay in view
    for k, name in enumerate(names):
        flags = imgui.TableColumnFlags_.default_sort if k == 0 else imgui.TableColumnFlags_.none
        imgui.table_setup_column(name, flags)
    _take_sort(viewer, names)
    _headers(app, names)
    clipper = imgui.ListClipper()  # only the rows in view are drawn: a sweep may have thousands
    clipper.begin(len(viewer.order))
    while clipper.step():
        for row in range(clipper.display_start, clipper.display_end):
            _row(app, viewer, viewer.folder.trials[viewer.order[row]])
    imgui.end_table()
