"""Prints learnGradient for lane tiles (shaders/lanes.slang): the table of the layers' sizes and
scratch offsets (app/kernels/lane_tiles.py) the kernel walks, and the kernel's tile loop."""

from __future__ import annotations

from ...plan import NetworkPlan
from ...shadergen.chain import LayerStep, indent, layer_lines
from .layout import LANE_SAMPLES, LANE_THREADS, MAX_ROWS, pad4, scratch_layout


def lanes_constants(plan: NetworkPlan) -> str:
    layout = scratch_layout(plan.sizes)

    return f"""// Lane tiles (app/kernels/lane_tiles.py): threads a workgroup, samples a thread, rows a lane holds, the
// widest layer input and output, the floats of a workgroup's scratch and its two dZ blocks
static const uint LANE_THREADS = {LANE_THREADS};
static const uint LANE_SAMPLES = {LANE_SAMPLES};
static const uint LANE_ROWS = {MAX_ROWS};
static const uint LANE_MAX_IN = {max(plan.sizes[:-1])};
static const uint LANE_MAX_OUT = {max(plan.sizes[1:])};
static const uint LANE_SCRATCH = {layout.total};
static const uint LANE_DZ[2] = {{ {layout.gradients[0]}, {layout.gradients[1]} }};
static const uint LANE_LAYERS = {len(plan.layers)};"""


def _table(plan: NetworkPlan) -> str:
    layout = scratch_layout(plan.sizes)

    def row(s: LayerStep) -> str:
        k, fan_in, fan_out = s.k, s.layer.fan_in, s.layer.fan_out
        fields = (fan_in, fan_out, pad4(fan_in), pad4(fan_out), s.layer.offset)
        places = (
            layout.feature_major[k],
            layout.sample_major[k],
            layout.feature_major[k + 1],
            layout.sample_major[k + 1],
        )
        return "{ " + ", ".join(map(str, fields + places)) + " },"

    return f"""// Each layer: fan in, fan out, both padded to 4, its first weight; in the scratch its input
// feature-major and sample-major, then its output
static const LaneLayer LANE_LAYER_TABLE[LANE_LAYERS] = {{
{indent(layer_lines(plan, row), 1)}
}};"""


def lanes_kernel(plan: NetworkPlan) -> str:
    return f"""{_table(plan)}

// learnGradient for lane tiles: a workgroup walks tiles of LANE_TILE samples through every layer,
// its products register tiles over rows held in lanes (shaders/lanes.slang).
[shader("compute")]
[numthreads(LANE_THREADS, 1, 1)]
void learnGradient(uint3 groupId : SV_GroupID, uint3 localId : SV_GroupThreadID, uniform StepArgs* args)
{{
    let a = *args;
    uint lane = localId.x, group = groupId.x + a.groupOffset;
    uint groups = a.threadCount / LANE_THREADS;
    uint tiles = (a.batchSize + LANE_TILE - 1) / LANE_TILE;
    float4 domain = float4(a.x0, a.x1, a.y0, a.y1);
    float* w = a.weights;
    float* slot = a.gradientSlots + group * SLOT_STRIDE;  // this workgroup's alone
    float* scratch = a.gradientSlots + a.gradientSlotCount * SLOT_STRIDE + group * LANE_SCRATCH;
    // The layer count as the driver sees it: a value it cannot fold, so that it keeps the layer
    // loops as loops (unrolled, every layer's copy of the code took lavapipe ~3 s to compile).
    uint layers = min(LANE_LAYERS, a.threadCount + LANE_LAYERS);
    let first = LANE_LAYER_TABLE[0];
    let last = LANE_LAYER_TABLE[LANE_LAYERS - 1];
    // The group's tiles group, group + groups, ...; a piece of a step walks [sampleBegin, sampleEnd).
    [loop]
    for (uint k = a.sampleBegin; k < a.sampleEnd; k++)
    {{
        uint tile = group + k * groups;
        if (tile >= tiles)
            break;
        float truth[LANE_SAMPLES][OUTPUT_DIM];
        float valid[LANE_SAMPLES];
        lanesLoadSamples(
            lane, tile, a.batchSize, a.seed, a.step, domain, scratch + first.hfIn, scratch + first.hsIn, first.inPad,
            truth, valid);
        AllMemoryBarrierWithGroupSync();

        // Forward: each layer's activations, feature-major and sample-major
        [loop]
        for (uint j = 0; j + 1 < layers; j++)
            lanesForward<HiddenActivation>(lane, LANE_LAYER_TABLE[j], w + LANE_LAYER_TABLE[j].weights, scratch);
        lanesForward<OutputActivation>(lane, last, w + last.weights, scratch);
        float loss = lanesLossGradient<OutputActivation>(
            lane, scratch + last.hsOut, last.outPad, truth, valid, scratch + LANE_DZ[0]);

        // Backward: each layer's gradients into the slot, then dZ of the layer below (the output
        // layer's dZ in block 0, the blocks taking turns)
        [loop]
        for (uint j = 0; j < layers; j++)
        {{
            uint layer = layers - 1 - j;
            let L = LANE_LAYER_TABLE[layer];
            float* dz = scratch + LANE_DZ[j % 2];
            lanesGradients(lane, L, dz, scratch, slot + L.weights);
            if (layer > 0)  // the first layer's input is the encoded sample: no dH needed
                lanesBackward<HiddenActivation>(lane, L, w + L.weights, dz, scratch, scratch + LANE_DZ[1 - j % 2]);
        }}
        lanesLoss[lane] = loss;
        AllMemoryBarrierWithGroupSync();  // also: the next tile overwrites the scratch
        if (lane == 0)  // once per tile, in lane order, as the gradients
            a.lossSlots[group] += lanesTileLoss();
    }}
}}"""


def lanes_views(plan: NetworkPlan) -> str:
    """networkOfInput and networkWithNeurons as loops over the layer table (shaders/lane_views.slang
    says why), for arrays as wide as the widest layer."""
    return f'''static const uint VIEW_WIDTH = {max(plan.sizes)};
#include "paths/lanes/lane_views.slang"'''
