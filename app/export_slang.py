"""Export to Slang: the trained network as one standalone .slang file (no includes, no imports)
that defines

    static const int TRAINED_OUTPUTS;
    [Differentiable] void trained_network(float2 xy, out float outputs[TRAINED_OUTPUTS]);
    [Differentiable] float[TRAINED_OUTPUTS] trained_network_outputs(float2 xy);

with the encoding included and the weights baked in, printed from the NetworkPlan and the
Python <-> Slang twins of app.components. A grid encoding's tables go to a sidecar file that the
caller binds (app/export_grid.py says how); the functions stay [Differentiable] in xy.

It computes what the app's kernels compute, in the same order (bias first, then the inputs in
order), in float. A half network exports the half weights its kernels use, converted exactly
to float; the app evaluates those in half arithmetic, the export in float.

Why the code looks the way it does (each measured with SlangPy 0.43.1 on lavapipe):
- Weights are literals in straight-line code, not static const arrays: Slang copies a whole
  constant array into a local variable at every dynamically indexed read (2-64-64-64-4 took
  seconds per dispatch of 32 threads), and an array in a variable made the driver's compile
  take minutes. Literals compile in ~3 s for that network (forward), ~18 s with a backward pass.
- Each layer has hand-written forward and backward derivatives (W h, W^T dz): Slang's own
  autodiff through 64-wide array loops fails (an unroll limit) and through the straight-line
  code took minutes to compile.
- Layers return arrays rather than filling `out` parameters: Slang loses the gradients of a
  differentiable loop that reads an array filled through an `out` parameter (only element 0
  kept its gradient), so trained_network_outputs is the form to use inside such loops."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .config import Config
from .export_grid import grid_source, tables_bytes, tables_path
from .plan import LayerPlan, NetworkPlan
from .trainer import Trainer


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


def _header(plan: NetworkPlan, config: Config, step: int) -> str:
    hidden = plan.layers[0].activation.name
    x0, x1, y0, y1 = config.domain
    outputs = "\n".join(f"//   outputs[{k}] ~ {target}" for k, target in enumerate(plan.targets))
    return f"""// A network trained by Slang Visual Trainer, exported as standalone Slang: include or import it.
// {plan.title}: {plan.encoding.name} encoding, {hidden} hidden layers, {plan.layers[-1].activation.name} output,
// {plan.precision} precision, {step} steps from seed {config.seed}, trained on x in [{x0:g}, {x1:g}], y in [{y0:g}, {y1:g}].
{outputs}
//
//     float outputs[TRAINED_OUTPUTS];
//     trained_network(xy, outputs);
//
// Both entry points are [Differentiable] in xy, e.g. bwd_diff(trained_network)(xyPair, dOutputs).
// In a differentiable loop over the outputs, call trained_network_outputs(xy), which returns
// the array: Slang loses the gradients of such a loop over an array filled by an out parameter."""


def _encoding(plan: NetworkPlan, config: Config, tables_file: str) -> str:
    if plan.grid is not None:
        return grid_source(plan.grid, config.domain, tables_file)
    inputs = ",\n        ".join(plan.encoding.expressions(plan.frequencies))
    return f"""[Differentiable]
float[TRAINED_INPUTS] trained_encode(float2 xy)
{{
    float h[TRAINED_INPUTS] = {{
        {inputs}
    }};
    return h;
}}"""


def slang_source(
    plan: NetworkPlan, config: Config, params: np.ndarray, step: int, tables_file: str = "trained_network.tables.bin"
) -> str:
    """The standalone module for `params` (flat, in the plan's layout, the values to bake in; a
    grid's tables are named `tables_file`, written apart)."""
    params = np.asarray(params, np.float32)
    parts = [
        _header(plan, config, step),
        "",
        f"static const int TRAINED_INPUTS = {plan.input_dim};",
        f"static const int TRAINED_OUTPUTS = {plan.output_dim};",
        "",
        _encoding(plan, config, tables_file),
    ]
    parts += [""] + [x for a in _activations(plan) for x in (a, "")]
    parts += [x for k, layer in enumerate(plan.layers) for x in (_layer(k, layer, params), "")]
    chain = "\n".join(f"    let h{k + 1} = trained_layer{k}(h{k});" for k in range(len(plan.layers) - 1))
    parts.append(f"""[Differentiable]
float[TRAINED_OUTPUTS] trained_network_outputs(float2 xy)
{{
    let h0 = trained_encode(xy);
{chain}
    return trained_layer{len(plan.layers) - 1}(h{len(plan.layers) - 1});
}}

[Differentiable]
void trained_network(float2 xy, out float outputs[TRAINED_OUTPUTS])
{{
    outputs = trained_network_outputs(xy);
}}
""")
    return "\n".join(parts)


def evaluated_parameters(trainer: Trainer) -> np.ndarray:
    """The parameters the app's kernels evaluate with: the fp32 masters, or the half copy."""
    count = trainer.plan.param_count
    if trainer.weights is trainer.master:
        return trainer.parameters()
    return trainer.gpu.read(trainer.weights, count, np.float16).astype(np.float32)


def trainer_source(trainer: Trainer, tables_file: str = "trained_network.tables.bin") -> str:
    return slang_source(trainer.plan, trainer.config, evaluated_parameters(trainer), trainer.step, tables_file)


def export_files(trainer: Trainer, path: str | Path) -> list[tuple[Path, bytes]]:
    """What --export-slang PATH writes: the .slang file, and beside it a grid's tables."""
    path = Path(path)
    params = evaluated_parameters(trainer)
    files = [(path, trainer_source(trainer, tables_path(path).name).encode())]
    if trainer.plan.grid is not None:
        files.append((tables_path(path), tables_bytes(trainer.plan.tables(params))))
    return files
