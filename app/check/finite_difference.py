"""Central differences of a numpy loss by one parameter that do not straddle a kink: both the
value check (grad_check.py) and the nested loss's check (nested_loss.py) difference piecewise
smooth losses (ReLU-like activations), where a step that carries a sample across a kink is wrong
by that sample's whole change of slope."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def kink_free_central_difference(
    loss: Callable[[np.ndarray], tuple[float, list]], params: np.ndarray, index: int, sides: list,
    step: float, smallest: float,
) -> float:  # fmt: skip
    """d loss / d params[index]; `loss(params)` gives the loss and each kink's side per sample,
    `sides` are those at `params`. The step shrinks 8-fold until no side changes (or below
    `smallest`)."""
    h = step * max(1.0, abs(params[index]))
    while True:
        plus, minus = params.copy(), params.copy()
        plus[index] += h
        minus[index] -= h
        (up, up_sides), (down, down_sides) = loss(plus), loss(minus)
        smooth = all(np.array_equal(a, b) and np.array_equal(a, c) for a, b, c in zip(sides, up_sides, down_sides))
        if smooth or h < smallest:
            return (up - down) / (2 * h)
        h /= 8
