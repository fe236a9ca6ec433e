"""The sweep viewer's parallel coordinates: one vertical axis a searched parameter and the metric
last, each normalised to its range (app/ui/sweep/axes.py) with its smallest and largest value
written at its ends, or a categorical one's values beside it; one polyline a trial in its mark's
colour (app/ui/sweep/marks.py), beside the metric's colour scale. A failed trial's line stops at
the last parameter: it has no metric. A click on a line selects its trial; hovering shows it."""

from __future__ import annotations

import math

import numpy as np
from imgui_bundle import imgui, implot

from ...files.sweep_folder import Trial
from ..style import MUTED, WINDOW_BG, em, px
from . import marks
from .axes import Axis
from .viewer import Shown, SweepViewer

PICK_PIXELS = 6.0  # a click or hover this close to a line is on it
MARGIN = 0.45  # room left of the first axis for its labels, in distances between axes
RIGHT_MARGIN = 0.6  # and right of the metric's: its labels and "best"
END_ZONE = 0.1  # a line ending this near an axis' end meets the label there
ENDS = 0.16  # room above and below the axes for their labels, in axis heights
LABEL_BOX_ALPHA = 0.75  # the lines under a label show through a little


def _axes(shown: Shown) -> tuple[Axis, ...]:
    return (*shown.parameters, shown.metric)


def _positions(shown: Shown, trial: Trial) -> list[float]:
    """The trial's place on each axis, stopping at the first value with none (a failed trial's metric)."""
    values = [trial.parameters[axis.name] for axis in shown.parameters] + [trial.metric]
    positions = []
    for axis, value in zip(_axes(shown), values):
        position = axis.position(value)
        if position is None:
            break
        positions.append(position)
    return positions


def _setup(shown: Shown) -> None:
    axes = _axes(shown)
    count = len(axes)
    flags = implot.AxisFlags_.no_grid_lines
    implot.setup_axis(implot.ImAxis_.x1, None, flags | implot.AxisFlags_.no_tick_marks)
    implot.setup_axis(implot.ImAxis_.y1, None, flags | implot.AxisFlags_.no_decorations)
    implot.setup_axis_ticks(implot.ImAxis_.x1, 0.0, count - 1.0, count, [a.title for a in axes], False)
    implot.setup_axes_limits(-MARGIN, count - 1 + RIGHT_MARGIN, -ENDS, 1 + ENDS, implot.Cond_.always)


def _axis_lines(shown: Shown) -> None:
    """Each axis as a vertical line from 0 to 1."""
    line = _line_spec(MUTED, 1.5)
    for k in range(len(_axes(shown))):
        implot.plot_line(f"##axis{k}", np.array([k, k], float), np.array([0.0, 1.0]), line)


def _label(text: str, x: float, y: float, offset: imgui.ImVec2, colour: imgui.ImVec4) -> None:
    """`text` centred at plot point (x, y) moved by `offset` pixels, on a dark box: the trials'
    lines run under an axis' labels."""
    draw = implot.get_plot_draw_list()
    size = imgui.calc_text_size(text)
    centre = implot.plot_to_pixels(implot.Point(x, y))
    corner = imgui.ImVec2(centre.x + offset.x - size.x / 2, centre.y + offset.y - size.y / 2)
    pad = em(0.15)
    box = imgui.get_color_u32(imgui.ImVec4(*WINDOW_BG[:3], LABEL_BOX_ALPHA))
    draw.add_rect_filled(
        imgui.ImVec2(corner.x - pad, corner.y), imgui.ImVec2(corner.x + size.x + pad, corner.y + size.y), box, pad
    )
    draw.add_text(corner, imgui.get_color_u32(colour), text)


def _axis_labels(shown: Shown) -> None:
    """An axis' smallest value under it and its largest over it, or a categorical one's values
    beside it as tick labels; the best trial's "best" right of its metric."""
    text = imgui.get_style().color_(imgui.Col_.text)
    half_line = imgui.get_text_line_height() * 0.5 + 2
    implot.push_plot_clip_rect()
    for k, axis in enumerate(_axes(shown)):
        for position, label in axis.labels():
            if axis.categories is not None:
                offset = imgui.ImVec2(imgui.calc_text_size(label).x / 2 + em(0.4), 0)
            else:
                offset = imgui.ImVec2(0, -half_line if position == 1.0 else half_line)
            _label(label, float(k), position, offset, text)
    best = _positions(shown, shown.folder.trial(shown.folder.best_trial)) if shown.folder.best is not None else []
    if best and len(best) == len(_axes(shown)):  # right of its metric, moved inwards clear of an end's label
        inwards = half_line if best[-1] > 1 - END_ZONE else -half_line if best[-1] < END_ZONE else 0.0
        offset = imgui.ImVec2(imgui.calc_text_size("best").x / 2 + em(0.4), inwards)
        _label("best", len(best) - 1.0, best[-1], offset, marks.BEST)
    implot.pop_plot_clip_rect()


def _draw_order(shown: Shown, viewer: SweepViewer) -> list[Trial]:
    """Failed, then pruned or interrupted, then complete trials worst to best, the selected one
    last: on top."""
    rank = {"failed": 0, "pruned": 1, "interrupted": 1, "complete": 2}

    def key(trial: Trial) -> tuple:
        return (trial.id == viewer.selected, rank[trial.state], shown.goodness(trial) or 0.0)

    return sorted(shown.folder.trials, key=key)


def _lines(app, shown: Shown, viewer: SweepViewer) -> dict[str, list[imgui.ImVec2]]:
    """Draws every trial's line; returns each one's vertices in pixels."""
    pixels = {}
    for trial in _draw_order(shown, viewer):
        ys = _positions(shown, trial)
        if not ys:
            continue
        xs = np.arange(len(ys), dtype=float)
        if trial.id == viewer.selected:  # a white line under it, wider
            implot.plot_line(f"##selected{trial.id}", xs, np.array(ys), _line_spec(marks.SELECTED, 5.0))
        weight = 2.5 if trial.state == "complete" else 1.5
        implot.plot_line(f"##l{trial.id}", xs, np.array(ys), _line_spec(marks.colour(shown, trial), weight))
        pixels[trial.id] = [implot.plot_to_pixels(implot.Point(x, y)) for x, y in zip(xs, ys)]
        app.rects[f"sweep line {trial.id}"] = _middle_of_last_segment(pixels[trial.id])
    return pixels


def _line_spec(colour: imgui.ImVec4, weight: float) -> implot.Spec:
    spec = implot.Spec()
    spec.line_color = colour
    spec.line_weight = px(weight)
    return spec


def _middle_of_last_segment(points: list[imgui.ImVec2]) -> tuple[float, float, float, float]:
    """Where a test clicks a line: halfway along its last segment (to the metric, if it has one)."""
    a, b = points[-2] if len(points) > 1 else points[-1], points[-1]
    x, y = (a.x + b.x) / 2, (a.y + b.y) / 2
    return (x - 1, y - 1, x + 1, y + 1)


def _distance(point: imgui.ImVec2, points: list[imgui.ImVec2]) -> float:
    """From `point` to the polyline through `points`, in pixels."""
    best = math.inf
    for a, b in zip(points, points[1:] or points):
        dx, dy = b.x - a.x, b.y - a.y
        length = dx * dx + dy * dy
        t = 0.0 if length == 0 else max(0.0, min(1.0, ((point.x - a.x) * dx + (point.y - a.y) * dy) / length))
        best = min(best, math.hypot(point.x - (a.x + t * dx), point.y - (a.y + t * dy)))
    return best


def _nearest(pixels: dict[str, list[imgui.ImVec2]]) -> str | None:
    if not pixels or not implot.is_plot_hovered():
        return None
    mouse = imgui.get_mouse_pos()
    distances = {trial_id: _distance(mouse, points) for trial_id, points in pixels.items()}
    trial_id = min(distances, key=distances.get)
    return trial_id if distances[trial_id] <= PICK_PIXELS else None


def draw(app, viewer: SweepViewer, size: imgui.ImVec2) -> None:
    """The plot and, at its right, the colour scale, in `size`."""
    shown = viewer.shown
    scale_width = marks.scale_width(shown)
    flags = implot.Flags_.no_legend | implot.Flags_.no_mouse_text  # a point between normalised axes means nothing
    if not implot.begin_plot("##sweep parallel", imgui.ImVec2(size.x - scale_width, size.y), flags):
        return
    _setup(shown)
    _axis_lines(shown)
    pixels = _lines(app, shown, viewer)
    _axis_labels(shown)
    hovered = _nearest(pixels)
    if hovered is not None:
        imgui.set_tooltip(marks.describe(shown, shown.folder.trial(hovered)))
        if imgui.is_mouse_clicked(0):
            viewer.select(hovered)
    implot.end_plot()
    imgui.same_line()
    marks.scale(shown, imgui.ImVec2(scale_width - imgui.get_style().item_spacing.x, size.y), app.rects)
