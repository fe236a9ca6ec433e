"""The Slang export's grid encoding: trained_encode(xy) for a hashgrid or densegrid, [Differentiable]
in xy (trained_encode(xyz) for a grid of (x, y, z)), reading its tables from a buffer the caller
binds, and the tables' sidecar file (the format and how to bind it: docs/formats.md, 'The grid
tables' and 'The Slang export')."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..model.hashgrid import HASH_PRIME, HASH_PRIME_Z, GridSpec

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


# The same for a grid of (x, y, z): 8 corners, trilinear, as shaders/model/hashgrid.slang's POINT_3D code
_HELPERS_3D = """// One level's cell around u: the corners' first table values, and the fractions along x, y and z.
// Corner k is (k & 1, (k >> 1) & 1, k >> 2) from the lower corner.
struct TrainedGridCell
{
    uint entry[8];
    float3 frac;

    float weight(int k)
    {
        return ((k & 1) != 0 ? frac.x : 1.0 - frac.x) * (((k >> 1) & 1) != 0 ? frac.y : 1.0 - frac.y)
             * ((k >> 2) != 0 ? frac.z : 1.0 - frac.z);
    }

    float value(int k, int f)
    {
        return trained_grid_tables[entry[k] + uint(f)];
    }
}

TrainedGridCell trained_grid_cell(float3 u, float scale, uint resolution, uint mask, uint offset)
{
    float3 pos = u * scale;
    float3 lower = floor(pos);
    TrainedGridCell cell;
    cell.frac = pos - lower;
    int3 base = int3(lower);
    for (int k = 0; k < 8; k++)
    {
        uint x = uint(base.x + (k & 1)), y = uint(base.y + ((k >> 1) & 1)), z = uint(base.z + (k >> 2));
        uint entry = mask != 0u ? (x ^ (y * HASH_PRIMEu) ^ (z * HASH_PRIME_Zu)) & mask
                                : x % resolution + (y % resolution) * resolution + (z % resolution) * resolution * resolution;
        cell.entry[k] = (offset + entry) * uint(TRAINED_GRID_FEATURES);
    }
    return cell;
}

void trained_grid_level(inout float h[TRAINED_INPUTS], int first, float3 u, float scale, uint resolution, uint mask, uint offset)
{
    let cell = trained_grid_cell(u, scale, resolution, mask, offset);
    for (int f = 0; f < TRAINED_GRID_FEATURES; f++)
    {
        float sum = 0.0;
        for (int k = 0; k < 8; k++)
            sum += cell.weight(k) * cell.value(k, f);
        h[first + f] = sum;
    }
}

// d(feature f)/du of one level: the scale times the trilinear interpolation's slope.
float3 trained_grid_slope(TrainedGridCell cell, int f, float scale)
{
    float3 t = cell.frac, slope = float3(0.0);
    for (int k = 0; k < 8; k++)
    {
        bool3 upper = bool3((k & 1) != 0, ((k >> 1) & 1) != 0, (k >> 2) != 0);
        float3 w = select(upper, t, 1.0 - t);
        float3 side = select(upper, float3(1.0), float3(-1.0));
        slope += cell.value(k, f) * side * float3(w.y * w.z, w.x * w.z, w.x * w.y);
    }
    return scale * slope;
}

void trained_grid_level_fwd(inout float h[TRAINED_INPUTS], inout float d[TRAINED_INPUTS], int first, float3 u,
                            float3 du, float scale, uint resolution, uint mask, uint offset)
{
    trained_grid_level(h, first, u, scale, resolution, mask, offset);
    let cell = trained_grid_cell(u, scale, resolution, mask, offset);
    for (int f = 0; f < TRAINED_GRID_FEATURES; f++)
        d[first + f] = dot(trained_grid_slope(cell, f, scale), du);
}

float3 trained_grid_level_bwd(float dResult[TRAINED_INPUTS], int first, float3 u, float scale, uint resolution,
                              uint mask, uint offset)
{
    let cell = trained_grid_cell(u, scale, resolution, mask, offset);
    float3 du = float3(0.0);
    for (int f = 0; f < TRAINED_GRID_FEATURES; f++)
        du += dResult[first + f] * trained_grid_slope(cell, f, scale);
    return du;
}
""".replace("HASH_PRIME_Z", str(HASH_PRIME_Z)).replace("HASH_PRIME", str(HASH_PRIME))


def grid_source(grid: GridSpec, domain, tables_file: str) -> str:
    """trained_encode(xy) and its helpers, for `grid` over `domain` [x0, x1, y0, y1]; for a grid of
    (x, y, z), trained_encode(xyz) over the box [x0, x1, y0, y1, z0, z1]."""
    bounds = [_literal(v) for v in domain]
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
    if grid.dims == 2:
        vector, p, helpers = "float2", "xy", _HELPERS
    else:
        vector, p, helpers = "float3", "xyz", _HELPERS_3D
    units = ", ".join(f"({p}.{a} - {bounds[2 * k]}) / ({bounds[2 * k + 1]} - {bounds[2 * k]})" for k, a in enumerate(p))
    scales = ", ".join(f"1.0 / ({bounds[2 * k + 1]} - {bounds[2 * k]})" for k in range(len(p)))
    return f"""// The {"hash" if grid.hashed else "dense"} grid encoding: {grid.levels} levels of {f} features, {grid.entries} table entries.
// Bind its tables ({tables_file}: float32, little-endian, {grid.param_count} values) to this buffer:
StructuredBuffer<float> trained_grid_tables;

static const int TRAINED_GRID_FEATURES = {f};

{vector} trained_grid_units({vector} {p})
{{
    return {vector}({units});
}}

{vector} trained_grid_units_scale()
{{
    return {vector}({scales});
}}

{helpers}
[ForwardDerivative(trained_encode_fwd)]
[BackwardDerivative(trained_encode_bwd)]
float[TRAINED_INPUTS] trained_encode({vector} {p})
{{
    float h[TRAINED_INPUTS] = {{}};
    let u = trained_grid_units({p});
{forward}
    return h;
}}

DifferentialPair<float[TRAINED_INPUTS]> trained_encode_fwd(DifferentialPair<{vector}> {p})
{{
    float h[TRAINED_INPUTS] = {{}}, d[TRAINED_INPUTS] = {{}};
    let u = trained_grid_units({p}.p);
    let du = {p}.d * trained_grid_units_scale();
{tangent}
    return diffPair(h, d);
}}

void trained_encode_bwd(inout DifferentialPair<{vector}> {p}, float dResult[TRAINED_INPUTS])
{{
    let u = trained_grid_units({p}.p);
    {vector} du = {vector}(0.0);
{backward}
    {p} = diffPair({p}.p, du * trained_grid_units_scale());
}}"""
