"""The per-architecture part of training on derivatives (shaders/derivatives.slang): one sample's
forward pass with tangents, layer by layer, then its backward pass from the loss's gradients
(bwd_diff of outputTerms and of each neuron's activation jet) through the layers' products."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .chain import LayerStep, indent, layer_lines

if TYPE_CHECKING:
    from ..plan import NetworkPlan


def _inputs(s: LayerStep) -> str:
    """The layer's input and its tangents along x and y."""
    if s.k == 0:
        return "alongX.p, alongX.d, alongY.d"
    return f"s{s.k - 1}.h, s{s.k - 1}.thx, s{s.k - 1}.thy"


def _forward(s: LayerStep) -> str:
    return f"let s{s.k} = jetLayerForward<{s.sizes}, {s.activation}>(weights + {s.layer.offset}, {_inputs(s)});"


def _backward(s: LayerStep) -> list[str]:
    """Layer k backward: its activations' jets, then its products (the input's gradients but for
    the first layer, whose input is the encoded sample: a constant)."""
    into = "" if s.k == 0 else f"let d{s.k - 1} = "
    products = f"jetProductsBackward<{s.layer.fan_in}, {s.layer.fan_out}, {s.layer.offset}>"
    gradients = "false" if s.k == 0 else "true"
    return [
        f"let dz{s.k} = jetActivationBackward<{s.layer.fan_out}, {s.activation}>(s{s.k}, d{s.k});",
        f"{into}{products}(weights + {s.layer.offset}, slot + {s.layer.offset}, dz{s.k}, {_inputs(s)}, {gradients});",
    ]


def derivative_functions(plan: NetworkPlan) -> str:
    """derivativeSample for the generated module, with its include; only `#define DERIVATIVE_LOSS 0`
    where the plan has no derivative terms (the kernel then never compiles them)."""
    if not plan.derivatives:
        return "#define DERIVATIVE_LOSS 0"
    last = len(plan.layers) - 1
    return f"""#define DERIVATIVE_LOSS 1
#include "derivatives.slang"

// One sample of a loss with derivative terms: the forward pass with tangents along x and y from
// the encoding's forward mode, the loss's gradients (its value to threadLossSum), the backward pass
// into the thread's accumulators or the group's slot. `dLoss` is 1 for a real sample, 0 for padding.
void derivativeSample(NFloat* weights, float* slot, TrainingSample sample, float2 lossWeights, float dLoss)
{{
    let alongX = fwd_diff(encodeInput)(diffPair(sample.p, float2(1.0, 0.0)));
    let alongY = fwd_diff(encodeInput)(diffPair(sample.p, float2(0.0, 1.0)));
{indent(layer_lines(plan, _forward), 1)}
    let d{last} = outputGradients(s{last}, sample, lossWeights, dLoss);
{indent(layer_lines(plan, _backward, backward=True), 1)}
}}"""
