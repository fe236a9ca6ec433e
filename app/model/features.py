"""The Playground's input features, each a function of (x, y): its name on the command line, its
label, its Slang expression and its numpy twin. FeatureEncoding (app/model/encodings.py) feeds the
network a set of them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Feature:
    """Its name on the command line (--features), its label, a Slang expression of the float2
    `{p}` and its numpy function."""

    name: str
    label: str
    slang: str
    numpy: Callable[[np.ndarray, np.ndarray], np.ndarray]

    def slang_of(self, p: str) -> str:
        return self.slang.format(p=p)


FEATURES: dict[str, Feature] = {
    f.name: f
    for f in (
        Feature("x", "x", "{p}.x", lambda x, y: x),
        Feature("y", "y", "{p}.y", lambda x, y: y),
        Feature("x2", "x²", "{p}.x * {p}.x", lambda x, y: x * x),
        Feature("y2", "y²", "{p}.y * {p}.y", lambda x, y: y * y),
        Feature("xy", "xy", "{p}.x * {p}.y", lambda x, y: x * y),
        Feature("sinx", "sin x", "sin({p}.x)", lambda x, y: np.sin(x)),
        Feature("siny", "sin y", "sin({p}.y)", lambda x, y: np.sin(y)),
    )
}

# The third coordinate's, for functions of (x, y, z) (--dims 3): no Playground features, so not
# offered by --features; their numpy functions take (x, y, z).
Z_FEATURES: dict[str, Feature] = {
    f.name: f
    for f in (
        Feature("z", "z", "{p}.z", lambda x, y, z: z),
        Feature("z2", "z²", "{p}.z * {p}.z", lambda x, y, z: z * z),
    )
}
