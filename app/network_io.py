"""network.json: the trained network in a schema anyone can evaluate (see README), and a numpy
forward pass over that schema."""

from __future__ import annotations

from typing import Any

import numpy as np

from app.components import ACTIVATIONS, ENCODINGS
from app.config import Config
from app.plan import NetworkPlan

FORMAT = "slang-visual-trainer/network@1"


def export_network(plan: NetworkPlan, config: Config, params: np.ndarray) -> dict[str, Any]:
    layers = [{"weights": layer.weights(params).astype(float).tolist(),
               "biases": layer.biases(params).astype(float).tolist(), **layer.activation.schema()}
              for layer in plan.layers]
    x0, x1, y0, y1 = config.domain
    document = {"format": FORMAT, "encoding": plan.encoding.schema(plan.frequencies),
                "domain": {"x": [x0, x1], "y": [y0, y1]}, "targets": list(plan.targets), "layers": layers}
    if plan.slang_truth is not None:  # no expressions: the file (its text is in summary.json's config)
        document["slang_target"] = {"file": plan.slang_truth.file, "count": plan.slang_truth.count}
    return document


def encode(encoding: dict[str, Any], x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(N,) x and y to (N, inputs), per the schema's encoding."""
    return ENCODINGS[encoding["kind"]].numpy(x, y, int(encoding.get("frequencies", 0)))


def forward(network: dict[str, Any], x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Evaluates a network.json document at points (x, y) in float64; returns (N, outputs)."""
    h = encode(network["encoding"], np.asarray(x, np.float64), np.asarray(y, np.float64))
    for layer in network["layers"]:
        z = h @ np.asarray(layer["weights"], np.float64).T + np.asarray(layer["biases"], np.float64)
        extras = {key: value for key, value in layer.items() if key not in ("weights", "biases", "activation")}
        h = ACTIVATIONS[layer["activation"]].numpy(z, **extras)
    return h
