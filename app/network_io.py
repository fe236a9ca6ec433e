"""network.json: the trained network in a schema anyone can evaluate (see README), a numpy
forward pass over that schema, and the reader that starts training from one (--load-network)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from .components import ACTIVATIONS, ENCODINGS
from .config import Config, from_dict
from .datasets import problem_of
from .errors import UserError
from .losses import LOSSES
from .plan import NetworkPlan, plan_for

FORMAT = "slang-visual-trainer/network@1"


def export_network(plan: NetworkPlan, config: Config, params: np.ndarray, data: dict | None = None) -> dict[str, Any]:
    """The network.json document; `data` is the dataset's entry (app/headless.py's data_entry)
    where the network learned points."""
    layers = [
        {
            "weights": layer.weights(params).astype(float).tolist(),
            "biases": layer.biases(params).astype(float).tolist(),
            **layer.activation.schema(),
        }
        for layer in plan.layers
    ]
    x0, x1, y0, y1 = config.domain
    document = {
        "format": FORMAT,
        "encoding": plan.encoding.schema(plan.encoding_setting),
        "domain": {"x": [x0, x1], "y": [y0, y1]},
        "targets": list(plan.targets),
        "layers": layers,
        "output": _output(plan, config),
    }
    if data is not None:
        document["data"] = data
    if plan.slang_truth is not None:  # no expressions: the file (its text is in summary.json's config)
        document["slang_target"] = {"file": plan.slang_truth.file, "count": plan.slang_truth.count}
    return document


def _output(plan: NetworkPlan, config: Config) -> dict[str, Any]:
    """What the last layer's outputs mean: values ("identity"), the logit of the second class
    ("logistic", p = sigmoid), or one logit per class ("softmax")."""
    output: dict[str, Any] = {"kind": plan.loss.output}
    if config.dataset and plan.loss.classifies:
        output["classes"] = list(problem_of(config.dataset).names)
    return output


def encode(encoding: dict[str, Any], x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(N,) x and y to (N, inputs), per the schema's encoding."""
    kind = ENCODINGS[encoding["kind"]]
    setting = kind.setting(int(encoding.get("frequencies", 0)), tuple(encoding.get("features", ())))
    return kind.numpy(x, y, setting)


def forward(network: dict[str, Any], x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Evaluates a network.json document at points (x, y) in float64; returns (N, outputs)."""
    h = encode(network["encoding"], np.asarray(x, np.float64), np.asarray(y, np.float64))
    for layer in network["layers"]:
        z = h @ np.asarray(layer["weights"], np.float64).T + np.asarray(layer["biases"], np.float64)
        extras = {key: value for key, value in layer.items() if key not in ("weights", "biases", "activation")}
        h = ACTIVATIONS[layer["activation"]].numpy(z, **extras)
    return h


OUTPUT_KINDS = {loss.output: loss for loss in LOSSES.values()}


def predict(network: dict[str, Any], x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The predictions at (x, y): the values, or each class's probability (for "logistic", the
    second class's)."""
    kind = network.get("output", {"kind": "identity"})["kind"]
    return OUTPUT_KINDS[kind].predict(forward(network, x, y))


# ---- reading a network.json back (--load-network) -----------------------------------------
MAX_NETWORK_BYTES = 64 << 20  # the largest network (8 x 256 wide) is ~12 MB of JSON


def _numbers(value: Any, shape: tuple[int, ...], what: str) -> np.ndarray:
    """`value` as a float32 array of `shape`, every entry a finite number."""

    def flat(item: Any, depth: int) -> list:
        if depth == len(shape):
            if isinstance(item, bool) or not isinstance(item, (int, float)):
                raise UserError(f"{what} holds a {type(item).__name__} where a number belongs")
            return [item]
        if not isinstance(item, list) or len(item) != shape[depth]:
            raise UserError(f"{what} must be {' x '.join(map(str, shape))} numbers")
        return [x for sub in item for x in flat(sub, depth + 1)]

    try:
        with np.errstate(over="ignore"):
            array = np.asarray(flat(value, 0), np.float64).astype(np.float32)
    except OverflowError:  # an integer beyond float64
        raise UserError(f"{what} holds a number that is not finite in float32") from None
    if not np.all(np.isfinite(array)):
        raise UserError(f"{what} holds a number that is not finite in float32")
    return array


def _structure(network: dict, base: Config) -> Config:
    """The config `network` was trained with, as far as network.json says: its layers,
    activations, encoding, targets and domain; the rest (precision, optimizer...) from `base`."""
    if network.get("format") != FORMAT:
        raise UserError(f"format must be {FORMAT!r} (got {repr(network.get('format'))[:60]})")
    layers, encoding = network.get("layers"), network.get("encoding")
    if not isinstance(layers, list) or not 2 <= len(layers) or not all(isinstance(layer, dict) for layer in layers):
        raise UserError("layers must list at least two layers")
    if not isinstance(encoding, dict) or not isinstance(encoding.get("kind"), str) or encoding["kind"] not in ENCODINGS:
        raise UserError(f"encoding must be one of {', '.join(ENCODINGS)}")
    for k, layer in enumerate(layers):
        extras = set(layer) - {"weights", "biases", "activation"}
        name = layer.get("activation")
        act = ACTIVATIONS.get(name) if isinstance(name, str) else None
        if act is None or extras != set(act.params) or any(layer[p] != v for p, v in act.params.items()):
            raise UserError(
                f"layer {k + 1}: the activation must be one of {', '.join(ACTIVATIONS)}, "
                f"with {ACTIVATIONS['leaky_relu'].params} for leaky_relu"
            )
    hidden_acts = {layer["activation"] for layer in layers[:-1]}
    if len(hidden_acts) != 1:
        raise UserError("all hidden layers must have one activation")
    domain = network.get("domain")
    if not isinstance(domain, dict) or not all(isinstance(domain.get(a), list) and len(domain[a]) == 2 for a in "xy"):
        raise UserError('domain must be {"x": [x0, x1], "y": [y0, y1]}')
    fields = {
        "hidden": [len(layer["biases"]) if isinstance(layer.get("biases"), list) else 0 for layer in layers[:-1]],
        "activation": hidden_acts.pop(),
        "output_activation": layers[-1]["activation"],
        "encoding": encoding["kind"],
        "domain": [*domain["x"], *domain["y"]],
    }
    if network.get("data") is None:  # a dataset's network has no target expressions
        fields["targets"] = network.get("targets")
    if encoding["kind"] == "fourier":
        fields["frequencies"] = encoding.get("frequencies")
    if encoding["kind"] == "features":
        fields["features"] = encoding.get("features")
    fields.update(_data_fields(network))
    return from_dict(fields, base, source="the network")


def _data_fields(network: dict) -> dict[str, Any]:
    """The config fields of the dataset a network.json names: its points are made again from them."""
    data = network.get("data")
    if data is None:
        return {}
    if not isinstance(data, dict) or not isinstance(data.get("source"), dict):
        raise UserError('data must be an object with a "source"')
    fields = {"dataset": data["source"]}
    fields.update({name: data[name] for name in ("points", "noise", "train_ratio", "data_seed") if name in data})
    if "csv" in data["source"]:
        fields.pop("points", None)  # a CSV's rows, not a generator's count
    return fields


def load_network(path: str, base: Config) -> tuple[Config, np.ndarray]:
    """Reads a network.json written earlier: the config to train it with (its structure, the
    rest from `base`) and its parameters in the plan's layout. Bad files are a UserError."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_NETWORK_BYTES + 1)
        if len(raw) > MAX_NETWORK_BYTES:
            raise UserError(f"larger than {MAX_NETWORK_BYTES} bytes")
        network = json.loads(raw.decode("utf-8"))
        if not isinstance(network, dict):
            raise UserError("must be a JSON object")
        config = _structure(network, base)
        plan = plan_for(config)
        output = network.get("output", {"kind": "identity"})
        if not isinstance(output, dict) or output.get("kind") != plan.loss.output:
            raise UserError(f'output must be {{"kind": "{plan.loss.output}"}} for this network\'s problem')
        params = np.zeros(plan.param_count, np.float32)
        for k, (layer, spec) in enumerate(zip(plan.layers, network["layers"])):
            params[layer.offset : layer.bias_offset] = _numbers(
                spec["weights"], (layer.fan_out, layer.fan_in), f"layer {k + 1} weights"
            )
            params[layer.bias_offset : layer.end] = _numbers(spec["biases"], (layer.fan_out,), f"layer {k + 1} biases")
    except OSError as error:
        raise UserError(f"cannot read --load-network {path!r}: {error.strerror or error}") from None
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise UserError(f"--load-network {path!r} is not a JSON file") from None
    except UserError as error:
        raise UserError(f"--load-network {path!r}: {error}") from None
    return config, params
