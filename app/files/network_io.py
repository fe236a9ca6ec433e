"""network.json: the trained network in a schema anyone can evaluate (docs/formats.md), a numpy
forward pass over that schema, and the reader that starts training from one (--load-network).

A grid encoding's tables go beside it in TABLES_FILE, a .npy file (numpy's own format:
np.load reads it, float32 of shape (entries, features)), which the encoding entry names."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np

from ..config.config import Config
from ..config.records import from_dict
from ..datasets import problem_of
from ..errors import UserError
from ..kernels.plan import NetworkPlan
from ..kernels.planning import plan_for
from ..model.activations import ACTIVATIONS
from ..model.encodings import ENCODINGS, ENCODINGS_3D, encoding_for
from ..model.losses import LOSSES
from ..truth import image_truth
from ..truth.mesh_truth import load_mesh_field, mesh_fit

FORMAT = "slang-visual-trainer/network@1"
TABLES_FILE = "network.tables.npy"


def export_network(plan: NetworkPlan, config: Config, params: np.ndarray, data: dict | None = None) -> dict[str, Any]:
    """The network.json document; `data` is the dataset's entry (app/files/run_summary.py's data_entry)
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
    encoding = plan.encoding.schema(plan.encoding_setting)
    if plan.encoding.trained:
        encoding["tables"] = TABLES_FILE
    domain = {"x": [x0, x1], "y": [y0, y1]}
    if plan.point_dim == 3:  # a function of (x, y, z): its "z" is what marks it (2D files have none)
        domain["z"] = list(config.z_range)
    document = {
        "format": FORMAT,
        "encoding": encoding,
        "domain": domain,
        "targets": list(plan.targets),
        "layers": layers,
        "output": _output(plan, config),
    }
    if data is not None:
        document["data"] = data
    if plan.slang_truth is not None:  # no expressions: the file (its text is in summary.json's config)
        document["slang_target"] = {"file": plan.slang_truth.file, "count": plan.slang_truth.count}
    if plan.image is not None:  # no expressions: the image file
        image = plan.image
        document["image"] = {
            "file": image.file,
            "width": image.width,
            "height": image.height,
            "channels": image.channels,
        }
    if plan.sdf is not None:  # no expressions: the shape (a built-in's name or the file's path)
        document["sdf"] = {"shape": plan.sdf.spec}
    if plan.mesh is not None:  # the mesh's path, and how it was fitted into the box: box = mesh x scale + shift
        field = load_mesh_field(plan.mesh.spec, (*map(float, config.domain), *map(float, config.z_range)))
        document["sdf"] = {"shape": plan.mesh.spec, "fit": mesh_fit(field)}
    return document


def _output(plan: NetworkPlan, config: Config) -> dict[str, Any]:
    """What the last layer's outputs mean: values ("identity"), the logit of the second class
    ("logistic", p = sigmoid), or one logit per class ("softmax")."""
    output: dict[str, Any] = {"kind": plan.loss.output}
    if config.dataset and plan.loss.classifies:
        output["classes"] = list(problem_of(config.dataset).names)
    return output


def tables_npy(plan: NetworkPlan, params: np.ndarray) -> bytes:
    """TABLES_FILE's bytes: the grid's tables as a (entries, features) float32 array."""
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(plan.tables(params), np.float32).reshape(plan.grid.entries, plan.grid.features))
    return buffer.getvalue()


def encode(
    encoding: dict[str, Any],
    x: np.ndarray,
    y: np.ndarray,
    domain=None,
    tables: np.ndarray | None = None,
    z: np.ndarray | None = None,
) -> np.ndarray:
    """(N,) x and y (and z: the kind's 3D twin) to (N, inputs), per the schema's encoding (a grid's
    needs its domain and tables)."""
    kind = encoding_for(encoding["kind"], 2 if z is None else 3)
    return kind.numpy(x, y, kind.entry_setting(encoding), domain, tables, z)


def is_3d(network: dict[str, Any]) -> bool:
    """Whether the document is a function of (x, y, z): its domain has a "z"."""
    return "z" in network["domain"]


def forward(
    network: dict[str, Any],
    x: np.ndarray,
    y: np.ndarray,
    tables: np.ndarray | None = None,
    z: np.ndarray | None = None,
) -> np.ndarray:
    """Evaluates a network.json document at points (x, y), or (x, y, z) for a 3D one, in float64;
    returns (N, outputs). A grid encoding needs its `tables` (np.load of the file its entry names)."""
    if is_3d(network) != (z is not None):
        raise ValueError("a network of (x, y, z) takes z, and one of (x, y) takes none")
    domain = [*network["domain"]["x"], *network["domain"]["y"], *network["domain"].get("z", [])]  # a 3D grid's box
    point = (np.asarray(x, np.float64), np.asarray(y, np.float64))
    depth = None if z is None else np.asarray(z, np.float64)
    h = encode(network["encoding"], *point, domain, tables, depth)
    for layer in network["layers"]:
        pre = h @ np.asarray(layer["weights"], np.float64).T + np.asarray(layer["biases"], np.float64)
        extras = {key: value for key, value in layer.items() if key not in ("weights", "biases", "activation")}
        h = ACTIVATIONS[layer["activation"]].numpy(pre, **extras)
    return h


OUTPUT_KINDS = {loss.output: loss for loss in LOSSES.values()}


def predict(network: dict[str, Any], x: np.ndarray, y: np.ndarray, z: np.ndarray | None = None) -> np.ndarray:
    """The predictions at (x, y), or (x, y, z): the values, or each class's probability (for
    "logistic", the second class's)."""
    kind = network.get("output", {"kind": "identity"})["kind"]
    return OUTPUT_KINDS[kind].predict(forward(network, x, y, z=z))


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
    domain = network.get("domain")
    dims = 3 if isinstance(domain, dict) and "z" in domain else 2
    kinds = tuple(ENCODINGS if dims == 2 else ENCODINGS_3D)
    if not isinstance(encoding, dict) or not isinstance(encoding.get("kind"), str) or encoding["kind"] not in kinds:
        raise UserError(f"encoding must be one of {', '.join(kinds)}")
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
    if not isinstance(domain, dict) or not all(isinstance(domain.get(a), list) and len(domain[a]) == 2 for a in "xy"):
        raise UserError('domain must be {"x": [x0, x1], "y": [y0, y1]}')
    fields = {
        "hidden": [len(layer["biases"]) if isinstance(layer.get("biases"), list) else 0 for layer in layers[:-1]],
        "activation": hidden_acts.pop(),
        "output_activation": layers[-1]["activation"],
        "encoding": encoding["kind"],
        "domain": [*domain["x"], *domain["y"]],
        "dims": dims,  # set either way: the base (the window's saved config) may be of the other kind
    }
    if dims == 3:
        fields["z_range"] = domain["z"]  # Config's check_z_range says what a z range must be
    if network.get("data") is None:  # a dataset's network has no target expressions
        fields["targets"] = network.get("targets")
    fields |= encoding_for(encoding["kind"], dims).config_fields(encoding)
    if isinstance(network.get("image"), dict) and isinstance(network["image"].get("file"), str):
        fields["image"], _ = image_truth.load(network["image"]["file"])
        fields["targets"] = list(base.targets)
    if "sdf" in network:
        fields["sdf"], fields["targets"] = _sdf_shape(network["sdf"]), list(base.targets)
    fields.update(_data_fields(network))
    return from_dict(fields, base, source="the network")


def _sdf_shape(entry: Any) -> str:
    """The shape a distance field's network learned: its "sdf" entry's spec (Config.sdf checks it)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("shape"), str):
        raise UserError('sdf must be {"shape": "a built-in shape\'s name or a file"}')
    return entry["shape"]


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


def _load_tables(path: str, encoding: dict, plan: NetworkPlan) -> np.ndarray:
    """The tables file a grid encoding names, beside the network.json at `path`."""
    name = encoding.get("tables")
    if not isinstance(name, str) or Path(name).name != name:
        raise UserError("a grid encoding must name its tables file (a file name, beside network.json)")
    file = Path(path).parent / name
    try:
        tables = np.load(file, allow_pickle=False)
    except OSError as error:
        raise UserError(f"cannot read its tables {str(file)!r}: {error.strerror or error}") from None
    except ValueError:
        raise UserError(f"its tables {str(file)!r} are not a .npy array") from None
    shape = (plan.grid.entries, plan.grid.features)
    if tables.shape != shape or tables.dtype != np.float32:
        raise UserError(f"its tables must be float32 of shape {shape} (got {tables.dtype} {tables.shape})")
    if not np.all(np.isfinite(tables)):
        raise UserError("its tables hold a number that is not finite")
    return tables.ravel()


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
        if plan.grid is not None:
            params[plan.mlp_param_count :] = _load_tables(path, network["encoding"], plan)
    except OSError as error:
        raise UserError(f"cannot read --load-network {path!r}: {error.strerror or error}") from None
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise UserError(f"--load-network {path!r} is not a JSON file") from None
    except UserError as error:
        raise UserError(f"--load-network {path!r}: {error}") from None
    return config, params
