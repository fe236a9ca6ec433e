"""Prints trainPair, the per-layer chain of the paired learnGradient (pairs.slang): half
precision on thread accumulators, two samples a thread at a time packed two to a register.
Forward through every layer keeping each pre-activation, the output layer's dZ and loss in fp32,
then from the output layer down each layer's fp32 weight-gradient sums and, above the first
layer, the dZ of the layer below."""

from __future__ import annotations

from ...plan import LayerPlan, NetworkPlan
from ...shadergen.chain import LayerStep, indent, layer_lines, layer_steps

PAIR_LINE_HALVES = 8  # pairs read the half weights in 16-byte lines (pairs.slang)


def _lines(begin: int, end: int) -> str:
    """`First, Lines`: the 16-byte lines of the weights buffer that hold halves [begin, end)."""
    first = begin // PAIR_LINE_HALVES
    return f"{first}, {-(-end // PAIR_LINE_HALVES) - first}"


def _forward(s: LayerStep) -> list[str]:
    layer: LayerPlan = s.layer
    x = "x" if s.k == 0 else f"h{s.k - 1}"
    return [
        f"Pairs<{layer.fan_out}> z{s.k};",
        f"let h{s.k} = pairForward<{s.sizes}, {s.activation}, {layer.offset}, "
        f"{_lines(layer.offset, layer.end)}>(w, {x}, z{s.k});",
    ]


def _backward(s: LayerStep) -> list[str]:
    """Layer k's gradient sums from its dZ (d{k}: fp32 at the output layer, half pairs below),
    then, above the first layer, dZ of layer k - 1."""
    layer: LayerPlan = s.layer
    below = "x" if s.k == 0 else f"h{s.k - 1}"
    dz = f"d{s.k}" if s.last else f"floatsOf(d{s.k})"
    lines = [f"pairAccumulate<{layer.fan_out}, {layer.fan_in}, {layer.offset}>({dz}, floatsOf({below}));"]
    if s.k > 0:
        packed = f"pairOfFloats(d{s.k})" if s.last else f"d{s.k}"
        lines += [
            f"let dh{s.k - 1} = pairInputGradient<{s.sizes}, {layer.offset}, "
            f"{_lines(layer.offset, layer.bias_offset)}>(w, {packed});",
            f"let d{s.k - 1} = pairHiddenGradient<{layer.fan_in}, HiddenActivation>(z{s.k - 1}, dh{s.k - 1});",
        ]
    return lines


def pair_kernel(plan: NetworkPlan) -> str:
    last = layer_steps(plan)[-1].k
    return f"""#include "paths/pairs/pairs.slang"

// Two samples forward and back (paths/pairs/pairs.slang); dL: 1 for a sample of the batch, 0 for padding.
void trainPair(half* w, float2 pA, float2 pB, float2 dL)
{{
    let x = pairOf<INPUT_DIM>(encodeInput(pA), encodeInput(pB));
{indent(layer_lines(plan, _forward), 1)}
    let d{last} = pairOutputGradient<OutputActivation>(h{last}, z{last}, groundTruth(pA), groundTruth(pB), dL);
{indent(layer_lines(plan, _backward, backward=True), 1)}
}}"""
