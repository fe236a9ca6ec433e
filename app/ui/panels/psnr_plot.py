"""An image target's PSNR (app/views/image_eval.py), plotted in the loss panel on a second axis
against the same steps: it rises as the loss falls."""

from __future__ import annotations

import numpy as np
from imgui_bundle import imgui, implot

PSNR = imgui.ImVec4(0.45, 0.85, 0.50, 1.0)


def setup_axis(app) -> None:
    """The right-hand axis, in dB, where the session has an image target (inside begin_plot)."""
    if app.session.image is None:
        return
    implot.setup_axis(implot.ImAxis_.y2, "PSNR (dB)", implot.AxisFlags_.auto_fit | implot.AxisFlags_.opposite)


def plot(app) -> None:
    image = app.session.image
    if image is None or not image.history.steps:
        return
    implot.set_axes(implot.ImAxis_.x1, implot.ImAxis_.y2)
    spec = implot.Spec()
    spec.line_color = PSNR
    spec.line_weight = 2.0
    spec.marker = implot.Marker_.circle
    spec.marker_size = 2.5
    spec.marker_fill_color = PSNR
    steps = np.asarray(image.history.steps, np.float64)
    values = np.asarray(image.history.values, np.float64)
    finite = np.isfinite(values)
    implot.plot_line(f"PSNR, {image.width}x{image.height} (right axis)", steps[finite], values[finite], spec)
    implot.set_axes(implot.ImAxis_.x1, implot.ImAxis_.y1)
