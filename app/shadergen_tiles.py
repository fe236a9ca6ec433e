"""Prints learnGradient for workgroup tiles (shaders/tiles.slang): the per-layer calls of the
forward and backward passes over a tile of samples, and the gradient accumulators each thread
(SIMT) or warp (tensor cores) holds over the workgroup's whole sample loop."""

from __future__ import annotations

from .plan import MMA_SUBGROUP, TILED_THREADS, NetworkPlan


def tile_constants(plan: NetworkPlan) -> str:
    rows = plan.tile_rows
    heights = [rows[k + 1] - rows[k] for k in range(len(plan.sizes))]
    return f"""static const uint TILED_THREADS = {TILED_THREADS};
static const uint MMA_SUBGROUP = {MMA_SUBGROUP};
static const uint TILE_SAMPLES = {plan.tile_samples};
static const uint TILE_PAD = {plan.tile_pad};
static const uint TILE_ACT_ROWS = {rows[-1]};
static const uint TILE_GRAD_ROWS = {max(heights[1:])};
static const uint INPUT_PAD = {heights[0]};
static const uint OUTPUT_PAD = {heights[-1]};
static const uint FIRST_OUT = {plan.sizes[1]};
static const uint LAST_IN = {plan.sizes[-2]};
typealias TileT = NFloat;"""


def _count(entries: int, per: int) -> int:
    return max(1, -(-entries // per))


def _forward(plan: NetworkPlan) -> list[str]:
    rows, last = plan.tile_rows, len(plan.layers) - 1
    return [
        f"simtForward<{layer.fan_in}, {layer.fan_out}, {'OutputActivation' if k == last else 'HiddenActivation'}>"
        f"(tid, w + {layer.offset}, {rows[k]}, {rows[k + 1]});"
        for k, layer in enumerate(plan.layers)
    ]


def _backward(plan: NetworkPlan) -> list[str]:
    """From the loss to the first layer; grad blocks 0 and 1 take turns holding dZ and dH."""
    rows, last = plan.tile_rows, len(plan.layers) - 1
    calls = [f"loss += tileLossGradient<OutputActivation>(tid, {rows[last + 1]}, 0);"]
    block = 0
    for k in range(last, -1, -1):
        layer = plan.layers[k]
        if k != last:  # dH of this layer's output -> dZ
            calls.append(f"tileActivationGradient<{layer.fan_out}, HiddenActivation>(tid, {block}, {rows[k + 1]});")
        calls.append(f"simtGradients<{layer.fan_in}, {layer.fan_out}>(tid, {block}, {rows[k]}, slot + {layer.offset});")
        if k > 0:  # the first layer's input is the encoded sample: no dH needed
            calls.append(
                f"simtBackward<{layer.fan_in}, {layer.fan_out}>(tid, w + {layer.offset}, {block}, {1 - block});"
            )
            block = 1 - block
    return calls


def _mma_forward(plan: NetworkPlan) -> list[str]:
    rows, heights, last = plan.tile_rows, _heights(plan), len(plan.layers) - 1
    calls = []
    for k, layer in enumerate(plan.layers):
        act = "OutputActivation" if k == last else "HiddenActivation"
        source, stride = _weights(plan, k)
        calls.append(
            f"mmaForward<{layer.fan_in}, {layer.fan_out}, {heights[k]}, {heights[k + 1]}, {act}>(tid, {source}, "
            f"{stride}, w + {layer.offset}, {rows[k]}, {rows[k + 1]}, {0 if k == last else -1}, loss);"
        )
    return calls


def _mma_backward(plan: NetworkPlan) -> list[str]:
    """From the output layer's dZ (block 0, written by its forward) to the first layer; the
    activation derivative of the layer below is applied as dH passes through tileStage."""
    rows, heights, warps = plan.tile_rows, _heights(plan), TILED_THREADS // MMA_SUBGROUP
    calls, block = [], 0
    for k in range(len(plan.layers) - 1, -1, -1):
        layer = plan.layers[k]
        tiles = _count((heights[k + 1] // 16) * (heights[k] // 16), warps)
        calls += [
            f"mmaGradients<{heights[k]}, {heights[k + 1]}, {tiles}>(tid, {block}, {rows[k]}, mma{k});",
            f"bias{k} += tileBiasGradient<{layer.fan_out}>(tid, {block});",
        ]
        if k > 0:
            source, stride = _weights(plan, k)
            calls.append(
                f"mmaBackward<{layer.fan_in}, {layer.fan_out}, {heights[k + 1]}, HiddenActivation>(tid, {source}, "
                f"{stride}, w + {layer.offset}, {block}, {1 - block}, {rows[k]});"
            )
            block = 1 - block
    return calls


def _heights(plan: NetworkPlan) -> list[int]:
    rows = plan.tile_rows
    return [rows[k + 1] - rows[k] for k in range(len(plan.sizes))]


def _weights(plan: NetworkPlan, k: int) -> tuple[str, int]:
    """Where layer k's weights are read from on tensor cores, and their row stride."""
    if k == 0:
        return "WEIGHTS_FIRST", _heights(plan)[0]
    if k == len(plan.layers) - 1:
        return "WEIGHTS_LAST", plan.layers[k].fan_in
    return "WEIGHTS_GLOBAL", plan.layers[k].fan_in


def _mma_accumulators(plan: NetworkPlan) -> tuple[list[str], list[str]]:
    heights, warps = _heights(plan), TILED_THREADS // MMA_SUBGROUP
    declare, write = [], []
    for k, layer in enumerate(plan.layers):
        tiles = _count((heights[k + 1] // 16) * (heights[k] // 16), warps)
        declare += [
            f"MatC mma{k}[{tiles}];",
            f"for (int q = 0; q < {tiles}; q++) mma{k}[q] = MatC(0.0);",
            f"float bias{k} = 0.0;  // bias `tid`'s gradient (widths are at most TILED_THREADS)",
        ]
        write += [
            f"mmaWriteGradients<{layer.fan_in}, {layer.fan_out}, {heights[k]}, {heights[k + 1]}, {tiles}>"
            f"(tid, slot + {layer.offset}, mma{k});",
            f"if (tid < {layer.fan_out}) slot[{layer.bias_offset} + tid] = bias{k};",
        ]
    return declare, write


def tiles_kernel(plan: NetworkPlan) -> str:
    mma = any(plan.mma)
    declare, write = _mma_accumulators(plan) if mma else ([], [])
    forward, backward = (_mma_forward(plan), _mma_backward(plan)) if mma else (_forward(plan), _backward(plan))
    if mma:
        first, last = plan.layers[0], plan.layers[-1]
        declare.append(f"mmaStageWeights(tid, w + {first.offset}, w + {last.offset});  // ends with a barrier")
    pad, pad4 = "\n        ", "\n    "
    return f"""// learnGradient for workgroup tiles, generated by app/shadergen_tiles.py.
[shader("compute")]
[numthreads(TILED_THREADS, 1, 1)]
void learnGradient(uint3 groupId : SV_GroupID, uint3 localId : SV_GroupThreadID, uniform StepArgs* args)
{{
    let a = *args;
    uint tid = localId.x, group = groupId.x + a.groupOffset;
    uint groups = a.threadCount / TILED_THREADS;
    uint tiles = (a.batchSize + TILE_SAMPLES - 1) / TILE_SAMPLES;
    float4 domain = float4(a.x0, a.x1, a.y0, a.y1);
    NFloat* w = a.weights;
    float* slot = a.gradientSlots + group * PARAM_COUNT;  // this workgroup's alone
    {pad4.join(declare)}
    float loss = 0.0;
    for (uint tile = group; tile < tiles; tile += groups)  // the same count for the whole group
    {{
        tileLoadSamples(tid, tile, a.batchSize, a.seed, a.step, domain);
        {pad.join(forward)}
        {pad.join(backward)}
        GroupMemoryBarrierWithGroupSync();  // the next tile overwrites the blocks
    }}
    {pad4.join(write)}
    float total = tileLossSum(tid, loss);
    if (tid == 0)
        a.lossSlots[group] += total;
}}
"""
