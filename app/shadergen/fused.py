"""Prints learnGradient for the fully fused tensor-core trainer (shaders/fused.slang): the layout
constants of app/fused_layout.py, the forward calls and the loss, then from the output layer down
a workgroup barrier, the weight-gradient products and the backward call of each layer; and
storeWeightCopies, with which adjustParameters keeps the block copies of the hidden weights."""

from __future__ import annotations

from ..fused_layout import FUSED_SAMPLES, FUSED_THREADS, FUSED_WARPS, FusedLayout, fused_layout
from ..plan import NetworkPlan
from .chain import LayerStep, indent, layer_lines

# Accumulator-to-operand conversion in registers (SPV_NV_cooperative_matrix2) instead of reading
# each layer's output back from shared memory. Off: on the H200 it measured no faster.
CONVERT_USE = False


def layout_of(plan: NetworkPlan) -> FusedLayout:
    layout = fused_layout(plan.sizes)
    if layout is None:
        raise ValueError(f"{plan.title} does not fit the fused tensor-core trainer")
    return layout


def fused_constants(plan: NetworkPlan) -> str:
    layout = layout_of(plan)
    return f"""// The fused trainer's layout (app/fused_layout.py): uint4 offsets and strides in shared memory
static const uint FUSED_WARPS = {FUSED_WARPS};
static const uint FUSED_THREADS = {FUSED_THREADS};
static const uint FUSED_SAMPLES = {FUSED_SAMPLES};
static const uint FUSED_MEM = {layout.words};
static const uint FUSED_SLOT0 = {layout.bases[0]};
static const uint FUSED_SLOT0_STRIDE = {layout.strides[0]};
static const uint FUSED_FIRST_W = {layout.first_w};
static const uint FUSED_FIRST_STRIDE = {layout.first_stride};
static const uint FUSED_LAST_W = {layout.last_w};
static const uint FUSED_LAST_STRIDE = {layout.last_stride};
static const uint FUSED_LAST_B = {layout.last_b};
static const uint FIRST_OUT = {plan.sizes[1]};
static const uint LAST_IN = {plan.sizes[-2]};
static const bool FUSED_CONVERT_USE = {"true" if CONVERT_USE else "false"};"""


def _tiles(size: int) -> int:
    return -(-size // 16)


def _slot(layout: FusedLayout, j: int) -> str:
    """Slot j's first uint4 and row stride: slot k holds layer k's input, slot k + 2 its dZ."""
    return f"{layout.bases[j]}, {layout.strides[j]}"


def _weights(layout: FusedLayout, s: LayerStep, forward: bool) -> str:
    """Layer k's weight source, pointer and staged row stride (uint4) for one direction."""
    if s.k == 0:
        return f"FUSED_FIRST, w, {layout.first_stride}"
    if s.last:
        return f"FUSED_LAST, w, {layout.last_stride}"
    copy = next(c for c in layout.copies if c.layer == s.k)
    return f"FUSED_GLOBAL, w + {copy.forward if forward else copy.backward}, 0"


def _tile_sizes(s: LayerStep) -> str:
    return f"{_tiles(s.layer.fan_in)}, {_tiles(s.layer.fan_out)}"


def _forward(plan: NetworkPlan, layout: FusedLayout) -> list[str]:
    """Layer k reads its input as A operands a{k} and leaves its output in slot k + 1 and as
    a{k + 1}; the output layer ends in the loss and the output's dZ (operands g{last})."""
    inputs = _tiles(plan.sizes[0])

    def layer(s: LayerStep) -> list[str]:
        if s.last:
            return [
                f"fusedOutputAndLoss<{_tiles(s.layer.fan_in)}, OutputActivation>(warp, lane, p, valid, w, a{s.k}, "
                f"{_slot(layout, s.k + 1)}, {_slot(layout, s.k + 2)}, loss);",
                f"FusedA g{s.k}[1];",
                f"fusedLoadOperands<1>(warp, {_slot(layout, s.k + 2)}, g{s.k});",
            ]
        return [
            f"FusedA a{s.k + 1}[{_tiles(s.layer.fan_out)}];",
            f"fusedForward<{_tile_sizes(s)}, HiddenActivation>(warp, {_weights(layout, s, True)}, "
            f"w + {s.layer.bias_offset}, a{s.k}, {_slot(layout, s.k + 1)}, a{s.k + 1});",
        ]

    first = [f"FusedA a0[{inputs}];", f"fusedLoadOperands<{inputs}>(warp, {_slot(layout, 0)}, a0);"]
    return first + layer_lines(plan, layer)


def _blocks(layout: FusedLayout, s: LayerStep) -> str:
    b = layout.blocks[s.k]
    return f"{b.to}, {b.ti}, {b.bo}, {b.bi}, {b.rounds}"


def _backward(plan: NetworkPlan, layout: FusedLayout) -> list[str]:
    """From the output layer down: dZ of layer k is in slot k + 2 (and in operands g{k}), its
    input in slot k; dZ of layer k - 1 goes to slot k + 1."""

    def layer(s: LayerStep) -> list[str]:
        k = s.k
        calls = [
            "GroupMemoryBarrierWithGroupSync();  // every subgroup's dZ of this layer is in place",
            f"fusedWeightGradients<{_blocks(layout, s)}>(warp, {_slot(layout, k + 2)}, {_slot(layout, k)}, "
            f"dw{k}, db{k});",
        ]
        if k > 0:
            calls += [
                f"FusedA g{k - 1}[{_tiles(s.layer.fan_in)}];",
                f"fusedBackward<{_tiles(s.layer.fan_out)}, {_tiles(s.layer.fan_in)}, HiddenActivation>(warp, "
                f"{_weights(layout, s, False)}, g{k}, {_slot(layout, k)}, {_slot(layout, k + 1)}, g{k - 1});",
            ]
        return calls

    return layer_lines(plan, layer, backward=True)


def _accumulators(plan: NetworkPlan, layout: FusedLayout) -> tuple[list[str], list[str]]:
    """Each subgroup's dW and db tiles: declared before the tile loop, written after it."""

    def declare(s: LayerStep) -> list[str]:
        b, k = layout.blocks[s.k], s.k
        weights, biases = b.rounds * b.bo * b.bi, b.rounds * b.bo
        return [
            f"FusedC dw{k}[{weights}];",
            f"FusedC db{k}[{biases}];",
            f"[ForceUnroll] for (int q = 0; q < {weights}; q++) dw{k}[q] = FusedC(0.0);",
            f"[ForceUnroll] for (int q = 0; q < {biases}; q++) db{k}[q] = FusedC(0.0);",
        ]

    def write(s: LayerStep) -> str:
        return (
            f"fusedWriteGradients<{_blocks(layout, s)}, {s.sizes}>(warp, lane, slot + {s.layer.offset}, "
            f"slot + {s.layer.bias_offset}, dw{s.k}, db{s.k});"
        )

    return layer_lines(plan, declare), layer_lines(plan, write)


def fused_kernel(plan: NetworkPlan) -> str:
    layout = layout_of(plan)
    declare, write = _accumulators(plan, layout)
    first, last = plan.layers[0], plan.layers[-1]
    return f"""// learnGradient for the fully fused tensor-core trainer: each subgroup carries 16 samples of a
// tile through every layer forward and backward; the workgroup sums weight gradients over the tile.
[shader("compute")]
[numthreads(FUSED_THREADS, 1, 1)]
void learnGradient(uint3 groupId : SV_GroupID, uint3 localId : SV_GroupThreadID, uniform StepArgs* args)
{{
    let a = *args;
    uint tid = localId.x, lane = WaveGetLaneIndex(), warp = tid / 32;
    uint group = groupId.x + a.groupOffset;
    uint groups = a.threadCount / FUSED_THREADS;
    uint tiles = (a.batchSize + FUSED_SAMPLES - 1) / FUSED_SAMPLES;
    float4 domain = float4(a.x0, a.x1, a.y0, a.y1);
    half* w = a.weights;
    float* slot = a.gradientSlots + group * PARAM_COUNT;  // this workgroup's alone
    fusedStageWeights(tid, w + {first.offset}, w + {last.offset});  // ends with a barrier

    // Each subgroup's blocks of weight-gradient tiles, over all tiles
{indent([*declare, "float loss = 0.0;"], 1)}
    for (uint tile = group; tile < tiles; tile += groups)  // the same count for the whole group
    {{
        float2 p;
        bool valid;
        fusedLoadSamples(warp, lane, tile, a.batchSize, a.seed, a.step, domain, p, valid);

        // Forward: each subgroup its own samples, no workgroup barrier
{indent(_forward(plan, layout), 2)}

        // Backward: per layer a barrier, the weight gradients over the tile, dZ of the layer below
{indent(_backward(plan, layout), 2)}
        GroupMemoryBarrierWithGroupSync();  // the next tile overwrites the slots
    }}

    // Into this workgroup's gradient slot
{indent(write, 1)}
    float total = fusedLossSum(tid, loss);
    if (tid == 0)
        a.lossSlots[group] += total;
}}"""


def weight_copies_function(plan: NetworkPlan) -> str:
    """storeWeightCopies, which adjustParameters calls with each updated half weight: it writes
    the weight into the fused trainer's block copies (app/fused_layout.py), if it has any."""
    blocks = []
    for c in layout_of(plan).copies if plan.fused else ():
        ti, to = c.fan_in // 16, c.fan_out // 16
        blocks += [
            f"if (index >= {c.offset} && index < {c.offset + c.fan_in * c.fan_out})  // layer {c.layer}",
            "{",
            f"    uint o = (index - {c.offset}) / {c.fan_in}, i = (index - {c.offset}) % {c.fan_in};",
            f"    w[{c.forward} + ((o / 16) * {ti} + i / 16) * 256 + (o % 16) * 16 + i % 16] = value;",
            f"    w[{c.backward} + ((i / 16) * {to} + o / 16) * 256 + (i % 16) * 16 + o % 16] = value;",
            "}",
        ]
    return f"""// The fused trainer's block copies of the hidden weights (none for other kernels)
void storeWeightCopies(NFloat* w, uint index, NFloat value)
{{
{indent(blocks, 1)}
}}"""
