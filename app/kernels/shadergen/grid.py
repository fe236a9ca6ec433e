"""The generated module's part for encodings with trained parameters (app/model/hashgrid.py): the
constants every module has (where the tables start in the parameters, whether there are any),
and, for a grid, its per-level layout and shaders/model/hashgrid.slang; plus gridOptimizerSettings,
the optimizer's settings as the tables take them (epsilon GRID_EPSILON, no weight decay)."""

from __future__ import annotations

from ...model import hashgrid, optimizers
from ..plan import NetworkPlan

# What the tables take instead of the configured hyper-parameter (app/model/hashgrid.py says why)
TABLE_HYPERS = {"epsilon": "GRID_EPSILON", "weight_decay": "0.0"}


def _array(kind: str, name: str, values: list[str]) -> str:
    return f"static const {kind} {name}[{len(values)}] = {{ {', '.join(values)} }};"


def encoding_constants(plan: NetworkPlan) -> str:
    grid = plan.grid
    lines = [
        f"static const uint SLOT_PARAMS = {plan.mlp_param_count};  // a gradient slot's parameters: the MLP's",
        f"static const uint SLOT_STRIDE = {plan.slot_stride};  // from one slot to the next: 16-byte aligned",
        f"static const uint GRID_PARAMS = {plan.grid_param_count};  // the grid's table values after them",
        f"static const bool TRAINED_ENCODING = {'true' if grid else 'false'};",
        f"static const float GRID_EPSILON = {hashgrid.GRID_EPSILON!r};",
        f"static const float GRID_FIXED_SCALE = {float(1 << hashgrid.FIXED_POINT_BITS)!r};  // gradients' fixed point",
    ]
    if grid is None:
        return "\n".join(lines)
    layout = grid.layout
    lines += [
        f"static const int GRID_LEVELS = {grid.levels};",
        f"static const int GRID_FEATURES = {grid.features};",
        "static const bool GRID_POINT_GRADIENT = false;  // training never needs d loss / d p",
        _array("float", "GRID_SCALES", [repr(level.scale) for level in layout]),
        _array("uint", "GRID_RESOLUTIONS", [f"{level.resolution}u" for level in layout]),
        _array("uint", "GRID_HASH_MASKS", [f"{level.size - 1 if level.hashed else 0}u" for level in layout]),
        _array("uint", "GRID_OFFSETS", [f"{level.offset}u" for level in layout]),
    ]
    return "\n".join(lines)


def encoding_includes(plan: NetworkPlan) -> str:
    grid = '\n#include "model/hashgrid.slang"' if plan.grid is not None else ""
    return f'#include "common/kernel_context.slang"{grid}'


def table_optimizer_settings() -> str:
    """gridOptimizerSettings(s): the step's optimizer settings with the tables' own values of
    the hyper-parameters in TABLE_HYPERS, per optimizer (their places differ)."""
    cases = []
    for optimizer in optimizers.OPTIMIZERS.values():
        sets = [
            f"t.hyper[{k}] = {TABLE_HYPERS[h.field]};"
            for k, h in enumerate(optimizer.hypers)
            if h.field in TABLE_HYPERS
        ]
        if sets:
            cases.append(f"    case OPTIMIZER_{optimizer.name.upper()}: {' '.join(sets)} break;")
    body = "\n".join(cases)
    return f"""// The optimizer's settings for the grid's tables (app/kernels/shadergen/grid.py)
OptimizerSettings gridOptimizerSettings(OptimizerSettings s)
{{
    OptimizerSettings t = s;
    switch (s.kind)
    {{
{body}
    default: break;
    }}
    return t;
}}"""
