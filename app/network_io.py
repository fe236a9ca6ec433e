"""network.json: the trained network in a schema anyone can evaluate (see README), and a
numpy forward pass over that schema."""

from __future__ import annotations

from typing import Any

import numpy as np

from app.config import Config
from app.shadergen import LEAKY_RELU_SLOPE, layer_offsets

FORMAT = "slang-visual-trainer/network@1"


def _activation_entry(name: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"activation": name}
    if name == "leaky_relu":
        entry["negative_slope"] = LEAKY_RELU_SLOPE
    return entry


def export_network(config: Config, params: np.ndarray) -> dict[str, Any]:
    sizes = config.layer_sizes
    layers = []
    for k, offset in enumerate(layer_offsets(config)):
        fan_in, fan_out = sizes[k], sizes[k + 1]
        weights = params[offset:offset + fan_out * fan_in].reshape(fan_out, fan_in)
        biases = params[offset + fan_out * fan_in: offset + fan_out * fan_in + fan_out]
        act = config.output_activation if k == len(sizes) - 2 else config.activation
        layers.append({"weights": weights.astype(float).tolist(), "biases": biases.astype(float).tolist(),
                       **_activation_entry(act)})
    encoding: dict[str, Any] = {"kind": config.encoding}
    if config.encoding == "fourier":
        encoding["frequencies"] = config.frequencies
    x0, x1, y0, y1 = config.domain
    return {"format": FORMAT, "encoding": encoding, "domain": {"x": [x0, x1], "y": [y0, y1]},
            "targets": list(config.targets), "layers": layers}


def encode(encoding: dict[str, Any], x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(N,) x and y to (N, inputs), per the schema's encoding."""
    kind = encoding["kind"]
    if kind == "raw":
        return np.stack([x, y], axis=1)
    if kind == "poly2":
        return np.stack([x, y, x * x, y * y], axis=1)
    columns = [x, y]
    for k in range(int(encoding["frequencies"])):
        scale = (2.0 ** k) * np.pi
        columns += [np.sin(scale * x), np.cos(scale * x), np.sin(scale * y), np.cos(scale * y)]
    return np.stack(columns, axis=1)


def activate(name: str, z: np.ndarray, negative_slope: float = LEAKY_RELU_SLOPE) -> np.ndarray:
    if name == "identity":
        return z
    if name == "leaky_relu":
        return np.where(z > 0, z, negative_slope * z)
    if name == "relu":
        return np.maximum(z, 0)
    if name == "tanh":
        return np.tanh(z)
    if name == "sigmoid":
        return 1.0 / (1.0 + np.exp(-z))
    if name == "sin":
        return np.sin(z)
    raise ValueError(f"unknown activation {name!r}")


def forward(network: dict[str, Any], x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Evaluates a network.json document at points (x, y) in float64; returns (N, outputs)."""
    h = encode(network["encoding"], np.asarray(x, np.float64), np.asarray(y, np.float64))
    for layer in network["layers"]:
        z = h @ np.asarray(layer["weights"], np.float64).T + np.asarray(layer["biases"], np.float64)
        h = activate(layer["activation"], z, layer.get("negative_slope", LEAKY_RELU_SLOPE))
    return h
