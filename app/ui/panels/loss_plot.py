"""Loss plot: train and eval loss against step on a log scale; earlier runs stay faded. For a
dataset: the batch's loss, the training set's and the test set's, and for classes both sets'
accuracy on a second axis (0 to 1)."""

from __future__ import annotations

import numpy as np
from imgui_bundle import imgui, implot

from ...ui.style import MUTED, too_small

MAX_POINTS = 4000  # plotted per curve; long runs are strided so a frame stays cheap
TRAIN = imgui.ImVec4(0.30, 0.65, 1.00, 1.0)
EVAL = imgui.ImVec4(1.00, 0.60, 0.20, 1.0)
TRAIN_SET = imgui.ImVec4(0.55, 0.85, 1.00, 1.0)
ACCURACY = {"train_accuracy": imgui.ImVec4(0.55, 0.85, 0.45, 1.0), "test_accuracy": imgui.ImVec4(0.95, 0.85, 0.35, 1.0)}


def _thin(x: np.ndarray, y: np.ndarray):
    stride = max(1, -(-len(x) // MAX_POINTS))
    return np.ascontiguousarray(x[::stride]), np.ascontiguousarray(y[::stride])


def _line(label: str, series, colour: imgui.ImVec4, alpha: float, weight: float, marker: bool = False) -> None:
    if series.count == 0:
        return
    x, y = _thin(series.x, series.y)
    spec = implot.Spec()
    spec.line_color = imgui.ImVec4(colour.x, colour.y, colour.z, alpha)
    spec.line_weight = weight
    if marker:  # eval points are sparse: show each one
        spec.marker = implot.Marker_.circle
        spec.marker_size = 2.5
        spec.marker_fill_color = spec.line_color
    implot.plot_line(label, x, y, spec)


def _hover(run, points: bool) -> None:
    if not implot.is_plot_hovered() or run.train.count == 0:
        return
    step = implot.get_plot_mouse_pos().x
    i = int(np.clip(np.searchsorted(run.train.x, step), 0, run.train.count - 1))
    text = f"step {int(run.train.x[i])}\ntrain loss {run.train.y[i]:.4g}" + (" (batch)" if points else "")
    if run.eval.count:
        k = int(np.argmin(np.abs(run.eval.x - step)))
        text += f"\n{'test' if points else 'eval'} loss {run.eval.y[k]:.4g} (step {int(run.eval.x[k])})"
        for name, series in run.metrics.items():
            if series.count == run.eval.count:
                text += f"\n{name.replace('_', ' ')} {series.y[k]:.4g}"
    imgui.set_tooltip(text)


def _data_lines(run) -> None:
    """A dataset's figures: the training set's loss beside the test's, and the accuracies
    on the second axis."""
    if "train_loss" in run.metrics:
        _line("train set", run.metrics["train_loss"], TRAIN_SET, 1.0, 2.0, marker=True)
    _line("test", run.eval, EVAL, 1.0, 2.0, marker=True)
    accuracies = [name for name in ACCURACY if name in run.metrics]
    if accuracies:
        implot.set_axes(implot.ImAxis_.x1, implot.ImAxis_.y2)
        for name in accuracies:
            _line(name.replace("_accuracy", " acc."), run.metrics[name], ACCURACY[name], 1.0, 1.5)
        implot.set_axes(implot.ImAxis_.x1, implot.ImAxis_.y1)


def draw(app) -> None:
    history = app.session.history
    imgui.text_colored(MUTED, f"{history.current.label}" + ("; earlier runs faded" if history.earlier else ""))
    if history.current.train.count == 0:
        imgui.text_colored(MUTED, "no steps yet")
        return
    if too_small(16, 8, "the loss plot"):
        return
    size = imgui.get_content_region_avail()
    if not implot.begin_plot("##loss", imgui.ImVec2(size.x, size.y)):
        return
    fit = implot.AxisFlags_.auto_fit
    trainer = app.session.trainer
    points = trainer.data is not None
    implot.setup_axes("step", f"loss: {trainer.plan.loss.label}", fit, fit)
    implot.setup_axis_scale(implot.ImAxis_.y1, implot.Scale_.log10)
    if points and trainer.plan.loss.classifies:
        implot.setup_axis(implot.ImAxis_.y2, "accuracy", implot.AxisFlags_.opposite)
        implot.setup_axis_limits(implot.ImAxis_.y2, 0.0, 1.02, implot.Cond_.always)
    if points:  # five curves: the legend above the plot, where it covers none
        implot.setup_legend(implot.Location_.north, implot.LegendFlags_.outside | implot.LegendFlags_.horizontal)
    else:
        implot.setup_legend(implot.Location_.north_east)
    for run in history.earlier:
        # one label for them all: implot gives items of one label one legend entry
        _line("earlier runs", run.train, TRAIN, 0.25, 1.0)
    current = history.current
    _line("batch" if points else "train (batch)", current.train, TRAIN, 1.0, 1.5)
    if points:
        _data_lines(current)
    else:
        _line(f"eval ({app.session.grid}x{app.session.grid} grid)", current.eval, EVAL, 1.0, 2.0, marker=True)
    _hover(current, points)
    implot.end_plot()
