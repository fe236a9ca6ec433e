"""The Slang export's grid encoding: trained_encode(xy) for a hashgrid or densegrid, [Differentiable]
in xy, reading its tables from a buffer the caller binds, and the tables' sidecar file (the format
and how to bind it: docs/formats.md, 'The grid tables' and 'The Slang export')."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..model.hashgrid import HASH_PRIME, GridSpec

TABLES_SUFFIX = ".tables.bin"


def tables_path(slang_path: str | Path) -> Path:
    """Where the tables of the export at `slang_path` go: net.slang -> net.tables.bin."""
    path = Path(slang_path)
    return path.with_name(path.stem + TABLES_SUFFIX)


def tables_bytes(tables: np.ndarray) -> bytes:
    return np.asarray(tables, "<f4").tobytes()


def _literal(value: float) -> str:
    return repr(float(np.float32(value)))


# Each level's cell, value, slope and backward pass, the level's constants as arguments
_HELPERS = """// One level's cell around u: the corners' first table values, and the fractions along x and y.
struct TrainedGridCell
{
    uint entry[4];
    float2 frac;

    float weight(int k)
    {
        return ((k & 1) != 0 ? frac.x : 1.0 - frac.x) * ((k >> 1) != 0 ? frac.y : 1.0 - frac.y);
    }

    float value(int k, int f)
    {
        return trained_grid_tables[entry[k] + uint(f)];
    }
}

TrainedGridCell trained_grid_cell(float2 u, float scale, uint resolution, uint mask, uint offset)
{
    float2 pos = u * scale;
    float2 lower = floor(pos);
    TrainedGridCell cell;
    cell.frac = pos - lower;
    int2 base = int2(lower);
    for (int k = 0; k < 4; k++)
    {
        uint x = uint(base.x + (k & 1)), y = uint(base.y + (k >> 1));
        uint entry = mask != 0u ? (x ^ (y * HASH_PRIMEu)) & mask : x % resolution + (y % resolution) * resolution;
        cell.entry[k] = (offset + entry) * uint(TRAINED_GRID_FEATURES);
    }
    return cell;
}

void trained_grid_level(inout float h[TRAINED_INPUTS], int first, float2 u, float scale, uint resolution, uint mask, uint offset)
{
    let cell = trained_grid_cell(u, scale, resolution, mask, offset);
    for (int f = 0; f < TRAINED_GRID_FEATURES; f++)
    {
        float sum = 0.0;
        for (int k = 0; k < 4; k++)
            sum += cell.weight(k) * cell.value(k, f);
        h[first + f] = sum;
    }
}

// d(feature f)/du of one level: the scale times the bilinear interpolation's slope.
float2 trained_grid_slope(TrainedGridCell cell, int f, float scale)
{
    float2 t = cell.frac;
    float v0 = cell.value(0, f), v1 = cell.value(1, f), v2 = cell.value(2, f), v3 = cell.value(3, f);
    return scale * float2((1.0 - t.y) * (v1 - v0) + t.y * (v3 - v2), (1.0 - t.x) * (v2 - v0) + t.x * (v3 - v1));
}

void trained_grid_level_fwd(inout float h[TRAINED_INPUTS], inout float d[TRAINED_INPUTS], int first, float2 u,
                            float2 du, float scale, uint resolution, uint mask, uint offset)
{
    trained_grid_level(h, first, u, scale, resolution, mask, offset);
    let cell = trained_grid_cell(u, scale, resolution, mask, offset);
    for (int f = 0; f < TRAINED_GRID_FEATURES; f++)
        d[first + f] = dot(trained_grid_slope(cell, f, scale), du);
}

float2 trained_grid_level_bwd(float dResult[TRAINED_INPUTS], int first, float2 u, float scale, uint resolution,
                              uint mask, uint offset)
{
    let cell = trained_grid_cell(u, scale, resolution, mask, offset);
    float2 du = float2(0.0);
    for (int f = 0; f < TRAINED_GRID_FEATURES; f++)
        du += dResult[first + f] * trained_grid_slope(cell, f, scale);
    return du;
}
""".replace("HASH_PRIME", str(HASH_PRIME))


def grid_source(grid: GridSpec, domain, tables_file: str) -> str:
    """trained_encode(xy) and its helpers, for `grid` over `domain`."""
    x0, x1, y0, y1 = (_literal(v) for v in domain)
    tables_file = " ".join(tables_file.split())  # a name in a comment: no line breaks
    f = grid.features
    levels = [
        (k, _literal(level.scale), level.resolution, (level.size - 1) if level.hashed else 0, level.offset)
        for k, level in enumerate(grid.layout)
    ]
    forward = "\n".join(f"    trained_grid_level(h, {k * f}, u, {s}, {r}u, {m}u, {o}u);" for k, s, r, m, o in levels)
    tangent = "\n".join(
        f"    trained_grid_level_fwd(h, d, {k * f}, u, du, {s}, {r}u, {m}u, {o}u);" for k, s, r, m, o in levels
    )
    backward = "\n".join(
        f"    du += trained_grid_level_bwd(dResult, {k * f}, u, {s}, {r}u, {m}u, {o}u);" for k, s, r, m, o in levels
    )
    return f"""// The {"hash" if grid.hashed else "dense"} grid encoding: {grid.levels} levels of {f} features, {grid.entries} table entries.
// Bind its tables ({tables_file}: float32, little-endian, {grid.param_count} values) to this buffer:
StructuredBuffer<float> trained_grid_tables;

static const int TRAINED_GRID_FEATURES = {f};

float2 trained_grid_units(float2 xy)
{{
    return float2((xy.x - {x0}) / ({x1} - {x0}), (xy.y - {y0}) / ({y1} - {y0}));
}}

float2 trained_grid_units_scale()
{{
    return float2(1.0 / ({x1} - {x0}), 1.0 / ({y1} - {y0}));
}}

{_HELPERS}
[ForwardDerivative(trained_encode_fwd)]
[BackwardDerivative(trained_encode_bwd)]
float[TRAINED_INPUTS] trained_encode(float2 xy)
{{
    float h[TRAINED_INPUTS] = {{}};
    let u = trained_grid_units(xy);
{forward}
    return h;
}}

DifferentialPair<float[TRAINED_INPUTS]> trained_encode_fwd(DifferentialPair<float2> xy)
{{
    float h[TRAINED_INPUTS] = {{}}, d[TRAINED_INPUTS] = {{}};
    let u = trained_grid_units(xy.p);
    let du = xy.d * trained_grid_units_scale();
{tangent}
    return diffPair(h, d);
}}

void trained_encode_bwd(inout DifferentialPair<float2> xy, float dResult[TRAINED_INPUTS])
{{
    let u = trained_grid_units(xy.p);
    float2 du = float2(0.0);
{backward}
    xy = diffPair(xy.p, du * trained_grid_units_scale());
}}"""
