"""Loss plot: train and eval loss against step on a log scale; what is drawn and the legend:
loss_series.py. Each record row is drawn as its mean with a min-to-max band, so a run of 10^8 steps
costs a frame no more than one of 10^4. The axes fit the current run: an earlier, longer run would
squeeze it to the left, and a curve cut back to a stable step must not keep the divergence's 1e30."""

from __future__ import annotations

import numpy as np
from imgui_bundle import imgui, implot

from ...loop.history import LossRecord
from ..style import MUTED, em, px, too_small
from . import psnr_plot
from .loss_colours import ACCURACY
from .loss_series import EVAL_MARKERS, EVAL_POINTS, MAX_POINTS, Series, comparable, draw_legend, plotted
from .step_ticks import step_ticks

BAND_ALPHA = 0.45
TICK_GAP_EM = 1.0  # between two step labels


def _grouped(values: np.ndarray, size: int, combine) -> np.ndarray:
    """`combine` (np.minimum, np.maximum, np.add) over consecutive groups of `size` values, the
    last group possibly shorter. Elementwise over strided views: a row count is at most
    RECENT + BUCKETS, so `size` stays small, where numpy's reduction along short rows is slow."""
    whole = len(values) // size * size
    out = values[0:whole:size].copy()
    for i in range(1, size):
        combine(out, values[i:whole:size], out=out)
    return np.append(out, combine.reduce(values[whole:])) if whole < len(values) else out


def _group(rows: tuple[np.ndarray, ...], size: int) -> tuple[np.ndarray, ...]:
    if size <= 1:
        return rows
    first, last, count, low, mean, high = rows
    steps = _grouped(count, size, np.add)
    ends = np.append(last[size - 1 :: size], last[-1]) if len(last) % size else last[size - 1 :: size]
    return (
        first[::size],
        ends,
        steps,
        _grouped(low, size, np.minimum),
        _grouped(mean * count, size, np.add) / steps,
        _grouped(high, size, np.maximum),
    )


def curve(record: LossRecord, max_points: int = MAX_POINTS) -> tuple[np.ndarray, ...]:
    """(first step, last step, steps, min, mean, max) of at most `max_points` rows, spread evenly
    over the steps the record covers: its buckets and its recent points are each grouped
    (means weighted by step counts) so that a row covers about 1 / max_points of the x axis."""
    parts = [part for part in record.parts() if len(part[0])]
    if sum(len(part[0]) for part in parts) <= max_points:
        return record.rows()
    width = (parts[-1][1][-1] - parts[0][0][0] + 1) / (max_points - 2 * len(parts))
    grouped = []
    for part in parts:
        spacing = (part[1][-1] - part[0][0] + 1) / len(part[0])  # steps a row covers
        grouped.append(_group(part, int(np.ceil(width / spacing))))
    return tuple(np.concatenate(columns) for columns in zip(*grouped))


class CurveCache:
    """Curves of the records drawn last frame, recomputed only when a record has grown: earlier
    runs and the eval record rarely change, so a frame regroups the current train record alone."""

    def __init__(self) -> None:
        self._curves: dict[int, tuple[LossRecord, int, tuple]] = {}

    def get(self, record: LossRecord, max_points: int) -> tuple[np.ndarray, ...]:
        held = self._curves.get(id(record))
        if held is None or held[0] is not record or held[1] != record.count or len(held[2][0]) > max_points:
            held = (record, record.count, curve(record, max_points))
        self._fresh[id(record)] = held
        return held[2]

    def begin(self) -> None:
        self._fresh: dict[int, tuple[LossRecord, int, tuple]] = {}

    def end(self) -> None:
        self._curves = self._fresh  # records no longer drawn are let go


_CACHE = CurveCache()


def _spec(colour: imgui.ImVec4, alpha: float, weight: float = 1.0) -> implot.Spec:
    spec = implot.Spec()
    spec.line_color = imgui.ImVec4(colour.x, colour.y, colour.z, alpha)
    spec.fill_color = spec.line_color
    spec.line_weight = px(weight)
    return spec


def _line(
    label: str, rows, colour: imgui.ImVec4, alpha: float, weight: float, band: bool = True, marker: bool = False
) -> None:
    first, last, count, low, mean, high = rows
    if len(first) == 0:
        return
    x = np.ascontiguousarray((first + last) / 2)
    if band and np.any(count > 1):
        band = _spec(colour, alpha)
        band.fill_alpha = BAND_ALPHA
        implot.plot_shaded(label, x, np.ascontiguousarray(low), np.ascontiguousarray(high), band)
    spec = _spec(colour, alpha, weight)
    if marker and len(first) <= EVAL_MARKERS:  # while eval points are few, show each one
        spec.marker = implot.Marker_.circle
        spec.marker_size = px(2.5)
        spec.marker_fill_color = spec.line_color
    implot.plot_line(label, x, np.ascontiguousarray(mean), spec)


def axis_limits(current, earlier) -> tuple[float, float, float, float]:
    """(x0, x1, y0, y1): the current run's steps, and the positive finite losses plotted over
    them (its train and eval records, a dataset's training-set loss, the earlier runs' train
    records: each row's min and max), with a margin; the y range is for a log axis."""
    # Over the record's parts (buckets, recent points) rather than rows(), which copies the whole
    # record into one array: this runs every frame.
    parts = [part for part in current.train.parts() if len(part[0])]
    x0, x1 = float(parts[0][0][0]), float(parts[-1][1][-1])
    if x1 - x0 < 1:
        x0, x1 = x0 - 1, x1 + 1
    records = [current.train, current.eval, *[run.train for run in earlier]]
    records += [record for name, record in current.metrics.items() if name not in ACCURACY]  # the losses
    values = []
    for record in records:
        for first, last, _, low, _, high in record.parts():
            inside = (last >= x0) & (first <= x1)
            values += [low[inside], high[inside]]
    y = np.concatenate(values) if values else np.zeros(0)
    y = y[np.isfinite(y) & (y > 0)]
    if y.size == 0:
        return x0, x1, 1e-3, 1.0
    return x0, x1, float(y.min()) / 1.5, float(y.max()) * 1.5


def _describe(rows, i: int, name: str) -> str:
    first, last, count, low, mean, high = (a[i] for a in rows)
    if count == 1:
        return f"step {int(last)}\n{name} {mean:.4g}"
    return f"steps {int(first)}-{int(last)}\n{name} mean {mean:.4g}, min {low:.4g}, max {high:.4g}"


def _hover(train, evals, metrics: dict, points: bool) -> None:
    """The train row under the mouse, the nearest evaluation and, for a dataset, its figures."""
    if not implot.is_plot_hovered() or len(train[0]) == 0:
        return
    step = implot.get_plot_mouse_pos().x
    i = int(np.clip(np.searchsorted(train[1], step), 0, len(train[1]) - 1))
    text = _describe(train, i, "train loss (batch)" if points else "train loss")
    if len(evals[0]):
        k = int(np.argmin(np.abs(evals[1] - step)))
        text += "\n" + _describe(evals, k, "test loss" if points else "eval loss")
        for name, rows in metrics.items():
            if len(rows[0]) == len(evals[0]):
                text += f"\n{name.replace('_', ' ').replace('[', ', ').rstrip(']')} {rows[4][k]:.4g}"
    imgui.set_tooltip(text)


def _draw(entry: Series) -> None:
    if entry.right_axis:
        implot.set_axes(implot.ImAxis_.x1, implot.ImAxis_.y2)
    _line(entry.label, entry.rows, entry.colour, entry.alpha, entry.weight, entry.band, entry.marker)
    if entry.right_axis:
        implot.set_axes(implot.ImAxis_.x1, implot.ImAxis_.y1)


def loss_axis_title(loss, height: float) -> str:
    """The loss axis' title: the current run's loss, as long as the axis' `height` (pixels)
    holds (a plot under a legend of eight value columns is short)."""
    titles = (f"loss: {loss.label}", loss.label, f"loss: {loss.name}")
    return next((title for title in titles if imgui.calc_text_size(title).x <= height), titles[-1])


def _setup_axes(app, limits: tuple[float, float, float, float], size: imgui.ImVec2) -> None:
    """Step and the current run's loss, on a log scale; accuracy or PSNR on the right."""
    trainer = app.session.trainer
    x0, x1, y0, y1 = limits
    axis = size.y - 2 * imgui.get_text_line_height() - em(0.7)  # less the x axis' ticks and title
    implot.setup_axes("step", loss_axis_title(trainer.plan.loss, axis))
    implot.setup_axis_scale(implot.ImAxis_.y1, implot.Scale_.log10)
    implot.setup_axes_limits(x0, x1, y0, y1, implot.Cond_.always)
    axes = app.rects.get("loss axes")  # as laid out last frame: the y axes' ticks take their part
    width = axes[2] - axes[0] if axes is not None else size.x - em(8)
    values, labels = step_ticks(x0, x1, width, lambda text: imgui.calc_text_size(text).x, em(TICK_GAP_EM))
    app.loss_ticks = dict(zip(labels, values))  # what was labelled (tests)
    if values:
        implot.setup_axis_ticks(implot.ImAxis_.x1, values, labels)
    if trainer.data is not None and trainer.plan.loss.classifies:
        implot.setup_axis(implot.ImAxis_.y2, "accuracy", implot.AxisFlags_.opposite)
        implot.setup_axis_limits(implot.ImAxis_.y2, 0.0, 1.02, implot.Cond_.always)
    psnr_plot.setup_axis(app)  # an image target's PSNR, on a second axis


def _remember_plot(app, plot) -> None:
    """The plot's frame and axes as ImPlot laid them out (tests)."""
    for name, rect in (("loss plot", plot.frame_rect), ("loss axes", plot.plot_rect)):
        app.rects[name] = (rect.min.x, rect.min.y, rect.max.x, rect.max.y)


def draw(app) -> None:
    history = app.session.history
    notes = [history.current.label]
    if history.current.train.count > MAX_POINTS:
        notes.append("band: min to max per plotted point")
    imgui.push_text_wrap_pos(0.0)  # the panel's width: a long subtitle wraps instead of running off it
    imgui.text_colored(MUTED, "; ".join(notes))
    imgui.pop_text_wrap_pos()
    app.remember("loss subtitle")
    if history.current.train.count == 0:
        imgui.text_colored(MUTED, "no steps yet")
        return
    if too_small(16, 8, "the loss plot"):
        return
    earlier, hidden = comparable(history)
    _CACHE.begin()
    series = plotted(app.session, _CACHE.get, earlier) + psnr_plot.series(app)
    current = history.current
    train, evals = _CACHE.get(current.train, MAX_POINTS), _CACHE.get(current.eval, EVAL_POINTS)
    metrics = {name: _CACHE.get(record, EVAL_POINTS) for name, record in current.metrics.items()}
    _CACHE.end()
    app.loss_series, app.loss_note = series, hidden  # what was drawn (tests)
    draw_legend(app, series, hidden)
    size = imgui.get_content_region_avail()
    if not implot.begin_plot("##loss", imgui.ImVec2(size.x, size.y), implot.Flags_.no_legend):
        return
    _setup_axes(app, axis_limits(current, earlier), size)
    for entry in sorted(series, key=lambda entry: not entry.earlier):  # earlier runs underneath
        if entry.label not in app.loss_hidden:
            _draw(entry)
    _hover(train, evals, metrics, app.session.trainer.data is not None)
    plot = implot.internal.get_current_plot()
    implot.end_plot()
    _remember_plot(app, plot)
