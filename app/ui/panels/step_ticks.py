"""The step axis' ticks: ImPlot's own ran together where the plot is narrow ("20000 60000100000140000"
in the loss plot at 1024 x 640, beside the accuracy axis). Round steps (1, 2 or 5 times a power of
ten) at least their widest label and a gap apart, labelled short from 10,000 on ("140k", "1.5M"),
each label whole within the axis."""

from __future__ import annotations

import math
from collections.abc import Callable

SHORT_FROM = 10_000  # labels of steps from here on end in k or M


def step_label(value: float, short: bool) -> str:
    if short and abs(value) >= 1e6:
        return f"{value / 1e6:g}M"
    if short and abs(value) >= 1e3:
        return f"{value / 1e3:g}k"
    return f"{value:g}"


def step_ticks(
    x0: float, x1: float, pixels: float, width_of: Callable[[str], float], gap: float
) -> tuple[list[float], list[str]]:
    """(values, labels) of the ticks of an axis from `x0` to `x1` drawn `pixels` wide, labels
    `width_of` their text and at least `gap` apart, each centred on its tick within the axis."""
    span = x1 - x0
    if span <= 0 or pixels <= 0:
        return [], []
    step = 10.0 ** math.floor(math.log10(max(span / max(pixels, 1.0), 1e-9)))
    while True:
        for factor in (1, 2, 5):
            candidate = max(step * factor, 1.0)  # steps are whole
            values = [k * candidate for k in range(math.ceil(x0 / candidate), math.floor(x1 / candidate) + 1)]
            short = bool(values) and max(abs(v) for v in values) >= SHORT_FROM
            labels = [step_label(v, short) for v in values]
            widest = max((width_of(label) for label in labels), default=0.0)
            if candidate / span * pixels >= widest + gap or len(values) <= 1:
                return _inside(values, labels, x0, span, pixels, width_of)
        step *= 10


def _inside(values, labels, x0: float, span: float, pixels: float, width_of) -> tuple[list[float], list[str]]:
    """The ticks whose labels, centred on them, end within the axis."""
    kept = [
        (value, label)
        for value, label in zip(values, labels)
        if width_of(label) / 2 <= (value - x0) / span * pixels <= pixels - width_of(label) / 2
    ]
    return [value for value, _ in kept], [label for _, label in kept]
