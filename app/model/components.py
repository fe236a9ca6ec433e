"""Python <-> Slang twins: each activation and encoding is one small object with its Slang name,
the constants it emits into the generated module and its numpy function (the optimizers' twins
are in app/model/optimizers.py).

A value such as the LeakyReLU slope is defined here once: app/kernels/shadergen/
emits it into the per-architecture Slang module, app/files/network_io.py evaluates it in numpy, and
nothing is kept in sync by hand. (tests/reference.py keeps its own numpy on purpose.)"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

LEAKY_RELU_SLOPE = 0.01


# ---- activations: struct names in shaders/activations.slang --------------------------------
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
    # gradient from them (shaders/activations.slang). Sine is neither; paths that need it say so.
    derivative_from_output: bool = True
    params: dict = field(default_factory=dict)  # extra network.json fields, e.g. the slope

    def schema(self) -> dict:
        return {"activation": self.name, **self.params}

    def slang_of(self, z: str) -> str:
        return self.expression.format(z=z, **self.params)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-z))


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
        ),
        Activation("relu", "ReLU", lambda z: np.maximum(z, 0), "max({z}, 0.0)", relu_like=True),
        Activation("tanh", "Tanh", np.tanh, "tanh({z})"),
        Activation("sigmoid", "Sigmoid", _sigmoid, "1.0 / (1.0 + exp(-{z}))"),
        Activation("sin", "Sine", np.sin, "sin({z})", derivative_from_output=False),
        Activation("identity", "Identity", lambda z: z, "{z}"),
    )
}


# ---- encodings: how (x, y) becomes the network's input ---------------------------------------
# The Playground's input features, each a function of (x, y): its name on the command line
# (--features), its label, a Slang expression of the float2 `{p}` and its numpy function.
@dataclass(frozen=True)
class Feature:
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

# An encoding's setting: the Fourier frequencies K, or the tuple of feature names of a feature
# encoding (`features`, and `poly2` and `raw`, which are two fixed settings of it).
Setting = int | tuple[str, ...]


@dataclass(frozen=True)
class Encoding:
    """How (x, y) becomes the network's input vector, given its setting."""

    name: str
    dim: Callable[[Setting], int]  # input width
    names: Callable[[Setting], list[str]]  # one label per input (diagram)
    numpy: Callable[[np.ndarray, np.ndarray, Setting], np.ndarray]  # (N,) x, y -> (N, dim)
    # Each input as a standalone Slang expression of `xy` (app/files/export_slang.py)
    expressions: Callable[[Setting], list[str]]
    body: Callable[[Setting], list[str]]  # the lines of the generated encodeInput(float2 p)
    fixed: tuple[str, ...] | None = None  # poly2 and raw: their features, whatever the config's

    def setting(self, frequencies: int, features: Sequence[str]) -> Setting:
        if self.name == "fourier":
            return frequencies
        return self.fixed if self.fixed is not None else tuple(features)

    def schema(self, setting: Setting) -> dict:
        if self.name == "fourier":
            return {"kind": self.name, "frequencies": setting}
        if self.fixed is None:
            return {"kind": self.name, "features": list(setting)}
        return {"kind": self.name}


def _fourier_numpy(x: np.ndarray, y: np.ndarray, frequencies: int) -> np.ndarray:
    columns = [x, y]
    for k in range(frequencies):
        scale = (2.0**k) * np.pi
        columns += [np.sin(scale * x), np.cos(scale * x), np.sin(scale * y), np.cos(scale * y)]
    return np.stack(columns, axis=1)


# shaders/encodings.slang's PI, in float32: the shader scales by float(1 << k) * PI
FOURIER_PI = np.float32(3.14159265358979)


def _fourier_expressions(frequencies: int) -> list[str]:
    terms = ["xy.x", "xy.y"]
    for k in range(frequencies):
        scale = repr(float(np.float32(2.0**k) * FOURIER_PI))  # exact: a power of two times a float
        terms += [f"sin({scale} * xy.x)", f"cos({scale} * xy.x)", f"sin({scale} * xy.y)", f"cos({scale} * xy.y)"]
    return terms


def _fourier_names(frequencies: int) -> list[str]:
    names = ["x", "y"]
    for k in range(frequencies):
        names += [f"sin {2**k}πx", f"cos {2**k}πx", f"sin {2**k}πy", f"cos {2**k}πy"]
    return names


def _feature_body(features: tuple[str, ...]) -> list[str]:
    values = ", ".join(f"NFloat({FEATURES[f].slang_of('p')})" for f in features)
    return [f"NFloat v[INPUT_DIM] = {{ {values} }};", "return MLVec<INPUT_DIM>.fromArray(v);"]


def _feature_encoding(name: str, fixed: tuple[str, ...] | None = None) -> Encoding:
    """An encoding that feeds the network the listed features, in FEATURES' order."""
    return Encoding(
        name,
        lambda s: len(s),
        lambda s: [FEATURES[f].label for f in s],
        lambda x, y, s: np.stack([FEATURES[f].numpy(x, y) for f in s], axis=1),
        lambda s: [FEATURES[f].slang_of("xy") for f in s],
        _feature_body,
        fixed,
    )


POLY2_FEATURES = ("x", "y", "x2", "y2")  # the tutorial's encoding
ENCODINGS: dict[str, Encoding] = {
    e.name: e
    for e in (
        _feature_encoding("poly2", POLY2_FEATURES),
        _feature_encoding("raw", ("x", "y")),
        Encoding(
            "fourier",
            lambda k: 2 + 4 * k,
            _fourier_names,
            _fourier_numpy,
            _fourier_expressions,
            lambda k: ["return encodeFourier<INPUT_DIM>(p);"],
        ),
        _feature_encoding("features"),
    )
}


# ---- heatmap panels: ids matched by drawHeatmaps in shaders/visualize.slang -----------------
HEATMAP_PANELS = ("ground truth", "learned", "|error|")
# What the panels show: the values, or their derivatives in x or in y (the atlas holds all three).
HEATMAP_VIEWS = ("values", "∂/∂x", "∂/∂y")
# Cells whose value is not finite get this colour (sRGB), apart from every colour-map colour,
# and a legend entry beside the colour bars.
INVALID_COLOUR = (1.0, 0.0, 1.0)


def slang_constants() -> str:
    """The constants above as Slang declarations, for the top of the generated module."""
    lines = [f"static const float LEAKY_RELU_SLOPE = {LEAKY_RELU_SLOPE!r};"]
    lines += [
        f"static const uint PANEL_{name.strip('|').split()[-1].upper()} = {k};" for k, name in enumerate(HEATMAP_PANELS)
    ]
    lines.append(f"static const uint HEATMAP_VIEWS = {len(HEATMAP_VIEWS)};")
    lines.append("static const float3 INVALID_COLOUR = float3({}, {}, {});".format(*map(repr, INVALID_COLOUR)))
    return "\n".join(lines)
