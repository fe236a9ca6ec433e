"""Whether half precision holds a run's inputs: an encoding's largest |input| over the domain,
against what half can hold (a CSV of x, y in [0, 1000] through poly2 reaches 1e6, and the first
step's loss is not finite) or holds comfortably."""

from __future__ import annotations

import numpy as np

from ..errors import UserError
from .encodings import ENCODINGS, EncodingSettings

HALF_MAX = 65504.0  # the largest finite half
HALF_COMFORT = 100.0  # inputs past this, in half precision, often overflow a layer's products


def largest_input(settings: EncodingSettings, domain) -> float:
    """The largest |input| the encoding gives over the domain [x0, x1, y0, y1] (its corners, edges
    and a grid inside: the encodings' terms are monotone or bounded between them). A grid
    encoding's inputs are table values, near 0."""
    encoding = ENCODINGS[settings.encoding]
    if encoding.trained:
        return 0.0
    x0, x1, y0, y1 = domain
    x, y = np.meshgrid(np.linspace(x0, x1, 17), np.linspace(y0, y1, 17))
    values = encoding.numpy(x.ravel(), y.ravel(), settings.setting)
    return float(np.max(np.abs(values)))


def check_half_range(settings: EncodingSettings, domain, precision: str) -> None:
    """Half precision must hold the network's inputs: a UserError naming the encoding, the domain
    and the fix where they pass HALF_MAX (the first step's loss is not finite then)."""
    if precision != "half":
        return
    largest = largest_input(settings, domain)
    if largest > HALF_MAX:
        x0, x1, y0, y1 = (f"{v:g}" for v in domain)
        raise UserError(
            f"half precision can't hold the inputs: the {settings.encoding} encoding reaches {largest:.3g} over "
            f"x in [{x0}, {x1}], y in [{y0}, {y1}] (half holds at most {HALF_MAX:g}): use --precision float, "
            "or scale the data to about [-10, 10]"
        )


def half_hint(settings: EncodingSettings, domain, precision: str) -> str:
    """Why a half-precision run may have diverged at once: its inputs are large (else "")."""
    largest = largest_input(settings, domain) if precision == "half" else 0.0
    if largest <= HALF_COMFORT:
        return ""
    return (
        f"its {settings.encoding} inputs reach {largest:.3g}, large for half precision: "
        "try --precision float, or scale the data to about [-10, 10]"
    )
