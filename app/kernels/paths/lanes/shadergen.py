"""Prints what learnGradient of lane tiles (lanes.slang) takes from the generated module: the
constants and the table of the layers' sizes and scratch offsets (layout.py) the kernel walks."""

from __future__ import annotations

from ...plan import NetworkPlan
from ...shadergen.chain import LayerStep, indent, layer_lines
from .layout import LANE_SAMPLES, LANE_THREADS, MAX_ROWS, pad4, scratch_layout


def lanes_constants(plan: NetworkPlan) -> str:
    layout = scratch_layout(plan.sizes)

    return f"""// Lane tiles (app/kernels/paths/lanes/layout.py): threads a workgroup, samples a thread, rows a lane holds, the
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
    """learnGradient's part (lanes.slang): the layer table it walks."""
    return _table(plan)


def lanes_views(plan: NetworkPlan) -> str:
    """networkOfInput and networkWithNeurons as loops over the layer table (lane_views.slang says
    why), for arrays as wide as the widest layer."""
    return f'''static const uint VIEW_WIDTH = {max(plan.sizes)};
#include "paths/lanes/lane_views.slang"'''
