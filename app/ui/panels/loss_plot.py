"""Loss plot: train and eval loss against step on a log scale; earlier runs stay faded."""

from __future__ import annotations

import numpy as np
from imgui_bundle import imgui, implot

from ...ui.panels import psnr_plot
from ...ui.style import MUTED, too_small

MAX_POINTS = 4000  # plotted per curve; long runs are strided so a frame stays cheap
TRAIN = imgui.ImVec4(0.30, 0.65, 1.00, 1.0)
EVAL = imgui.ImVec4(1.00, 0.60, 0.20, 1.0)


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


def _hover(run) -> None:
    if not implot.is_plot_hovered() or run.train.count == 0:
        return
    step = implot.get_plot_mouse_pos().x
    i = int(np.clip(np.searchsorted(run.train.x, step), 0, run.train.count - 1))
    text = f"step {int(run.train.x[i])}\ntrain loss {run.train.y[i]:.4g}"
    if run.eval.count:
        k = int(np.argmin(np.abs(run.eval.x - step)))
        text += f"\neval loss {run.eval.y[k]:.4g} (step {int(run.eval.x[k])})"
    imgui.set_tooltip(text)


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
    implot.setup_axes("step", "loss: squared error summed over outputs", fit, fit)
    implot.setup_axis_scale(implot.ImAxis_.y1, implot.Scale_.log10)
    psnr_plot.setup_axis(app)  # an image target's PSNR, on a second axis
    implot.setup_legend(implot.Location_.north_east)
    for run in history.earlier:
        # one label for them all: implot gives items of one label one legend entry
        _line("earlier runs", run.train, TRAIN, 0.25, 1.0)
    current = history.current
    _line("train (batch)", current.train, TRAIN, 1.0, 1.5)
    _line(f"eval ({app.session.grid}x{app.session.grid} grid)", current.eval, EVAL, 1.0, 2.0, marker=True)
    psnr_plot.plot(app)
    _hover(current)
    implot.end_plot()
