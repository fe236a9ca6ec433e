"""Activations as Python <-> Slang twins: each a small object with its Slang struct, the differentiable
expression the export prints, its numpy function, and what the kernels may assume of it. Adding one:
docs/extending.md, 'An activation'. A value such as the LeakyReLU slope is defined here once, and
the generated module and network_io.py both take it from here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

LEAKY_RELU_SLOPE = 0.01


@dataclass(frozen=True)
class Activation:
    name: str
    slang: str  # the IActivation struct
    numpy: Callable[..., np.ndarray]  # numpy(z, **params)
    # The same function as a differentiable Slang expression of `z`, with params filled in, for
    # the standalone export (app/files/export_slang.py), which cannot include shaders/.
    expression: str
    relu_like: bool = False  # He initialisation instead of Glorot
    # Its derivative follows from its output (one-to-one, or piecewise with the pieces told apart
    # by the output's sign): the tiled kernels keep outputs, not pre-activations, and derive the
    # gradient from them (shaders/model/activations.slang). Sine and SiLU are neither (SiLU falls to a
    # minimum near z = -1.28 and rises again); paths that need it say so.
    derivative_from_output: bool = True
    params: dict = field(default_factory=dict)  # extra network.json fields, e.g. the slope
    # Its second derivative is zero everywhere: a poor fit for losses on the input gradient.
    piecewise_linear: bool = False

    def schema(self) -> dict:
        return {"activation": self.name, **self.params}

    def slang_of(self, z: str) -> str:
        return self.expression.format(z=z, **self.params)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-z))


def _softplus(z: np.ndarray) -> np.ndarray:
    """log(1 + e^z) as max(z, 0) + log(1 + e^-|z|): the exponential is at most 1, never overflows."""
    return np.maximum(z, 0) + np.log1p(np.exp(-np.abs(z)))


def _silu(z: np.ndarray) -> np.ndarray:
    """z sigmoid(z), sigmoid as 1 / (1 + e^-|z|) for z >= 0 and e^-|z| / (1 + e^-|z|) below: no overflow."""
    small = np.exp(-np.abs(z))
    return z * np.where(z >= 0, 1.0, small) / (1.0 + small)


ACTIVATIONS: dict[str, Activation] = {
    a.name: a
    for a in (
        Activation(
            "leaky_relu",
            "LeakyReLU",
            lambda z, negative_slope=LEAKY_RELU_SLOPE: np.where(z > 0, z, negative_slope * z),
            "{z} > 0.0 ? {z} : {negative_slope!r} * {z}",
            relu_like=True,
            params={"negative_slope": LEAKY_RELU_SLOPE},
            piecewise_linear=True,
        ),
        Activation("relu", "ReLU", lambda z: np.maximum(z, 0), "max({z}, 0.0)", relu_like=True, piecewise_linear=True),
        Activation("tanh", "Tanh", np.tanh, "tanh({z})"),
        Activation("sigmoid", "Sigmoid", _sigmoid, "1.0 / (1.0 + exp(-{z}))"),
        Activation("sin", "Sine", np.sin, "sin({z})", derivative_from_output=False),
        # Each branch's exponential has an argument <= 0, so neither overflows; Slang differentiates
        # the branch taken, and its derivative is sigmoid(z) on both.
        Activation("softplus", "Softplus", _softplus, "{z} > 0.0 ? {z} + log(1.0 + exp(-{z})) : log(1.0 + exp({z}))"),
        Activation(
            "silu",
            "SiLU",
            _silu,
            "{z} >= 0.0 ? {z} / (1.0 + exp(-{z})) : {z} * exp({z}) / (1.0 + exp({z}))",
            derivative_from_output=False,
        ),
        Activation("identity", "Identity", lambda z: z, "{z}", piecewise_linear=True),
    )
}


def slang_constants() -> str:
    """The activations' constants as Slang declarations, for the top of the generated module."""
    return f"static const float LEAKY_RELU_SLOPE = {LEAKY_RELU_SLOPE!r};"
