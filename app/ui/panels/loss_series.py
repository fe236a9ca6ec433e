"""What the loss plot draws (loss_plot.py draws it): each series' name, rows and colour, from the run
history, and the legend above the plot, the panel's own, in lines that wrap at the panel's edge
(ImPlot's one line ran off a narrow panel). Earlier runs are drawn only where they measured the
current run's loss of the same problem: the axis is the current run's (docs/guide/window.md, 'Loss')."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from imgui_bundle import imgui

from ...loop.history import LossRecord, Run, RunHistory
from ...model.losses import LOSSES
from ...views.point_metrics import output_test_losses
from .. import fonts
from ..style import MUTED, em
from .loss_colours import ACCURACY, EARLIER, EVAL, OUTPUTS, TRAIN, TRAIN_SET

# Rows plotted per curve; more are grouped, keeping their min, mean and max. The plot is one
# ImGui draw list, and SlangPy's renderer takes at most 65,536 vertices per list (16-bit
# indices): a line costs 4 vertices a row, a band 5, a marker about 50, so the budget is
# 2000 * 9 for the current run, 1000 * 4 for each earlier run and each evaluation's line, markers
# only while there are at most EVAL_MARKERS eval points: about 40,000 in all with eight columns.
MAX_POINTS = 2000
EARLIER_POINTS = 1000
EVAL_POINTS = 1000
EVAL_MARKERS = 200
HIDDEN_ALPHA = 0.3  # a hidden series' legend entry
# (record, rows at most) -> the record's plotted rows: (first step, last step, steps, min, mean, max)
Rows = Callable[[LossRecord, int], tuple[np.ndarray, ...]]


@dataclass
class Series:
    label: str  # the legend's name; after "##", what keeps two alike apart
    rows: tuple[np.ndarray, ...]  # (first step, last step, steps, min, mean, max) a row
    colour: imgui.ImVec4
    weight: float = 2.0
    alpha: float = 1.0
    band: bool = False  # min to max where a row stands for several steps
    marker: bool = False  # each point, while they are few
    right_axis: bool = False  # accuracy (0 to 1) or PSNR (dB)
    earlier: bool = False  # drawn first, under the current run's

    @property
    def name(self) -> str:
        return self.label.split("##")[0]


def _data_series(session, rows: Rows) -> list[Series]:
    """A dataset's evaluations: the training set's loss beside the test's, each value column's
    test loss (two or more columns), the accuracies."""
    run, problem = session.history.current, session.trainer.data.dataset.problem
    series = []
    if "train_loss" in run.metrics:
        series.append(Series("train set", rows(run.metrics["train_loss"], EVAL_POINTS), TRAIN_SET))
    series.append(Series("test", rows(run.eval, EVAL_POINTS), EVAL, marker=True))
    for k, (name, metric) in enumerate(zip(problem.names, output_test_losses(problem.names))):
        if metric in run.metrics:
            line = f"test: {fonts.label(name, k + 1)}"  # a name no font has: its number too
            series.append(Series(line, rows(run.metrics[metric], EVAL_POINTS), OUTPUTS[k % len(OUTPUTS)], 1.5))
    for name, colour in ACCURACY.items():
        if name in run.metrics:
            label = name.replace("_accuracy", " acc.")
            series.append(Series(label, rows(run.metrics[name], EVAL_POINTS), colour, 1.5, right_axis=True))
    return series


def comparable(history: RunHistory) -> tuple[list[Run], str]:
    """The earlier runs of the current run's loss and problem, and a note of those hidden (or
    ""). A run saved before runs kept their problem is compared by its loss alone."""
    current = history.current
    shown, other_loss, other_problem = [], [], []
    for run in history.earlier:
        if run.loss != current.loss:
            other_loss.append(run)
        elif None not in (run.problem, current.problem) and run.problem != current.problem:
            other_problem.append(run)  # a CSV's loss of 1,000 beside a formula's 0.001 squashed it flat
        else:
            shown.append(run)
    notes = []
    if other_loss:
        kinds = sorted(
            {LOSSES[run.loss].label if run.loss in LOSSES else "saved without its loss" for run in other_loss}
        )
        notes.append(f"{_runs(other_loss)} of another loss hidden ({', '.join(kinds)})")
    if other_problem:
        notes.append(f"{_runs(other_problem)} of another problem hidden ({'; '.join(r.label for r in other_problem)})")
    return shown, "; ".join(notes)


def _runs(runs: list[Run]) -> str:
    return "1 earlier run" if len(runs) == 1 else f"{len(runs)} earlier runs"


def plotted(session, rows: Rows, earlier: list[Run]) -> list[Series]:
    """The series, in the legend's order: the current run's, then the `earlier` runs'."""
    current, grid = session.history.current, session.grid
    points = session.trainer.data is not None
    series = [Series("batch" if points else "train (batch)", rows(current.train, MAX_POINTS), TRAIN, 1.5, band=True)]
    if points:
        series += _data_series(session, rows)
    else:
        series.append(Series(f"eval ({grid}x{grid} grid)", rows(current.eval, EVAL_POINTS), EVAL, marker=True))
    for k, run in enumerate(earlier):
        colour = EARLIER[(len(earlier) - 1 - k) % len(EARLIER)]  # the latest earlier run: the first colour
        label = f"earlier: {run.label}##{k}"
        series.append(Series(label, rows(run.train, EARLIER_POINTS), colour, 1.0, 0.7, earlier=True))
    return series


def draw_legend(app, series: list[Series], note: str = "") -> None:
    """An entry a series, a line of its colour and its name, wrapped to the panel's width; a
    click hides the series or shows it again (app.loss_hidden). Then `note`, if any."""
    draw, spacing = imgui.get_window_draw_list(), em(0.9)
    right = imgui.get_cursor_screen_pos().x + imgui.get_content_region_avail().x
    height, swatch = imgui.get_text_line_height(), em(1.2)
    for k, entry in enumerate(series):
        name = entry.name
        width = swatch + em(0.3) + imgui.calc_text_size(name).x
        if k and imgui.get_item_rect_max().x + spacing + width <= right:
            imgui.same_line(0, spacing)
        start = imgui.get_cursor_screen_pos()
        while start.x + width > right and len(name) > 8:  # a long name (edited formulas) cut at the edge
            name = entry.name[: len(name) - 4] + "..."
            width = swatch + em(0.3) + imgui.calc_text_size(name).x
        if imgui.invisible_button(f"##legend {entry.label}", imgui.ImVec2(width, height)):
            app.loss_hidden ^= {entry.label}
        app.remember(f"legend {entry.name}")
        if imgui.is_item_hovered():
            whole = "" if name == entry.name else f"{entry.name}\n"
            imgui.set_tooltip(f"{whole}click to hide or show this curve")
        alpha = HIDDEN_ALPHA if entry.label in app.loss_hidden else 1.0
        c = entry.colour
        colour = imgui.get_color_u32(imgui.ImVec4(c.x, c.y, c.z, alpha * entry.alpha))
        middle = start.y + height / 2
        draw.add_line(imgui.ImVec2(start.x, middle), imgui.ImVec2(start.x + swatch, middle), colour, em(0.2))
        text = imgui.get_style().color_(imgui.Col_.text)
        text_colour = imgui.get_color_u32(imgui.ImVec4(text.x, text.y, text.z, alpha))
        draw.add_text(imgui.ImVec2(start.x + swatch + em(0.3), start.y), text_colour, name)
    if note:
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(MUTED, note)
        imgui.pop_text_wrap_pos()
