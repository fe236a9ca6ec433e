"""The sweep viewer's scatter: the metric against one searched parameter, chosen in a combo. A
log axis where the parameter's (or the metric's) axis is logarithmic (app/ui/sweep/axes.py); a
categorical parameter's values evenly spaced and labelled, the trials of one value spread a little
sideways so that none hides another. Failed trials have no metric: a line under the combo counts
them. A click on a point selects its trial; hovering shows it."""

from __future__ import annotations

import math

import numpy as np
from imgui_bundle import imgui, implot

from ..style import MUTED, em, px
from . import marks
from .axes import Axis, value_text
from .viewer import SweepViewer

PICK_PIXELS = 8.0  # a click or hover this close to a point is on it
SPREAD = 0.3  # a category's trials spread over this much of the distance between categories


def _x_positions(axis: Axis, values: list) -> list[float]:
    """Where each trial's parameter value goes along x: the value, or its category's index,
    the trials of one category spread evenly about it in trial order."""
    if axis.categories is None:
        return [float(v) for v in values]
    members: dict[int, list[int]] = {}  # category index -> the trials in it, in order
    for k, value in enumerate(values):
        members.setdefault(axis.categories.index(value), []).append(k)
    positions = [0.0] * len(values)
    for slot, trials in members.items():
        for rank, k in enumerate(trials):
            positions[k] = slot + ((rank / (len(trials) - 1) - 0.5) * SPREAD if len(trials) > 1 else 0.0)
    return positions


def _limits(values: list[float], log: bool) -> tuple[float, float]:
    """An axis' range over `values`, with a margin (in decades on a log axis)."""
    low, high = min(values), max(values)
    if log:
        low, high = math.log10(low), math.log10(high)
    margin = (high - low) * 0.08 or (abs(low) * 0.1 if low else 1.0)
    low, high = low - margin, high + margin
    return (10**low, 10**high) if log else (low, high)


def _setup(viewer: SweepViewer, axis: Axis, xs: list[float], ys: list[float]) -> None:
    metric = viewer.shown.metric
    implot.setup_axes(axis.title, metric.title)
    if axis.categories is not None:
        count = len(axis.categories)
        labels = [value_text(c) for c in axis.categories]
        implot.setup_axis_ticks(implot.ImAxis_.x1, 0.0, count - 1.0, count, labels, False)
        implot.setup_axis_limits(implot.ImAxis_.x1, -0.5, count - 0.5, implot.Cond_.always)
    else:
        if axis.log:
            implot.setup_axis_scale(implot.ImAxis_.x1, implot.Scale_.log10)
        implot.setup_axis_limits(implot.ImAxis_.x1, *_limits(xs, axis.log), implot.Cond_.always)
    if metric.log:
        implot.setup_axis_scale(implot.ImAxis_.y1, implot.Scale_.log10)
    implot.setup_axis_limits(implot.ImAxis_.y1, *_limits(ys, metric.log), implot.Cond_.always)


def _marker(colour: imgui.ImVec4, size: float, ring: bool = False) -> implot.Spec:
    spec = implot.Spec()
    spec.marker = implot.Marker_.circle
    spec.marker_size = px(size)
    spec.marker_line_color = colour
    spec.marker_fill_color = imgui.ImVec4(0, 0, 0, 0) if ring else colour
    spec.line_weight = px(2.0 if ring else 1.0)
    return spec


def _points(app, viewer: SweepViewer, plotted: list, xs: list[float], ys: list[float]) -> list[imgui.ImVec2]:
    """Draws the points (complete ones over the others), then the selected one's ring and the
    best one's label over them all; returns the points' pixels."""
    shown = viewer.shown
    for k in sorted(range(len(plotted)), key=lambda k: plotted[k].state == "complete"):
        trial = plotted[k]
        implot.plot_scatter(
            f"##p{trial.id}", np.array([xs[k]]), np.array([ys[k]]), _marker(marks.colour(shown, trial), 4.5)
        )
    for k, trial in enumerate(plotted):
        if trial.id == viewer.selected:
            implot.plot_scatter("##selected", np.array([xs[k]]), np.array([ys[k]]), _marker(marks.SELECTED, 8.0, True))
        if trial.id == shown.folder.best_trial:
            _best_label(xs[k], ys[k])
    pixels = [implot.plot_to_pixels(implot.Point(x, y)) for x, y in zip(xs, ys)]
    for trial, pixel in zip(plotted, pixels):
        app.rects[f"sweep point {trial.id}"] = (pixel.x - 1, pixel.y - 1, pixel.x + 1, pixel.y + 1)
    return pixels


def _best_label(x: float, y: float) -> None:
    """The best trial's label beside its point, on the side towards the plot's middle (never off its edge)."""
    pixel, plot = implot.plot_to_pixels(implot.Point(x, y)), implot.get_plot_pos()
    right = pixel.x < plot.x + implot.get_plot_size().x / 2
    shift = imgui.calc_text_size("best").x / 2 + em(0.7)
    implot.plot_text("best", x, y, imgui.ImVec2(shift if right else -shift, 0), marks.text_spec(marks.BEST))


def _nearest(pixels: list[imgui.ImVec2]) -> int | None:
    if not pixels or not implot.is_plot_hovered():
        return None
    mouse = imgui.get_mouse_pos()
    distances = [math.hypot(p.x - mouse.x, p.y - mouse.y) for p in pixels]
    k = int(np.argmin(distances))
    return k if distances[k] <= PICK_PIXELS else None


def _combo(viewer: SweepViewer, app) -> None:
    parameters = viewer.shown.parameters
    imgui.align_text_to_frame_padding()
    imgui.text(f"{viewer.folder.metric} against")
    imgui.same_line()
    imgui.set_next_item_width(em(10))
    current = parameters[viewer.scatter_parameter].name
    if imgui.begin_combo("##scatter parameter", current):
        for k, axis in enumerate(parameters):
            if imgui.selectable(axis.name, k == viewer.scatter_parameter)[0]:
                viewer.scatter_parameter = k
            app.remember(f"sweep parameter {axis.name}")
        imgui.end_combo()
    app.remember("sweep parameter combo")


def draw(app, viewer: SweepViewer, size: imgui.ImVec2) -> None:
    """The combo, a note of the trials not plotted, and the plot, in `size`."""
    top = imgui.get_cursor_pos_y()
    _combo(viewer, app)
    axis = viewer.shown.parameters[viewer.scatter_parameter]
    plotted = [
        t for t in viewer.folder.trials if t.metric is not None and axis.position(t.parameters[axis.name]) is not None
    ]
    left_out = len(viewer.folder.trials) - len(plotted)
    if left_out:
        imgui.same_line(0, em(1))
        imgui.text_colored(
            MUTED, f"{left_out} trial{'s' if left_out > 1 else ''} without {viewer.folder.metric}: not plotted"
        )
    height = size.y - (imgui.get_cursor_pos_y() - top)
    if not plotted:
        imgui.text_colored(MUTED, f"no trial has a {viewer.folder.metric} yet")
        return
    xs = _x_positions(axis, [t.parameters[axis.name] for t in plotted])
    ys = [t.metric for t in plotted]
    if not implot.begin_plot("##sweep scatter", imgui.ImVec2(size.x, height), implot.Flags_.no_legend):
        return
    _setup(viewer, axis, xs, ys)
    pixels = _points(app, viewer, plotted, xs, ys)
    hovered = _nearest(pixels)
    if hovered is not None:
        trial = plotted[hovered]
        imgui.set_tooltip(marks.describe(viewer.shown, trial))
        if imgui.is_mouse_clicked(0):
            viewer.select(trial.id)
    implot.end_plot()
