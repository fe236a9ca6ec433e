"""How the sweep viewer marks a trial, the same in the table, the scatter and the parallel
coordinates: a complete trial in its metric's colour (viridis, brighter is better), a pruned one
grey (its metric is not comparable), a failed one red, an interrupted one amber; the best labelled
"best", the selected one ringed in white (docs/guide/sweeps.md, 'The sweep window')."""

from __future__ import annotations

import math

from imgui_bundle import imgui, implot

from ...files.sweep_folder import Trial
from ..style import GOOD, MUTED, em, fit_text, px
from .axes import Axis, value_text
from .viewer import Shown

COLORMAP = implot.Colormap_.viridis
# The worst trial gets viridis at this fraction, not at 0: its darkest purple all but vanished on
# the plots' dark background (a line or a point of the worst trial was hard to find)
COLOUR_FLOOR = 0.2
PRUNED = imgui.ImVec4(0.55, 0.57, 0.61, 0.9)
FAILED = imgui.ImVec4(0.90, 0.36, 0.36, 0.9)
INTERRUPTED = imgui.ImVec4(0.92, 0.68, 0.26, 0.9)
SELECTED = imgui.ImVec4(1.0, 1.0, 1.0, 1.0)
BEST = GOOD
STATE_COLOURS = {"failed": FAILED, "pruned": PRUNED, "interrupted": INTERRUPTED}  # complete: the metric's
BAR_STEPS = 32  # the colour bar's gradient, in steps of the colour map
BAR_EM = 1.0  # its width


def colour(shown: Shown, trial: Trial) -> imgui.ImVec4:
    """A trial's colour: its metric's on the colour scale where it completed with one, else its state's."""
    if trial.state != "complete":
        return STATE_COLOURS[trial.state]
    goodness = shown.goodness(trial)
    return PRUNED if goodness is None else metric_colour(goodness)


def metric_colour(goodness: float) -> imgui.ImVec4:
    """The colour scale: 0 (the worst metric) to 1 (the best)."""
    return implot.sample_colormap(COLOUR_FLOOR + (1 - COLOUR_FLOOR) * goodness, COLORMAP)


def text_colour(trial: Trial) -> imgui.ImVec4:
    """A table row's text: as any text for a complete trial, its state's colour otherwise."""
    return STATE_COLOURS.get(trial.state, imgui.get_style().color_(imgui.Col_.text))


def any_interrupted(shown: Shown) -> bool:
    return any(trial.state == "interrupted" for trial in shown.folder.trials)


def _swatch(fill: imgui.ImVec4 | None, ring: imgui.ImVec4 | None = None) -> None:
    """A small disc (`fill`) or ring (`ring`) inline with the text that follows."""
    size = imgui.get_text_line_height()
    corner = imgui.get_cursor_screen_pos()
    centre = imgui.ImVec2(corner.x + size / 2, corner.y + size / 2)
    draw = imgui.get_window_draw_list()
    if fill is not None:
        draw.add_circle_filled(centre, size * 0.3, imgui.get_color_u32(fill))
    if ring is not None:
        draw.add_circle(centre, size * 0.36, imgui.get_color_u32(ring), 0, px(2.0))
    imgui.dummy(imgui.ImVec2(size, size))
    imgui.same_line(0, em(0.2))


def legend(shown: Shown) -> None:
    """One line naming the marks (the colour scale beside the parallel coordinates gives values)."""
    better = "lower" if shown.folder.mode == "min" else "higher"
    entries = (
        (
            metric_colour(1.0),
            None,
            f"complete: colour = {shown.folder.metric}, brighter is better ({better})",
        ),
        (PRUNED, None, "pruned"),
        (FAILED, None, "failed (no metric)"),
        *([(INTERRUPTED, None, "interrupted (--resume runs it)")] if any_interrupted(shown) else []),
        (None, SELECTED, "selected"),
    )
    for fill, ring, text in entries:
        _swatch(fill, ring)
        imgui.text_colored(MUTED, text)
        imgui.same_line(0, em(1))
    imgui.text_colored(BEST, "best")
    imgui.same_line(0, em(0.3))
    imgui.text_colored(MUTED, "marks the best trial")


def _ticks(axis: Axis) -> list[float]:
    """The values the colour bar labels: its ends first, then each power of ten between them (a
    log axis) or the middle (a linear one)."""
    if axis.high <= axis.low:
        return [axis.low]
    if not axis.log:
        return [axis.low, axis.high, (axis.low + axis.high) / 2]
    decades = range(math.ceil(math.log10(axis.low)), math.floor(math.log10(axis.high)) + 1)
    return [axis.low, axis.high, *(10.0**k for k in decades)]


def _gradient(corner: imgui.ImVec2, top: float, bottom: float, width: float) -> None:
    """The colour scale from its best colour at `top` down to its worst at `bottom`."""
    draw = imgui.get_window_draw_list()
    for k in range(BAR_STEPS):
        upper, lower = (imgui.get_color_u32(metric_colour(1 - j / BAR_STEPS)) for j in (k, k + 1))
        y0, y1 = (top + (bottom - top) * j / BAR_STEPS for j in (k, k + 1))
        draw.add_rect_filled_multi_color(
            imgui.ImVec2(corner.x, y0), imgui.ImVec2(corner.x + width, y1), upper, upper, lower, lower
        )


def _tick_labels(shown: Shown, left: float, top: float, bottom: float, rects: dict | None) -> None:
    """Ticks and values at `left` of a bar from `top` (best) to `bottom` (worst); a label that
    would overlap one placed before it is left out. Each label's rectangle goes into `rects`."""
    axis, draw = shown.metric, imgui.get_window_draw_list()
    line, colour = imgui.get_text_line_height(), imgui.get_color_u32(MUTED)
    placed: list[float] = []
    for value in _ticks(axis):
        position = axis.position(value)
        goodness = position if shown.folder.mode == "max" else 1 - position
        y = top + (bottom - top) * (1 - goodness)
        if any(abs(y - other) < line for other in placed):
            continue
        placed.append(y)
        draw.add_line(imgui.ImVec2(left, y), imgui.ImVec2(left + em(0.3), y), colour)
        text = value_text(value)
        draw.add_text(imgui.ImVec2(left + em(0.45), y - line / 2), colour, text)
        if rects is not None:
            rects[f"sweep scale {text}"] = (
                left,
                y - line / 2,
                left + em(0.45) + imgui.calc_text_size(text).x,
                y + line / 2,
            )


def scale_width(shown: Shown) -> float:
    """The colour bar's width with its widest label beside it: a fixed 5 em cut "0.0002153" at
    the window's edge."""
    labels = [value_text(value) for value in _ticks(shown.metric)]
    widest = max((imgui.calc_text_size(text).x for text in labels), default=0.0)
    return max(em(BAR_EM + 0.45) + widest, em(4)) + imgui.get_style().item_spacing.x


def scale(shown: Shown, size: imgui.ImVec2, rects: dict | None = None) -> None:
    """The colour bar of complete trials' metric in `size`: the metric's name over a bar from
    the worst value (bottom) to the best (top), on the metric's axis (log or linear), labelled
    with its ends and the powers of ten between (their rectangles into `rects`)."""
    imgui.begin_group()
    end = imgui.get_cursor_screen_pos().y + size.y
    imgui.text_colored(MUTED, fit_text(shown.metric.name, size.x))
    line = imgui.get_text_line_height()
    corner = imgui.get_cursor_screen_pos()
    top, bottom = corner.y + line / 2, end - line / 2  # half a label's room at each end
    _gradient(corner, top, bottom, em(BAR_EM))
    if any(trial.metric is not None for trial in shown.folder.trials):
        _tick_labels(shown, corner.x + em(BAR_EM), top, bottom, rects)
    imgui.dummy(imgui.ImVec2(size.x, end - corner.y))
    imgui.end_group()


def text_spec(colour: imgui.ImVec4) -> implot.Spec:
    """implot.plot_text's colour."""
    spec = implot.Spec()
    spec.line_color = colour
    return spec


def describe(shown: Shown, trial: Trial) -> str:
    """A trial's tooltip: its id and state, its metric, each searched value and any error."""
    folder = shown.folder
    lines = [f"trial {trial.id}: {trial.state}{', the best' if trial.id == folder.best_trial else ''}"]
    lines.append(f"{folder.metric} {value_text(trial.metric) or '(none)'}")
    lines += [f"{field.name} {value_text(trial.parameters[field.name])}" for field in folder.searched]
    if trial.error:
        lines.append(f"{'error' if trial.state == 'failed' else 'why'}: {trial.error}")
    return "\n".join(lines)
