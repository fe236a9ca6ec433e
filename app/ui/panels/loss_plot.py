"""Loss plot: train and eval loss against step on a log scale; earlier runs stay, in colours of
their own. The axes fit the current run: its steps, and the losses plotted over them (an earlier,
longer run would squeeze it to the left edge, and a curve cut back to a stable step must not
keep the divergence's 1e30 on the axis)."""

from __future__ import annotations

import numpy as np
from imgui_bundle import imgui, implot

from ...ui.style import MUTED, too_small

MAX_POINTS = 4000  # plotted per curve; long runs are strided so a frame stays cheap
TRAIN = imgui.ImVec4(0.30, 0.65, 1.00, 1.0)
EVAL = imgui.ImVec4(1.00, 0.60, 0.20, 1.0)
EARLIER = (imgui.ImVec4(0.80, 0.50, 0.90, 1.0), imgui.ImVec4(0.55, 0.80, 0.45, 1.0))  # violet, green: not blue


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


def axis_limits(current, earlier) -> tuple[float, float, float, float]:
    """(x0, x1, y0, y1): the current run's steps, and the positive finite losses plotted over
    them (the earlier runs' too), with a margin; the y range is for a log axis."""
    x = current.train.x
    x0, x1 = float(x[0]), float(x[-1])
    if x1 - x0 < 1:
        x0, x1 = x0 - 1, x1 + 1
    values = []
    for run in (current, *earlier):
        for series in (run.train, run.eval):
            inside = (series.x >= x0) & (series.x <= x1)
            values.append(series.y[inside])
    y = np.concatenate(values)
    y = y[np.isfinite(y) & (y > 0)]
    if y.size == 0:
        return x0, x1, 1e-3, 1.0
    y0, y1 = float(y.min()), float(y.max())
    return x0, x1, y0 / 1.5, y1 * 1.5


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
    imgui.text_colored(MUTED, f"{history.current.label}" + ("; earlier runs in the legend" if history.earlier else ""))
    if history.current.train.count == 0:
        imgui.text_colored(MUTED, "no steps yet")
        return
    if too_small(16, 8, "the loss plot"):
        return
    size = imgui.get_content_region_avail()
    if not implot.begin_plot("##loss", imgui.ImVec2(size.x, size.y)):
        return
    implot.setup_axes("step", "loss: squared error summed over outputs")
    implot.setup_axis_scale(implot.ImAxis_.y1, implot.Scale_.log10)
    x0, x1, y0, y1 = axis_limits(history.current, history.earlier)
    implot.setup_axes_limits(x0, x1, y0, y1, implot.Cond_.always)
    implot.setup_legend(implot.Location_.north_east)
    for k, run in enumerate(history.earlier):
        colour = EARLIER[(len(history.earlier) - 1 - k) % len(EARLIER)]  # the latest earlier run: violet
        _line(f"earlier: {run.label}##{k}", run.train, colour, 0.7, 1.0)
    current = history.current
    _line("train (batch)", current.train, TRAIN, 1.0, 1.5)
    _line(f"eval ({app.session.grid}x{app.session.grid} grid)", current.eval, EVAL, 1.0, 2.0, marker=True)
    _hover(current)
    implot.end_plot()
