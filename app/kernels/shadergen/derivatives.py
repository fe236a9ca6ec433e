"""The per-architecture part of training on derivatives (shaders/model/derivatives.slang): one sample's
forward pass with tangents, layer by layer, then its backward pass from the loss's gradients
(bwd_diff of outputTerms and of each neuron's activation jet) through the layers' products. A
function of (x, y, z) (plan.point_dim 3) carries a third tangent, along z."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .chain import LayerStep, indent, layer_lines, layer_steps

if TYPE_CHECKING:
    from ..plan import NetworkPlan


def _inputs(s: LayerStep, point_dim: int = 2) -> str:
    """The layer's input and its tangents along x and y (and z, for a function of (x, y, z))."""
    if s.k == 0:
        return "alongX.p, alongX.d, alongY.d" + (", alongZ.d" if point_dim == 3 else "")
    return f"s{s.k - 1}.h, s{s.k - 1}.thx, s{s.k - 1}.thy" + (f", s{s.k - 1}.thz" if point_dim == 3 else "")


def _forward(s: LayerStep, point_dim: int) -> str:
    inputs = _inputs(s, point_dim)
    return f"let s{s.k} = jetLayerForward<{s.sizes}, {s.activation}>(weights + {s.layer.offset}, {inputs});"


def _backward(s: LayerStep, grid: bool, point_dim: int) -> list[str]:
    """Layer k backward: its activations' jets, then its products, with the gradients by the
    layer's input but for the first layer's where the encoding has no tables (its input is then a
    constant); a grid's tables take theirs (shaders/model/hashgrid_derivatives.slang)."""
    products = f"jetProductsBackward<{s.layer.fan_in}, {s.layer.fan_out}, {s.layer.offset}>"
    into = f"let d{s.k - 1} = " if s.k > 0 else "let dIn = " if grid else ""
    gradients = "true" if s.k > 0 or grid else "false"
    lines = [
        f"let dz{s.k} = jetActivationBackward<{s.layer.fan_out}, {s.activation}>(s{s.k}, d{s.k});",
        f"{into}{products}(weights + {s.layer.offset}, slot + {s.layer.offset}, dz{s.k}, {_inputs(s, point_dim)}, "
        f"{gradients});",
    ]
    if s.k == 0 and grid:
        lines.append("accumulateGridDerivativeGradients(sample.p, dIn.value.data, dIn.tx.data, dIn.ty.data);")
    return lines


@dataclass(frozen=True)
class ScratchLayout:
    """Offsets in a thread's scratch (shaders/model/derivatives.slang, wide networks): each activation
    (the encoded input, then each layer's output) and each pre-activation, 3 blocks of its width
    (value and tangents along x and y), then the gradients by a layer's output and by its
    pre-activation, 3 blocks of the widest layer each. A function of (x, y, z) has 4 blocks each
    (the tangent along z the fourth)."""

    activations: tuple[int, ...]  # layer k's input at activations[k], its output at activations[k + 1]
    pre: tuple[int, ...]  # layer k's pre-activation
    d_out: int
    d_pre: int
    total: int


def scratch_layout(sizes: tuple[int, ...], point_dim: int = 2) -> ScratchLayout:
    blocks = 1 + point_dim  # the value and a tangent along each coordinate
    activations = tuple(blocks * sum(sizes[:k]) for k in range(len(sizes)))
    base = blocks * sum(sizes)
    pre = tuple(base + blocks * sum(sizes[1 : k + 1]) for k in range(len(sizes) - 1))
    d_out = base + blocks * sum(sizes[1:])
    d_pre = d_out + blocks * max(sizes)
    return ScratchLayout(activations, pre, d_out, d_pre, d_pre + blocks * max(sizes))


def scratch_floats(plan: NetworkPlan) -> int:
    """Floats of scratch each thread keeps (0 where the jets stay in registers)."""
    if not plan.derivatives or plan.unroll_matvec:
        return 0
    return scratch_layout(plan.sizes, plan.point_dim).total


def _scratch_body(plan: NetworkPlan) -> list[str]:
    """derivativeSample's body for wide networks: the jets in the thread's scratch."""
    at = scratch_layout(plan.sizes, plan.point_dim)
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

// One sample of a loss with derivative terms: the forward pass with tangents along {_axes(plan)} from
// the encoding's forward mode, the loss's gradients (its value to threadLossSum), the backward pass
// into the thread's accumulators or the group's slot. `dLoss` is 1 for a real sample, 0 for
// padding; `scratch` is this thread's first scratch float, its next `stride` floats on (wide
// networks only).
void derivativeSample(NFloat* weights, float* slot, TrainingSample sample, float3 lossWeights, float dLoss,
                      float* scratch, uint stride)
{{
{indent(body, 1)}
}}"""


def _axes(plan: NetworkPlan) -> str:
    return "x and y" if plan.point_dim == 2 else "x, y and z"


def _encoded_tangents(plan: NetworkPlan) -> list[str]:
    """The encoded sample and its tangents along each coordinate, by the encoding's forward mode."""
    if plan.point_dim == 2:
        return [
            "let alongX = fwd_diff(encodeInput)(diffPair(sample.p, float2(1.0, 0.0)));",
            "let alongY = fwd_diff(encodeInput)(diffPair(sample.p, float2(0.0, 1.0)));",
        ]
    return [
        "let alongX = fwd_diff(encodeInput)(diffPair(sample.p, float3(1.0, 0.0, 0.0)));",
        "let alongY = fwd_diff(encodeInput)(diffPair(sample.p, float3(0.0, 1.0, 0.0)));",
        "let alongZ = fwd_diff(encodeInput)(diffPair(sample.p, float3(0.0, 0.0, 1.0)));",
    ]


def _register_body(plan: NetworkPlan) -> list[str]:
    """derivativeSample's body for small networks: each layer's jets as MLVecs."""
    last = len(plan.layers) - 1
    return [
        *_encoded_tangents(plan),
        *layer_lines(plan, lambda step: _forward(step, plan.point_dim)),
        f"let d{last} = outputGradients(s{last}, sample, lossWeights, dLoss);",
        *layer_lines(plan, lambda step: _backward(step, plan.grid is not None, plan.point_dim), backward=True),
    ]
