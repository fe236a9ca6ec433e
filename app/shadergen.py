"""Prints a NetworkPlan as the small Slang module that specialises the shader library for one
architecture: constants from app.components, element type, layer sizes and offsets,
activations, encoding and the ground truth (expressions printed by app.targets, or a user's
Slang file placed verbatim in its own namespace). Everything else is in shaders/."""

from __future__ import annotations

from .components import slang_constants
from .plan import ADJUST_PARAMS, ADJUST_PARTS, NetworkPlan, SlangTruth
from .shadergen_fused import fused_constants, fused_kernel, weight_copies_function
from .shadergen_tiles import tile_constants, tiles_kernel
from .targets import target_to_slang

# The name a user's Slang file has in the compiler's messages (#line), whatever its path:
# app/slang_target.py puts the file's own name back. A path could hold a quote or a newline.
TARGET_SOURCE_NAME = "user-target-file.slang"
TARGET_NAMESPACE = "user_target"


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _network_struct(plan: NetworkPlan) -> str:
    last = len(plan.layers) - 1
    members, chain, links = [], [], []
    for k, layer in enumerate(plan.layers):
        act = "OutputActivation" if k == last else "HiddenActivation"
        members.append(
            f"    FeedForwardLayer<{layer.fan_in}, {layer.fan_out}, {act}, {layer.offset}, {layer.z_offset}> layer{k};"
        )
        source = "x" if k == 0 else f"h{k - 1}"
        chain.append(f"        {'return ' if k == last else f'let h{k} = '}layer{k}.eval({source});")
        links.append(
            f"    network.layer{k}.params = params + {layer.offset};\n"
            f"    network.layer{k}.grads = grads + {layer.offset};"
        )
    nl = "\n"
    return f"""struct Network
{{
{nl.join(members)}

    [Differentiable]
    MLVec<OUTPUT_DIM> eval(MLVec<INPUT_DIM> x)
    {{
{nl.join(chain)}
    }}
}}

// `grads` may be null where no backward pass runs.
Network makeNetwork(NFloat* params, float* grads)
{{
    Network network;
{nl.join(links)}
    return network;
}}"""


def _learn_gradient(plan: NetworkPlan) -> str:
    """learnGradient: the per-thread kernel (shaders/train.slang), or workgroup tiles."""
    if plan.gradient_path != "tiles":
        return '#include "train.slang"'
    if plan.fused:
        return f'{fused_constants(plan)}\n#include "fused.slang"\n\n{fused_kernel(plan)}'
    mma = '#include "tiles_mma.slang"\n' if any(plan.mma) else ""
    return f'{tile_constants(plan)}\n#include "tiles.slang"\n{mma}\n{tiles_kernel(plan)}'


def _layer_chain(plan: NetworkPlan, after_layer: str = "") -> list[str]:
    """The layers as calls of denseLayer, h0 = layer 0 of x, ...; `after_layer` is a format with
    {k} (layer), {width} and {offset} (first neuron) added after each layer's line."""
    last, lines = len(plan.layers) - 1, []
    for k, layer in enumerate(plan.layers):
        act = "OutputActivation" if k == last else "HiddenActivation"
        source = "x" if k == 0 else f"h{k - 1}"
        lines.append(
            f"    let h{k} = denseLayer<{layer.fan_in}, {layer.fan_out}, {act}>(params + {layer.offset}, {source});"
        )
        if after_layer:
            lines.append(after_layer.format(k=k, width=layer.fan_out, offset=plan.neuron_offset(k + 1)))
    return lines


def _views_functions(plan: NetworkPlan) -> str:
    """The network as one differentiable function of its input (the derivative views run
    fwd_diff through it), and the same chain writing every neuron's value (the neuron views)."""
    nl, last = "\n", len(plan.layers) - 1
    differentiable = _layer_chain(plan)
    neurons = _layer_chain(plan, "    storeNeurons<{width}>(h{k}, out + {offset} * stride, stride);")
    return f"""// The network's layers as plain differentiable functions of the input (layers.slang): the same
// weights and arithmetic as Network.eval, without the training kernels' custom derivatives.
[Differentiable]
MLVec<OUTPUT_DIM> networkOfInput(no_diff NFloat* params, MLVec<INPUT_DIM> x)
{{
{nl.join(differentiable)}
    return h{last};
}}

// Every neuron's value for the neuron views, out[neuron * stride] in plan order (the encoded
// input, each hidden layer, the output); returns the output.
MLVec<OUTPUT_DIM> networkWithNeurons(NFloat* params, MLVec<INPUT_DIM> x, float* out, uint stride)
{{
    storeNeurons<INPUT_DIM>(x, out, stride);
{nl.join(neurons)}
    return h{last};
}}"""


def slang_target_block(source: str) -> str:
    """A user's Slang file as the generated module holds it: in a namespace of its own, so that
    its names can't collide with the library's, with the compiler's messages naming its lines."""
    return f'namespace {TARGET_NAMESPACE}\n{{\n#line 1 "{TARGET_SOURCE_NAME}"\n{source}\n}}\n'


def _ground_truth(plan: NetworkPlan) -> tuple[str, str]:
    """groundTruth(p), differentiable in p for the derivative views; and, for a Slang file, the
    file's block, which goes last so that every line of the module before it keeps its number."""
    truth: SlangTruth | None = plan.slang_truth
    if truth is None:
        values = [target_to_slang(t) for t in plan.targets]
        tail = ""
    else:
        values = [f"{TARGET_NAMESPACE}::target(p, {k})" for k in range(truth.count)]
        tail = slang_target_block(truth.source)
    body = ",\n        ".join(values)
    return (
        f"""[Differentiable]
float[OUTPUT_DIM] groundTruth(float2 p)
{{
    float truth[OUTPUT_DIM] = {{
        {body}
    }};
    return truth;
}}""",
        tail,
    )


def network_source(plan: NetworkPlan) -> str:
    truth, tail = _ground_truth(plan)
    accumulate = plan.thread_accumulators
    hidden_act, output_act = plan.layers[0].activation, plan.layers[-1].activation  # >= 1 hidden layer
    return f"""// Generated by app/shadergen.py for one architecture: {plan.title}.
{slang_constants()}
typealias NFloat = {"half" if plan.precision == "half" else "float"};
static const int INPUT_DIM = {plan.input_dim};
static const int OUTPUT_DIM = {plan.output_dim};
static const uint PARAM_COUNT = {plan.param_count};
static const bool THREAD_ACCUMULATORS = {_flag(accumulate)};
static const int THREAD_ACCUMULATOR_COUNT = {plan.param_count if accumulate else 1};
static const bool CACHE_PRE_ACTIVATIONS = {_flag(accumulate)};
static const int PRE_ACTIVATION_COUNT = {sum(plan.sizes[1:]) if accumulate else 1};
static const uint TRAIN_GROUP_SIZE = {plan.group_size};
static const bool UNROLL_MATVEC = {_flag(plan.unroll_matvec)};
static const int TILE_INPUTS = {plan.tile_inputs};
static const int TILE_OUTPUTS = {plan.tile_outputs};
static const uint ADJUST_PARAMS = {ADJUST_PARAMS};
static const uint ADJUST_PARTS = {ADJUST_PARTS};
static const uint NEURON_COUNT = {plan.neuron_count};

#include "mlvec.slang"
#include "gradients.slang"
#include "activations.slang"
#include "layers.slang"
#include "encodings.slang"
#include "sampling.slang"
#include "targets.slang"

typealias HiddenActivation = {hidden_act.slang};
typealias OutputActivation = {output_act.slang};

{_network_struct(plan)}

[Differentiable]
MLVec<INPUT_DIM> encodeInput(float2 p)
{{
    return {plan.encoding.slang};
}}

{truth}

#include "loss.slang"
#include "optimizers.slang"
#include "step_args.slang"
{weight_copies_function(plan)}
#include "adjust.slang"
{_learn_gradient(plan)}
#include "visualize.slang"
#include "neurons.slang"

{_views_functions(plan)}
{tail}"""
