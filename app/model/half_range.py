"""Whether half precision holds a run's inputs: an encoding's largest |input| over the domain,
against what half can hold (a CSV of x, y in [0, 1000] through poly2 reaches 1e6, and the first
step's loss is not finite) or holds comfortably."""

from __future__ import annotations

import numpy as np

from ..errors import UserError
from .encodings import ENCODINGS

HALF_MAX = 65504.0  # the largest finite half
HALF_COMFORT = 100.0  # inputs past this, in half precision, often overflow a layer's products


def largest_input(config) -> float:
    """The largest |input| the config's encoding gives over its domain (its corners, edges and a
    grid inside: the encodings' terms are monotone or bounded between them). A grid encoding's
    inputs are table values, near 0."""
    encoding = ENCODINGS[config.encoding]
    if encoding.trained:
        return 0.0
    x0, x1, y0, y1 = config.domain
    x, y = np.meshgrid(np.linspace(x0, x1, 17), np.linspace(y0, y1, 17))
    values = encoding.numpy(x.ravel(), y.ravel(), encoding.setting(config))
    return float(np.max(np.abs(values)))


def check_half_range(config) -> None:
    """Half precision must hold the network's inputs: a UserError naming the encoding, the domain
    and the fix where they pass HALF_MAX (the first step's loss is not finite then)."""
    if config.precision != "half":
        return
    largest = largest_input(config)
    if largest > HALF_MAX:
        x0, x1, y0, y1 = (f"{v:g}" for v in config.domain)
        raise UserError(
            f"half precision can't hold the inputs: the {config.encoding} encoding reaches {largest:.3g} over "
            f"x in [{x0}, {x1}], y in [{y0}, {y1}] (half holds at most {HALF_MAX:g}): use --precision float, "
            "or scale the data to about [-10, 10]"
        )


def half_hint(config) -> str:
    """Why a half-precision run may have diverged at once: its inputs are large (else "")."""
    if config.precision != "half" or largest_input(config) <= HALF_COMFORT:
        return ""
    return (
        f"its {config.encoding} inputs reach {largest_input(config):.3g}, large for half precision: "
        "try --precision float, or scale the data to about [-10, 10]"
    )
