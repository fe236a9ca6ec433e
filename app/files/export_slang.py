"""Export to Slang: the trained network as one standalone, differentiable .slang file (no includes),
printed from the NetworkPlan and the Python <-> Slang twins of app.model; what it defines:
docs/formats.md, 'The Slang export'. Why its code is literals in straight-line code with
hand-written derivatives: docs/architecture.md, 'The Slang export'."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..config.config import Config
from ..kernels.plan import LayerPlan, NetworkPlan, learned_distance
from ..train.trainer import Trainer
from .export_grid import grid_source, tables_bytes, tables_path
from .export_sdf import sdf_function, sdf_header


def _literal(value: np.float32) -> str:
    """The float32 as the shortest decimal of its exact float64 value: it parses back to the
    same float32 whether a compiler rounds it to float directly or through double."""
    return repr(float(value))


def _sums(name: str, matrix: np.ndarray, vector: str, first: np.ndarray | None = None) -> str:
    """`name`[r] = first[r] + sum over c of matrix[r, c] * vector[c], in that order, with the
    numbers as literals (one statement per row)."""
    lines = []
    for r, row in enumerate(matrix):
        terms = [_literal(first[r])] if first is not None else []
        terms += [f"{_literal(w)} * {vector}[{c}]" for c, w in enumerate(row)]
        lines.append(f"    {name}[{r}] = {' + '.join(terms)};")
    return "\n".join(lines)


def _layer(k: int, layer: LayerPlan, params: np.ndarray) -> str:
    """Layer k: act(W h + b), and its derivatives written out (see the module's note)."""
    n_in, n_out, act = layer.fan_in, layer.fan_out, f"trained_{layer.activation.name}"
    w, b = layer.weights(params), layer.biases(params)
    return f"""float[{n_out}] trained_z{k}(float h[{n_in}])
{{
    float z[{n_out}];
{_sums("z", w, "h", b)}
    return z;
}}

[ForwardDerivative(trained_layer{k}_fwd)]
[BackwardDerivative(trained_layer{k}_bwd)]
float[{n_out}] trained_layer{k}(float h[{n_in}])
{{
    float z[{n_out}] = trained_z{k}(h);
    for (int o = 0; o < {n_out}; o++)
        z[o] = {act}(z[o]);
    return z;
}}

DifferentialPair<float[{n_out}]> trained_layer{k}_fwd(DifferentialPair<float[{n_in}]> h)
{{
    float z[{n_out}] = trained_z{k}(h.p);
    float d[{n_out}];
{_sums("d", w, "h.d")}
    for (int o = 0; o < {n_out}; o++)
    {{
        let pair = fwd_diff({act})(diffPair(z[o], d[o]));
        z[o] = pair.p;
        d[o] = pair.d;
    }}
    return diffPair(z, d);
}}

void trained_layer{k}_bwd(inout DifferentialPair<float[{n_in}]> h, float dResult[{n_out}])
{{
    float z[{n_out}] = trained_z{k}(h.p);
    float dz[{n_out}];
    for (int o = 0; o < {n_out}; o++)
    {{
        var pair = diffPair(z[o]);
        bwd_diff({act})(pair, dResult[o]);
        dz[o] = pair.d;
    }}
    float dh[{n_in}];
{_sums("dh", w.T, "dz")}
    h = diffPair(h.p, dh);
}}"""


def _activations(plan: NetworkPlan) -> list[str]:
    used = {layer.activation.name: layer.activation for layer in plan.layers}
    return [
        f"[Differentiable]\nfloat trained_{name}(float z) {{ return {act.slang_of('z')}; }}"
        for name, act in used.items()
    ]


def _data_lines(data: dict | None) -> str:
    """The data source, split and figures as comment lines (no text of the user's but numbers,
    a generator's name, and a CSV's hash: a path or a class name could end a comment)."""
    if data is None:
        return ""
    source = data["source"]
    named = f"generator {source['generator']}" if "generator" in source else f"a CSV (SHA-256 {source['sha256']})"
    lines = [f"// Trained on {named}: {data['points']} points, {data['train']} to train and {data['test']} to test."]
    figures = {name: value for name, value in data.get("metrics", {}).items() if value is not None}
    if figures:
        lines.append(
            "// Final " + ", ".join(f"{name.replace('_', ' ')} {value:.6g}" for name, value in figures.items())
        )
    return "\n".join(lines) + "\n"


def _point(plan: NetworkPlan) -> tuple[str, str]:
    """The entry points' argument, its type and name: float2 xy, or float3 xyz for a function of
    (x, y, z) (the 3D encodings' expressions name it so)."""
    return ("float2", "xy") if plan.point_dim == 2 else ("float3", "xyz")


def _trained_on(config: Config, point_dim: int) -> str:
    x0, x1, y0, y1 = config.domain
    ranges = f"x in [{x0:g}, {x1:g}], y in [{y0:g}, {y1:g}]"
    if point_dim == 3:
        z0, z1 = config.z_range
        ranges += f", z in [{z0:g}, {z1:g}]"
    return ranges


def _header(plan: NetworkPlan, config: Config, step: int, data: dict | None = None) -> str:
    hidden = plan.layers[0].activation.name
    _, p = _point(plan)
    outputs = "\n".join(f"//   outputs[{k}] ~ {target}" for k, target in enumerate(plan.targets))
    if plan.loss.output == "logistic":
        outputs = "//   outputs[0] ~ the logit of the second class (p = sigmoid; classes in network.json's output)"
    elif plan.loss.output == "softmax":
        outputs = "//   outputs[k] ~ the logit of class k (p = softmax; classes in network.json's output)"
    elif learned_distance(plan, config):
        outputs = sdf_header(plan, config)
    return f"""// A network trained by Slang Visual Trainer, exported as standalone Slang: include or import it.
// {plan.title}: {plan.encoding.name} encoding, {hidden} hidden layers, {plan.layers[-1].activation.name} output,
// {plan.precision} precision, {step} steps from seed {config.seed}, trained on {_trained_on(config, plan.point_dim)}.
{_data_lines(data)}{outputs}
//
//     float outputs[TRAINED_OUTPUTS];
//     trained_network({p}, outputs);
//
// Both entry points are [Differentiable] in {p}, e.g. bwd_diff(trained_network)({p}Pair, dOutputs).
// In a differentiable loop over the outputs, call trained_network_outputs({p}), which returns
// the array: Slang loses the gradients of such a loop over an array filled by an out parameter."""


_PROBABILITIES = {
    "logistic": """    float p[TRAINED_OUTPUTS] = { 1.0 / (1.0 + exp(-z[0])) };
    return p;""",
    "softmax": """    float top = z[0];
    for (int o = 1; o < TRAINED_OUTPUTS; o++)
        top = max(top, z[o]);
    float sum = 0.0;
    float p[TRAINED_OUTPUTS];
    for (int o = 0; o < TRAINED_OUTPUTS; o++)
    {
        p[o] = exp(z[o] - top);
        sum += p[o];
    }
    for (int o = 0; o < TRAINED_OUTPUTS; o++)
        p[o] /= sum;
    return p;""",
}


def _probabilities(plan: NetworkPlan) -> str:
    """A classifier's probabilities from its logits (the app's loss applies the same function)."""
    if not plan.loss.classifies:
        return ""
    body = _PROBABILITIES[plan.loss.output]
    kind, p = _point(plan)
    return f"""
// The class probabilities: for two classes, the second class's; for more, each class's (softmax)
[Differentiable]
float[TRAINED_OUTPUTS] trained_network_probabilities({kind} {p})
{{
    float z[TRAINED_OUTPUTS] = trained_network_outputs({p});
{body}
}}
"""


def _encoding(plan: NetworkPlan, config: Config, tables_file: str) -> str:
    if plan.grid is not None:
        box = config.domain if plan.point_dim == 2 else [*config.domain, *config.z_range]  # the span of its grid
        return grid_source(plan.grid, box, tables_file)
    inputs = ",\n        ".join(plan.encoding.expressions(plan.encoding_setting))
    kind, p = _point(plan)
    return f"""[Differentiable]
float[TRAINED_INPUTS] trained_encode({kind} {p})
{{
    float h[TRAINED_INPUTS] = {{
        {inputs}
    }};
    return h;
}}"""


def slang_source(
    plan: NetworkPlan,
    config: Config,
    params: np.ndarray,
    step: int,
    tables_file: str = "trained_network.tables.bin",
    data: dict | None = None,
) -> str:
    """The standalone module for `params` (flat, in the plan's layout, the values to bake in; a
    grid's tables are named `tables_file`, written apart); `data` is the dataset's entry
    (app/files/run_summary.py's data_entry), where it learned points."""
    params = np.asarray(params, np.float32)
    parts = [
        _header(plan, config, step, data),
        "",
        f"static const int TRAINED_INPUTS = {plan.input_dim};",
        f"static const int TRAINED_OUTPUTS = {plan.output_dim};",
        "",
        _encoding(plan, config, tables_file),
    ]
    parts += [""] + [x for a in _activations(plan) for x in (a, "")]
    parts += [x for k, layer in enumerate(plan.layers) for x in (_layer(k, layer, params), "")]
    chain = "\n".join(f"    let h{k + 1} = trained_layer{k}(h{k});" for k in range(len(plan.layers) - 1))
    kind, p = _point(plan)
    parts.append(f"""[Differentiable]
float[TRAINED_OUTPUTS] trained_network_outputs({kind} {p})
{{
    let h0 = trained_encode({p});
{chain}
    return trained_layer{len(plan.layers) - 1}(h{len(plan.layers) - 1});
}}

[Differentiable]
void trained_network({kind} {p}, out float outputs[TRAINED_OUTPUTS])
{{
    outputs = trained_network_outputs({p});
}}
{_probabilities(plan)}{sdf_function(plan, config)}""")
    return "\n".join(parts)


def evaluated_parameters(trainer: Trainer) -> np.ndarray:
    """The parameters the app's kernels evaluate with: the fp32 masters, or the half copy."""
    count = trainer.plan.param_count
    if trainer.weights is trainer.master:
        return trainer.parameters()
    return trainer.gpu.read(trainer.weights, count, np.float16).astype(np.float32)


def trainer_source(trainer: Trainer, tables_file: str = "trained_network.tables.bin", data: dict | None = None) -> str:
    return slang_source(trainer.plan, trainer.config, evaluated_parameters(trainer), trainer.step, tables_file, data)


def export_files(trainer: Trainer, path: str | Path, data: dict | None = None) -> list[tuple[Path, bytes]]:
    """What --export-slang PATH writes: the .slang file, and beside it a grid's tables."""
    path = Path(path)
    params = evaluated_parameters(trainer)
    files = [(path, trainer_source(trainer, tables_path(path).name, data).encode())]
    if trainer.plan.grid is not None:
        files.append((tables_path(path), tables_bytes(trainer.plan.tables(params))))
    return files
