"""Prints what learnGradient of workgroup tiles (tiles.slang) takes from the generated module: the
tile constants, and its per-layer calls unrolled for the network as inlined helpers (tileBeginStep,
tileForward, tileBackward, tileWriteGradients) around the gradient sums each thread (SIMT) or warp
(tensor cores) holds over the workgroup's whole sample loop, as thread-private statics."""

from __future__ import annotations

from ...plan import NetworkPlan
from ...shadergen.chain import LayerStep, inlined, layer_lines
from .layout import MMA_SUBGROUP, TILED_THREADS, tile_height


def tile_rows(plan: NetworkPlan) -> tuple[int, ...]:
    """The first shared-memory row of each layer's input, then the output's."""
    rows, row = [], 0
    for size in plan.sizes:
        rows.append(row)
        row += tile_height(size, any(plan.mma))
    return (*rows, row)


def tile_constants(plan: NetworkPlan) -> str:
    rows, heights = tile_rows(plan), _heights(plan)
    return f"""// Workgroup tiles: the shared-memory rows of each layer (tile_rows in app/kernels/paths/tiles/shadergen.py)
static const uint TILED_THREADS = {TILED_THREADS};
static const uint MMA_SUBGROUP = {MMA_SUBGROUP};
static const uint TILE_SAMPLES = {plan.tile_samples};
static const uint TILE_PAD = {plan.tile_pad};
static const uint TILE_ACT_ROWS = {rows[-1]};
static const uint TILE_GRAD_ROWS = {max(heights if plan.grid else heights[1:])};
static const uint INPUT_PAD = {heights[0]};
static const uint OUTPUT_PAD = {heights[-1]};
static const uint FIRST_OUT = {plan.sizes[1]};
static const uint LAST_IN = {plan.sizes[-2]};
typealias TileT = NFloat;"""


def simt_blocks(rows: int, columns: int) -> tuple[int, int]:
    """The R x C register block of a SIMT product with `rows` x `columns` outputs (or weights)
    per tile (tiles.slang): the most outputs a thread, R and C dividing their sides, while
    every thread of the workgroup still has a block; squarer blocks first (fewest loads)."""
    choices = [
        (r * c, -abs(r - c), r, c)
        for r in (4, 2, 1)
        for c in (4, 2, 1)
        if rows % r == 0 and columns % c == 0 and (rows // r) * (columns // c) >= TILED_THREADS
    ]
    return (max(choices)[2], max(choices)[3]) if choices else (1, 1)


def _template(block: tuple[int, int]) -> str:
    """A register block as a SIMT function's `R, C` template arguments."""
    return f"{block[0]}, {block[1]}"


def _weight_block(s: LayerStep) -> tuple[int, int]:
    """The register block of layer s's weight gradient (Out x In)."""
    return simt_blocks(s.layer.fan_out, s.layer.fan_in)


def _count(entries: int, per: int) -> int:
    return max(1, -(-entries // per))


def _heights(plan: NetworkPlan) -> list[int]:
    """The shared-memory rows of each layer's input, then the output's (padded on tensor cores)."""
    rows = tile_rows(plan)
    return [rows[k + 1] - rows[k] for k in range(len(plan.sizes))]


def _forward(plan: NetworkPlan) -> list[str]:
    """Each layer's activations from the one below, SIMT or on tensor cores."""
    rows = tile_rows(plan)

    def layer(s: LayerStep) -> str:
        weights, between = f"w + {s.layer.offset}", f"{rows[s.k]}, {rows[s.k + 1]}"
        if not any(plan.mma):
            blocks = _template(simt_blocks(s.layer.fan_out, plan.tile_samples))
            return f"simtForward<{s.sizes}, {s.activation}, {blocks}>(tid, {weights}, {between});"
        return (
            f"mmaForward<{_mma_sizes(plan, s)}, {s.activation}>(tid, {_weights(plan, s)}, {weights}, {between}, "
            f"{0 if s.last else -1}, loss);"
        )

    return layer_lines(plan, layer)


def _backward(plan: NetworkPlan) -> list[str]:
    """From the loss to the first layer."""
    rows = tile_rows(plan)

    def layer(s: LayerStep) -> list[str]:
        offset, block, blocks = s.layer.offset, s.block, _template(_weight_block(s))
        if _held(s):
            calls = [
                f"simtGradientsHeld<{s.sizes}, {blocks}>(tid, {block}, {rows[s.k]}, tileHeld{s.k}, tileHeldBias{s.k});"
            ]
        else:
            calls = [f"simtGradients<{s.sizes}, {blocks}>(tid, {block}, {rows[s.k]}, slot + {offset});"]
        if s.k > 0 or plan.grid:  # the first layer's input is the encoded sample: no dH, but for a grid
            input_blocks = _template(simt_blocks(s.layer.fan_in, plan.tile_samples))
            below = "HiddenActivation" if s.k > 0 else "Identity"  # a grid's encoding: its dH as it is
            calls.append(
                f"simtBackward<{s.sizes}, {input_blocks}, {below}>(tid, w + {offset}, {block}, {1 - block}, {rows[s.k]});"
            )
        if s.k == 0 and plan.grid:
            calls.append(f"tileGridBackward(tid, {1 - block});")
        return calls

    return layer_lines(plan, layer, backward=True)


def _held(s: LayerStep) -> bool:
    """Whether a SIMT layer's gradient sums stay in registers over the sample loop: where each of
    its weight blocks and biases has a thread of its own, as for 64 x 64 layers in 4 x 4 blocks
    (otherwise each tile adds its sums into the workgroup's slot in memory)."""
    rows, columns = _weight_block(s)
    blocks = (s.layer.fan_out // rows) * (s.layer.fan_in // columns)
    return blocks <= TILED_THREADS and s.layer.fan_out <= TILED_THREADS


def _simt_accumulators(plan: NetworkPlan) -> tuple[list[str], list[str], list[str]]:
    """The held layers' gradient sums: declared, cleared before the sample loop, written after it."""

    def declare(s: LayerStep) -> list[str]:
        size = "*".join(map(str, _weight_block(s)))
        return [f"static float tileHeld{s.k}[{size}];", f"static float tileHeldBias{s.k};"] if _held(s) else []

    def clear(s: LayerStep) -> list[str]:
        size = "*".join(map(str, _weight_block(s)))
        return (
            [f"for (int q = 0; q < {size}; q++) tileHeld{s.k}[q] = 0.0;", f"tileHeldBias{s.k} = 0.0;"]
            if _held(s)
            else []
        )

    def write(s: LayerStep) -> list[str]:
        if not _held(s):
            return []
        blocks = _template(_weight_block(s))
        return [
            f"simtWriteGradients<{s.sizes}, {blocks}>(tid, tileHeld{s.k}, tileHeldBias{s.k}, slot + {s.layer.offset});"
        ]

    return layer_lines(plan, declare), layer_lines(plan, clear), layer_lines(plan, write)


def _weights(plan: NetworkPlan, s: LayerStep) -> str:
    """Where layer k's weights are read from on tensor cores, and their row stride."""
    if s.k == 0:
        return f"WEIGHTS_FIRST, {_heights(plan)[0]}"
    return f"{'WEIGHTS_LAST' if s.last else 'WEIGHTS_GLOBAL'}, {s.layer.fan_in}"


def _mma_tiles(plan: NetworkPlan, s: LayerStep) -> int:
    """The 16x16 accumulator tiles of layer k's weight gradient that each warp holds."""
    heights = _heights(plan)
    return _count((heights[s.k + 1] // 16) * (heights[s.k] // 16), TILED_THREADS // MMA_SUBGROUP)


def _mma_sizes(plan: NetworkPlan, s: LayerStep) -> str:
    """`In, Out, padded In, padded Out`."""
    heights = _heights(plan)
    return f"{s.sizes}, {heights[s.k]}, {heights[s.k + 1]}"


def _mma_backward(plan: NetworkPlan) -> list[str]:
    """From the output layer's dZ (block 0, written by its forward) to the first layer; the
    activation derivative of the layer below is applied as dH passes through tileStage."""
    rows, heights = tile_rows(plan), _heights(plan)

    def layer(s: LayerStep) -> list[str]:
        k, block = s.k, s.block
        calls = [
            f"mmaGradients<{heights[k]}, {heights[k + 1]}, {_mma_tiles(plan, s)}>(tid, {block}, {rows[k]}, tileMma{k});",
            f"tileBias{k} += tileBiasGradient<{s.layer.fan_out}>(tid, {block});",
        ]
        if k > 0:
            calls.append(
                f"mmaBackward<{s.sizes}, {heights[k + 1]}, HiddenActivation>(tid, {_weights(plan, s)}, "
                f"w + {s.layer.offset}, {block}, {1 - block}, {rows[k]});"
            )
        elif plan.grid:  # the grid's input gradient, its padded rows included (their weights are 0)
            calls.append(
                f"mmaBackward<{heights[0]}, {s.layer.fan_out}, {heights[1]}, Identity>(tid, {_weights(plan, s)}, "
                f"w + {s.layer.offset}, {block}, {1 - block}, {rows[0]});"
            )
            calls.append(f"tileGridBackward(tid, {1 - block});")
        return calls

    return layer_lines(plan, layer, backward=True)


def _mma_accumulators(plan: NetworkPlan) -> tuple[list[str], list[str], list[str]]:
    """Each layer's gradient accumulators: declared, cleared before the sample loop (the narrow
    layers' weights staged too), written after it."""

    def declare(s: LayerStep) -> list[str]:
        return [
            f"static MatC tileMma{s.k}[{_mma_tiles(plan, s)}];",
            f"static float tileBias{s.k};  // bias `tid`'s gradient (widths are at most TILED_THREADS)",
        ]

    def clear(s: LayerStep) -> list[str]:
        k, tiles = s.k, _mma_tiles(plan, s)
        return [f"for (int q = 0; q < {tiles}; q++) tileMma{k}[q] = MatC(0.0);", f"tileBias{k} = 0.0;"]

    def write(s: LayerStep) -> list[str]:
        k, layer = s.k, s.layer
        return [
            f"mmaWriteGradients<{_mma_sizes(plan, s)}, {_mma_tiles(plan, s)}>(tid, slot + {layer.offset}, tileMma{k});",
            f"if (tid < {layer.fan_out}) slot[{layer.bias_offset} + tid] = tileBias{k};",
        ]

    first, last = plan.layers[0], plan.layers[-1]
    staging = f"mmaStageWeights(tid, w + {first.offset}, w + {last.offset});  // ends with a barrier"
    lane = "mmaLane(tid);  // (emulated products keep it)"
    return layer_lines(plan, declare), [lane, *layer_lines(plan, clear), staging], layer_lines(plan, write)


def tiles_kernel(plan: NetworkPlan) -> str:
    """learnGradient's per-layer part (tiles.slang): the held gradient sums and the helpers."""
    mma = any(plan.mma)
    declare, clear, write = _mma_accumulators(plan) if mma else _simt_accumulators(plan)
    forward = _forward(plan)
    if plan.grid:
        forward.insert(0, "tileGridForward(tid);  // the grid's encoding of the tile's points")
    if not mma:  # on tensor cores the output layer's forward call takes the loss
        forward.append(f"loss += tileLossGradient<OutputActivation>(tid, {tile_rows(plan)[len(plan.layers)]}, 0);")
    backward = _mma_backward(plan) if mma else _backward(plan)
    held = "Each warp's weight-gradient tiles" if mma else "Each thread's weight-gradient block"
    declared = f"// {held} and bias gradient, over all tiles\n" + "\n".join(declare) + "\n\n" if declare else ""
    products = "on tensor cores" if mma else "on the shader cores (SIMT)"
    return "\n\n".join(
        [
            f"// learnGradient's layers (paths/tiles/tiles.slang), its products {products}\n{declared.rstrip()}".rstrip(),
            inlined(
                "Before the sample loop: the gradient sums cleared", "void tileBeginStep(uint tid, NFloat* w)", clear
            ),
            inlined(
                "Forward: each layer's activations into shared memory, and the loss",
                "void tileForward(uint tid, NFloat* w, inout float loss)",
                forward,
            ),
            inlined(
                "Backward: from the loss to the first layer",
                "void tileBackward(uint tid, NFloat* w, float* slot)",
                backward,
            ),
            inlined("Into this workgroup's gradient slot", "void tileWriteGradients(uint tid, float* slot)", write),
        ]
    )
