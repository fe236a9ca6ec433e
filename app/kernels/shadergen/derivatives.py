"""The per-architecture pieces of training on derivatives (shaders/derivatives.slang): the layers'
pre-activation offsets as one differentiable struct, the network written out inline, and the
weights' gradient as each layer's outer products with its input and the input's tangents."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .chain import LayerStep, indent, layer_lines

if TYPE_CHECKING:
    from ..plan import NetworkPlan


def _offset_member(s: LayerStep) -> str:
    return f"MLVec<{s.layer.fan_out}> d{s.k};"


def _zero_member(s: LayerStep) -> list[str]:
    return [f"[ForceUnroll] for (int i = 0; i < {s.layer.fan_out}; i++)", f"    offsets.d{s.k}.data[i] = NFloat(0.0);"]


def _offset_layer(s: LayerStep) -> list[str]:
    """Layer k inline: Act(W x + b + offset), summed in NFloat as matMulAdd sums (layers.slang), so
    that the values match the ones accumulateDerivativeGradients recomputes through denseLayer. The
    loop over outputs stays a loop and the sum over inputs is unrolled: with both loops rolled,
    Slang 2026.12's bwd_diff of fwd_diff returned wrong gradients for the outputs past the 14th
    (a 4-24-12-1 network against numpy; tests/test_derivative_loss.py), and unrolled it is right."""
    In, Out, w, source = s.layer.fan_in, s.layer.fan_out, s.layer.offset, s.source
    return [
        f"MLVec<{Out}> {s.result};",
        f"[loop] [MaxIters({Out})]",
        f"for (int i = 0; i < {Out}; i++)",
        "{",
        f"    NFloat sum = no_diff(derivativeWeights[{w + Out * In} + i]);",
        f"    [ForceUnroll] [MaxIters({In})]",
        f"    for (int j = 0; j < {In}; j++)",
        f"        sum += no_diff(derivativeWeights[{w} + i * {In} + j]) * {source}.data[j];",
        f"    {s.result}.data[i] = NFloat({s.activation}.apply(float(sum) + float(offsets.d{s.k}.data[i])));",
        "}",
    ]


def _accumulate(s: LayerStep) -> list[str]:
    """Layer k's three outer products, then (but for the last) its output and tangents, the next
    layer's input, through the same arithmetic as the loss's forward pass."""
    source = "encoded" if s.k == 0 else f"h{s.k - 1}"
    n, In, Out, offset = s.k, s.layer.fan_in, s.layer.fan_out, s.layer.offset
    template = f"{Out}, {In}, {offset}"
    lines = [
        f"outerProductAccumulate<{template}>(MLVec<{Out}>.fromArray(g.d{n}.data), {source}X.p, grads + {offset});",
        f"outerProductAccumulate<{template}>(MLVec<{Out}>.fromArray(gx.d{n}.data), {source}X.d, grads + {offset}, false);",
        f"outerProductAccumulate<{template}>(MLVec<{Out}>.fromArray(gy.d{n}.data), {source}Y.d, grads + {offset}, false);",
    ]
    if not s.last:
        layer = f"denseLayer<{s.sizes}, {s.activation}>"
        lines += [
            f"let h{n}X = fwd_diff({layer})(params + {offset}, {source}X);",
            f"let h{n}Y = fwd_diff({layer})(params + {offset}, {source}Y);",
        ]
    return lines


def derivative_functions(plan: NetworkPlan) -> str:
    """The generated module's part of derivatives.slang, and its include; nothing where the plan has
    no derivative terms (the kernel then never compiles the nested loss)."""
    if not plan.derivatives:
        return "#define DERIVATIVE_LOSS 0"
    return f"""#define DERIVATIVE_LOSS 1
// The layers' pre-activation offsets: zero in value, differentiable (shaders/derivatives.slang)
struct LayerOffsets : IDifferentiable
{{
{indent(layer_lines(plan, _offset_member), 1)}
}}

LayerOffsets zeroOffsets()
{{
    LayerOffsets offsets;
{indent(layer_lines(plan, _zero_member), 1)}
    return offsets;
}}

// The network of the point p with its pre-activations moved by `offsets`, every layer inline:
// Slang 2026.12's compiler crashes on bwd_diff of fwd_diff through a call that passes a struct or an
// array (an MLVec) as a differentiable argument, so the layers are not functions here.
[Differentiable]
MLVec<OUTPUT_DIM> networkAtPoint(float2 p, LayerOffsets offsets)
{{
    let x = encodeInput(p);
{indent(layer_lines(plan, _offset_layer), 1)}
    return h{len(plan.layers) - 1};
}}

// The weights' gradient of one sample from the loss's gradients by the offsets (g) and by their
// tangents along x and y (gx, gy): dW += g x^T + gx x_x^T + gy x_y^T and db += g, layer by layer,
// each layer's input x and its tangents x_x, x_y recomputed by forward mode.
void accumulateDerivativeGradients(NFloat* params, float* grads, float2 p, LayerOffsets.Differential g,
                                   LayerOffsets.Differential gx, LayerOffsets.Differential gy)
{{
    let encodedX = fwd_diff(encodeInput)(diffPair(p, float2(1.0, 0.0)));
    let encodedY = fwd_diff(encodeInput)(diffPair(p, float2(0.0, 1.0)));
{indent(layer_lines(plan, _accumulate), 1)}
}}

#include "derivatives.slang\""""
