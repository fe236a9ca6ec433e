"""An image target's PSNR (app/views/image_eval.py), plotted in the loss panel on a second axis
against the same steps: it rises as the loss falls."""

from __future__ import annotations

import numpy as np
from imgui_bundle import imgui, implot

from .loss_series import Series

PSNR = imgui.ImVec4(0.45, 0.85, 0.50, 1.0)


def setup_axis(app) -> None:
    """The right-hand axis, in dB, where the session has an image target (inside begin_plot)."""
    if app.session.image is None:
        return
    implot.setup_axis(implot.ImAxis_.y2, "PSNR (dB)", implot.AxisFlags_.auto_fit | implot.AxisFlags_.opposite)


def series(app) -> list[Series]:
    """The PSNR curve on the right-hand axis, where the session has an image target."""
    image = app.session.image
    if image is None or not image.history.steps:
        return []
    steps = np.asarray(image.history.steps, np.float64)
    values = np.asarray(image.history.values, np.float64)
    finite = np.isfinite(values)
    steps, values = steps[finite], values[finite]
    rows = (steps, steps, np.ones(len(steps)), values, values, values)
    label = f"PSNR, {image.width}x{image.height} (right axis)"
    return [Series(label, rows, PSNR, marker=True, right_axis=True)]
