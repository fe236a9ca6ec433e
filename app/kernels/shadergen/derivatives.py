"""The per-architecture part of training on derivatives (shaders/model/derivatives.slang): one sample's
forward pass with tangents, layer by layer, then its backward pass from the loss's gradients
(bwd_diff of outputTerms and of each neuron's activation jet) through the layers' products."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .chain import LayerStep, indent, layer_lines, layer_steps

if TYPE_CHECKING:
    from ..plan import NetworkPlan


def _inputs(s: LayerStep) -> str:
    """The layer's input and its tangents along x and y."""
    if s.k == 0:
        return "alongX.p, alongX.d, alongY.d"
    return f"s{s.k - 1}.h, s{s.k - 1}.thx, s{s.k - 1}.thy"


def _forward(s: LayerStep) -> str:
    return f"let s{s.k} = jetLayerForward<{s.sizes}, {s.activation}>(weights + {s.layer.offset}, {_inputs(s)});"


def _backward(s: LayerStep, grid: bool) -> list[str]:
    """Layer k backward: its activations' jets, then its products, with the gradients by the
    layer's input but for the first layer's where the encoding has no tables (its input is then a
    constant); a grid's tables take theirs (shaders/model/hashgrid_derivatives.slang)."""
    products = f"jetProductsBackward<{s.layer.fan_in}, {s.layer.fan_out}, {s.layer.offset}>"
    into = f"let d{s.k - 1} = " if s.k > 0 else "let dIn = " if grid else ""
    gradients = "true" if s.k > 0 or grid else "false"
    lines = [
        f"let dz{s.k} = jetActivationBackward<{s.layer.fan_out}, {s.activation}>(s{s.k}, d{s.k});",
        f"{into}{products}(weights + {s.layer.offset}, slot + {s.layer.offset}, dz{s.k}, {_inputs(s)}, {gradients});",
    ]
    if s.k == 0 and grid:
        lines.append("accumulateGridDerivativeGradients(sample.p, dIn.value.data, dIn.tx.data, dIn.ty.data);")
    return lines


@dataclass(frozen=True)
class ScratchLayout:
    """Offsets in a thread's scratch (shaders/model/derivatives.slang, wide networks): each activation
    (the encoded input, then each layer's output) and each pre-activation, 3 blocks of its width
    (value and tangents along x and y), then the gradients by a layer's output and by its
    pre-activation, 3 blocks of the widest layer each."""

    activations: tuple[int, ...]  # layer k's input at activations[k], its output at activations[k + 1]
    pre: tuple[int, ...]  # layer k's pre-activation
    d_out: int
    d_pre: int
    total: int


def scratch_layout(sizes: tuple[int, ...]) -> ScratchLayout:
    activations = tuple(3 * sum(sizes[:k]) for k in range(len(sizes)))
    base = 3 * sum(sizes)
    pre = tuple(base + 3 * sum(sizes[1 : k + 1]) for k in range(len(sizes) - 1))
    d_out = base + 3 * sum(sizes[1:])
    d_pre = d_out + 3 * max(sizes)
    return ScratchLayout(activations, pre, d_out, d_pre, d_pre + 3 * max(sizes))


def scratch_floats(plan: NetworkPlan) -> int:
    """Floats of scratch each thread keeps (0 where the jets stay in registers)."""
    return scratch_layout(plan.sizes).total if plan.derivatives and not plan.unroll_matvec else 0


def _scratch_body(plan: NetworkPlan) -> list[str]:
    """derivativeSample's body for wide networks: the jets in the thread's scratch."""
    at = scratch_layout(plan.sizes)
    lines = ["JetScratch s;", "s.base = scratch;", "s.stride = stride;", "scratchEncode(s, sample.p);"]
    for step in layer_steps(plan):
        n, In, Out, w = step.k, step.layer.fan_in, step.layer.fan_out, step.layer.offset
        lines.append(
            f"scratchLayerForward<{step.activation}>(s, weights + {w}, {In}, {Out}, "
            f"{at.activations[n]}, {at.pre[n]}, {at.activations[n + 1]});"
        )
    lines.append(f"scratchOutputGradients(s, {at.activations[-1]}, {at.d_out}, sample, lossWeights, dLoss);")
    for step in layer_steps(plan, backward=True):
        n, In, Out, w = step.k, step.layer.fan_in, step.layer.fan_out, step.layer.offset
        lines += [
            f"scratchActivationBackward<{step.activation}>(s, {Out}, {at.pre[n]}, {at.d_out}, {at.d_pre});",
            f"scratchProductsBackward(s, weights + {w}, slot + {w}, {In}, {Out}, {at.activations[n]}, "
            f"{at.d_pre}, {at.d_out}, {'true' if n > 0 or plan.grid is not None else 'false'});",
        ]
    if plan.grid is not None:  # the tables, from the gradients by the features
        lines.append(f"scratchGridGradients(s, {at.d_out}, sample.p);")
    return lines


def derivative_functions(plan: NetworkPlan) -> str:
    """derivativeSample for the generated module, with its include; only `#define DERIVATIVE_LOSS 0`
    where the plan has no derivative terms (the kernel then never compiles them). Networks with
    unrolled products (thread accumulators) keep their jets in registers; wider ones in scratch."""
    if not plan.derivatives:
        return "#define DERIVATIVE_LOSS 0"
    body = _register_body(plan) if plan.unroll_matvec else _scratch_body(plan)
    grid = '\n#include "model/hashgrid_derivatives.slang"' if plan.grid is not None else ""
    return f"""#define DERIVATIVE_LOSS 1
#include "model/derivatives.slang"{grid}

// One sample of a loss with derivative terms: the forward pass with tangents along x and y from
// the encoding's forward mode, the loss's gradients (its value to threadLossSum), the backward pass
// into the thread's accumulators or the group's slot. `dLoss` is 1 for a real sample, 0 for
// padding; `scratch` is this thread's first scratch float, its next `stride` floats on (wide
// networks only).
void derivativeSample(NFloat* weights, float* slot, TrainingSample sample, float3 lossWeights, float dLoss,
                      float* scratch, uint stride)
{{
{indent(body, 1)}
}}"""


def _register_body(plan: NetworkPlan) -> list[str]:
    """derivativeSample's body for small networks: each layer's jets as MLVecs."""
    last = len(plan.layers) - 1
    return [
        "let alongX = fwd_diff(encodeInput)(diffPair(sample.p, float2(1.0, 0.0)));",
        "let alongY = fwd_diff(encodeInput)(diffPair(sample.p, float2(0.0, 1.0)));",
        *layer_lines(plan, _forward),
        f"let d{last} = outputGradients(s{last}, sample, lossWeights, dLoss);",
        *layer_lines(plan, lambda step: _backward(step, plan.grid is not None), backward=True),
    ]
