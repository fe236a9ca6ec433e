"""Prints what the fused trainer's learnGradient (fused.slang) takes from the generated module: the
layout constants (layout.py), its per-layer calls unrolled as inlined helpers (fusedBeginStep,
fusedForward, fusedBackward, fusedWriteSlot; a grid's input gradient: fused_grid.slang), and
storeWeightCopies, with which adjustParameters keeps the block copies of the hidden weights."""

from __future__ import annotations

from collections.abc import Sequence

from ...plan import NetworkPlan
from ...shadergen.chain import LayerStep, indent, inlined, layer_lines
from .layout import FusedLayout, WeightCopy, fused_layout


def layout_of(plan: NetworkPlan) -> FusedLayout:
    layout = fused_layout(plan.sizes, jets=plan.derivatives, tables=plan.grid_param_count, point_dim=plan.point_dim)
    if layout is None:
        raise ValueError(f"{plan.title} does not fit the fused tensor-core trainer")
    return layout


def fused_constants(plan: NetworkPlan) -> str:
    layout = layout_of(plan)
    return f"""// The fused trainer's layout (app/kernels/paths/fused/layout.py): uint4 offsets and strides in shared memory
static const uint FUSED_WARPS = {layout.warps};
static const uint FUSED_THREADS = {layout.threads};
static const uint FUSED_SAMPLES = {layout.samples};
static const uint FUSED_ROWS = {layout.rows};  // a tile's rows: {layout.channels} a sample
static const uint FUSED_CHANNELS = {layout.channels};  // 3: a sample's value and tangents (fused_jets.slang)
static const uint FUSED_ROW_BLOCKS = {layout.row_blocks};  // blocks of 16 rows
static const uint FUSED_GROUPS = {layout.groups};  // subgroups that own 16 samples of a tile
static const uint FUSED_MEM = {layout.words};
static const uint FUSED_SLOT0 = {layout.bases[0]};
static const uint FUSED_SLOT0_STRIDE = {layout.strides[0]};
static const uint FUSED_FIRST_W = {layout.first_w};
static const uint FUSED_FIRST_STRIDE = {layout.first_stride};
static const uint FUSED_LAST_W = {layout.last_w};
static const uint FUSED_LAST_STRIDE = {layout.last_stride};
static const uint FUSED_LAST_B = {layout.last_b};
static const uint FUSED_ONES = {layout.ones};
static const uint FIRST_OUT = {plan.sizes[1]};
static const uint LAST_IN = {plan.sizes[-2]};
static const bool FUSED_SQUARED_LOSS = {"true" if plan.loss_name == "squared" else "false"};  // else bwd_diff of outputLoss
static const bool FUSED_POINTS = {"true" if plan.truth_kind == "points" else "false"};  // a dataset's rows: truth read at the loss"""


def _tiles(size: int) -> int:
    return -(-size // 16)


def _slot(layout: FusedLayout, j: int) -> str:
    """Slot j's first uint4 and row stride: slot k holds layer k's input, slot k + 2 its dZ."""
    return f"{layout.bases[j]}, {layout.strides[j]}"


def _copy(layout: FusedLayout, s: LayerStep, forward: bool) -> str:
    """A hidden layer's fragment-native weight copy for one direction."""
    copy = next(c for c in layout.copies if c.layer == s.k)
    return f"w + {copy.forward if forward else copy.backward}"


def _columns(layout: FusedLayout, tiles: int) -> str:
    """The R, S generics of a layer split by columns into `tiles` output tiles: the subgroup's
    rounds of tiles, and how many subgroups share each (fused_layers.slang)."""
    return f"{layout.rounds(tiles)}, {layout.column_split(tiles)}"


def _hold(layout: FusedLayout, s: LayerStep, forward: bool) -> list[str]:
    """A hidden layer's weight tiles the subgroup multiplies with in one direction (fw: forward,
    bw: backward), declared and loaded (fused_layers.slang: fusedHoldColumns)."""
    fan_in, fan_out = _tiles(s.layer.fan_in), _tiles(s.layer.fan_out)
    k_tiles, n_tiles = (fan_in, fan_out) if forward else (fan_out, fan_in)
    name = _held_name(s, forward)
    return [
        f"FusedB {name}[{layout.rounds(n_tiles) * k_tiles}];",
        f"fusedHoldColumns<{k_tiles}, {n_tiles}, {_columns(layout, n_tiles)}>(warp, {_copy(layout, s, forward)}, {name});",
    ]


def _held_name(s: LayerStep, forward: bool) -> str:
    return f"fused{'Fw' if forward else 'Bw'}{s.k}"


def _held(plan: NetworkPlan, layout: FusedLayout) -> tuple[list[str], list[str]]:
    """Where the layout holds the weights for the whole step: every hidden layer's, both
    directions, as statics loaded before the tile loop (else each is loaded just before its
    layer, every tile). Their declarations, and the loads."""
    if not layout.holds_weights:
        return [], ["// (loaded every tile, just before each layer: holding them all would spill registers)"]

    def holds(s: LayerStep) -> list[str]:
        return [] if s.k == 0 or s.last else [*_hold(layout, s, True), *_hold(layout, s, False)]

    lines = layer_lines(plan, holds)
    return [f"static {line}" for line in lines[0::2]], lines[1::2]


def _tile_sizes(s: LayerStep) -> str:
    return f"{_tiles(s.layer.fan_in)}, {_tiles(s.layer.fan_out)}"


def _jet(plan: NetworkPlan) -> str:
    """The infix of the layer functions: "Jet" where the loss has derivative terms, whose samples
    carry their tangents through the layers (fused_jets.slang)."""
    return "Jet" if plan.derivatives else ""


def _samples(plan: NetworkPlan) -> list[str]:
    """The tile's samples into slot 0; each lane keeps its point and validity (and with derivative
    terms a boundary sample's normal) for the loss."""
    if plan.grid is not None:  # the workgroup encodes the tile (fused_grid.slang)
        return ["SamplePoint p;", "bool valid;", "fusedGridLoadSamples(tid, warp, lane, tile, a, p, valid);"]
    if not plan.derivatives:
        return ["SamplePoint p;", "bool valid;", "fusedLoadSamples(warp, lane, tile, a, p, valid);"]
    return ["float2 p, normal;", "bool valid;", "fusedJetLoadSamples(warp, lane, tile, a, p, valid, normal);"]


def _forward(plan: NetworkPlan, layout: FusedLayout) -> list[str]:
    """Layer k reads slot k and writes slot k + 1: the first and output layers each subgroup for
    its own rows (their weights staged in shared memory), hidden layers split by columns with a
    workgroup barrier after each; the output layer ends in the loss and its dZ in slot k + 2."""
    jet = _jet(plan)

    def layer(s: LayerStep) -> list[str]:
        between = f"{_slot(layout, s.k)}, {_slot(layout, s.k + 1)}"
        if s.last:
            return [
                f"fused{jet}OutputAndLoss<{_tiles(s.layer.fan_in)}, OutputActivation>(warp, lane, a, tile, p, valid, "
                f"{'normal, ' if jet else ''}"
                f"{between}, {_slot(layout, s.k + 2)}, loss);"
            ]
        if s.k == 0:
            calls = [
                f"fused{jet}ForwardRows<{_tile_sizes(s)}, HiddenActivation>(warp, w + {s.layer.bias_offset}, {between});"
            ]
        else:
            calls = [] if layout.holds_weights else _hold(layout, s, True)
            calls.append(
                f"fused{jet}ForwardColumns<{_tile_sizes(s)}, {_columns(layout, _tiles(s.layer.fan_out))}, "
                f"HiddenActivation>(warp, {_held_name(s, True)}, w + {s.layer.bias_offset}, {between});"
            )
        return [*calls, "GroupMemoryBarrierWithGroupSync();  // the next layer reads every column"]

    return layer_lines(plan, layer)


def _blocks(layout: FusedLayout, s: LayerStep) -> str:
    b = layout.blocks[s.k]
    return f"{b.to}, {b.ti}, {b.bo}, {b.bi}, {b.rounds}"


def _backward(plan: NetworkPlan, layout: FusedLayout) -> list[str]:
    """From the output layer down: dZ of layer k is in slot k + 2, its input in slot k; dZ of
    layer k - 1 goes to slot k + 1 (the output layer's subgroup by subgroup, hidden layers' by
    columns)."""
    jet = _jet(plan)

    def layer(s: LayerStep) -> list[str]:
        k = s.k
        calls = [
            "GroupMemoryBarrierWithGroupSync();  // every subgroup's dZ of this layer is in place",
            f"fusedWeightGradients<{_blocks(layout, s)}>(warp, {_slot(layout, k + 2)}, {_slot(layout, k)}, "
            f"{layout.bias_columns[k]}, fusedDw{k}, fusedBias);",
        ]
        below = f"{_slot(layout, k + 2)}, {_slot(layout, k)}, {_slot(layout, k + 1)}"
        if s.last:
            calls.append(f"fused{jet}BackwardRows<{_tiles(s.layer.fan_in)}, HiddenActivation>(warp, {below});")
        elif k == 0 and plan.grid is not None:  # the input gradient, into the tables
            calls.append(
                f"fusedGridBackward<{_tiles(s.layer.fan_out)}, {_tiles(s.layer.fan_in)}>(tid, warp, "
                f"{_slot(layout, 2)}, {_slot(layout, 1)});"
            )
        elif k > 0:
            calls += [] if layout.holds_weights else _hold(layout, s, False)
            calls.append(
                f"fused{jet}BackwardColumns<{_tiles(s.layer.fan_out)}, {_tiles(s.layer.fan_in)}, "
                f"{_columns(layout, _tiles(s.layer.fan_in))}, HiddenActivation>(warp, {_held_name(s, False)}, {below});"
            )
        return calls

    return layer_lines(plan, layer, backward=True)


def _accumulators(plan: NetworkPlan, layout: FusedLayout) -> tuple[list[str], list[str], list[str]]:
    """Each subgroup's dW tiles: declared, cleared before the tile loop, written after it (with
    the bias tile the kernel holds)."""
    # Straight from registers where the slot's rows stay 16-byte aligned: 4 floats a row step
    aligned = plan.param_count % 4 == 0

    def tiles(s: LayerStep) -> int:
        b = layout.blocks[s.k]
        return b.rounds * b.bo * b.bi

    def declare(s: LayerStep) -> str:
        return f"static FusedC fusedDw{s.k}[{tiles(s)}];"

    def clear(s: LayerStep) -> str:
        return f"FUSED_UNROLL for (int q = 0; q < {tiles(s)}; q++) fusedDw{s.k}[q] = FusedC(0.0);"

    def write(s: LayerStep) -> str:
        direct = aligned and s.layer.offset % 4 == 0 and s.layer.fan_in % 4 == 0
        return (
            f"fusedWriteGradients<{_blocks(layout, s)}, {s.sizes}, {'true' if direct else 'false'}>(warp, lane, "
            f"slot + {s.layer.offset}, fusedDw{s.k});"
        )

    def biases(s: LayerStep) -> str:
        return (
            f"fusedWriteBiases<{_blocks(layout, s)}, {s.layer.fan_out}>(warp, lane, slot + {s.layer.bias_offset}, "
            f"{layout.bias_columns[s.k]});"
        )

    written = [*layer_lines(plan, write), "fusedStageBias(warp, fusedBias);", *layer_lines(plan, biases)]
    return layer_lines(plan, declare), layer_lines(plan, clear), written


def fused_kernel(plan: NetworkPlan) -> str:
    """learnGradient's per-layer part (fused.slang): the held weights and dW blocks, and the helpers."""
    layout = layout_of(plan)
    held, hold = _held(plan, layout)
    declare, clear, write = _accumulators(plan, layout)
    first, last = plan.layers[0], plan.layers[-1]
    begin = [
        f"fusedStageWeights(tid, w + {first.offset}, w + {last.offset});  // ends with a barrier",
        "// The hidden layers' weight tiles this subgroup multiplies with, for the whole step",
        *hold,
        "// Each subgroup's blocks of weight-gradient tiles, over all tiles",
        *clear,
    ]
    statics = "\n".join(
        [
            "// learnGradient's layers (paths/fused/fused.slang): the hidden layers' weight tiles a subgroup holds over the",
            "// step, and its blocks of weight-gradient tiles",
            *held,
            *declare,
        ]
    )
    return "\n\n".join(
        [
            statics,
            inlined("Before the tile loop", "void fusedBeginStep(uint tid, uint warp, half* w)", begin),
            inlined(
                "Forward: the tile's samples, each layer, the loss",
                "void fusedForward(uint tid, uint warp, uint lane, uint tile, StepArgs a, half* w, inout float loss)",
                [*_samples(plan), *_forward(plan, layout)],
            ),
            inlined(
                "Backward: per layer a barrier, the weight gradients over the tile, dZ of the layer below",
                "void fusedBackward(uint tid, uint warp, half* w)",
                _backward(plan, layout),
            ),
            inlined(
                "Into this workgroup's gradient slot",
                "void fusedWriteSlot(uint warp, uint lane, float* slot)",
                write,
            ),
        ]
    )


def weight_copies_function(copies: Sequence[WeightCopy]) -> str:
    """storeWeightCopies, which adjustParameters calls with each updated half weight: it writes
    the weight into the fused trainer's fragment-native `copies` (layout.py), if any."""
    blocks = []
    for c in copies:
        ti, to = c.fan_in // 16, c.fan_out // 16
        forward = f"{c.forward} + ((o / 16) * {ti} + i / 16) * 256 + fusedFragmentSlot(i % 16, o % 16)"
        backward = f"{c.backward} + ((i / 16) * {to} + o / 16) * 256 + fusedFragmentSlot(o % 16, i % 16)"
        blocks += [
            f"if (index >= {c.offset} && index < {c.offset + c.fan_in * c.fan_out})  // layer {c.layer}",
            "{",
            f"    uint o = (index - {c.offset}) / {c.fan_in}, i = (index - {c.offset}) % {c.fan_in};",
            f"    w[{forward}] = value;",
            f"    w[{backward}] = value;",
            "}",
        ]
    return f"""// The fused trainer's copies of the hidden weights as B operands (none for other kernels)
uint fusedFragmentSlot(uint k, uint n)  // app/kernels/paths/fused/fragments.py: fragment_slot
{{
    return ((n % 8) * 4 + (k % 8) / 2) * 8 + k % 2 + 2 * (k / 8) + 4 * (n / 8);
}}

void storeWeightCopies(NFloat* w, uint index, NFloat value)
{{
{indent(blocks, 1)}
}}"""
