"""The grid encodings (shaders/model/hashgrid.slang): forward values, forward derivatives and the
gradients of the backward pass (tables and point) against an independent numpy reference
(tests/reference_grid.py) and central differences. Training whole grid networks is
tests/test_hashgrid_training.py."""

from __future__ import annotations

import numpy as np
import pytest
import reference_grid as ref
import slangpy as spy

from app.config.config import Config, validate
from app.kernels.planning import plan_for
from app.kernels.shadergen.grid import encoding_constants
from app.model.hashgrid import FIXED_POINT_BITS, grid_units

# 4 levels of scales 3, 6, 12, 24: the last one (26^2 corners > 2^8) hashed
SMALL = dict(encoding="hashgrid", grid_levels=4, grid_features=2, grid_log2_size=8, grid_base_resolution=3,
             grid_level_scale=2.0, domain=[-1.0, 2.0, -0.5, 1.5])  # fmt: skip
PROBE = """
[shader("compute")]
[numthreads(32, 1, 1)]
void probe(uint3 tid : SV_DispatchThreadID, uniform float* weights, uniform int64_t* gradients, uniform float2* points,
           uniform float* encoded, uniform float2* slopes, uniform float* upstream, uniform float2* pointGradients,
           uniform float4 domain, uniform uint count)
{
    if (tid.x >= count)
        return;
    setKernelContext(weights, gradients, domain, nullptr);
    float2 p = points[tid.x];
    let alongX = fwd_diff(encodeGrid)(diffPair(p, float2(1.0, 0.0)));
    let alongY = fwd_diff(encodeGrid)(diffPair(p, float2(0.0, 1.0)));
    let plain = encodeGrid(p);
    MLVec<INPUT_DIM> d;
    for (int i = 0; i < INPUT_DIM; i++)
    {
        encoded[tid.x * INPUT_DIM + i] = plain.data[i];
        slopes[tid.x * INPUT_DIM + i] = float2(alongX.d.data[i], alongY.d.data[i]);
        d.data[i] = upstream[tid.x * INPUT_DIM + i];
    }
    var pair = diffPair(p);
    bwd_diff(encodeGrid)(pair, d);
    pointGradients[tid.x] = pair.d;
}
"""


class EncodingProbe:
    """encodeGrid alone, in a module of its own (with its gradient in p switched on)."""

    def __init__(self, gpu, config):
        self.gpu, self.config, self.plan = gpu, config, plan_for(config)
        constants = encoding_constants(self.plan).replace("GRID_POINT_GRADIENT = false", "GRID_POINT_GRADIENT = true")
        source = (
            f"typealias NFloat = float;\nstatic const bool UNROLL_MATVEC = false;\nstatic const int INPUT_DIM = {self.plan.input_dim};\n{constants}\n"
            '#include "model/mlvec.slang"\n#include "common/kernel_context.slang"\n#include "model/hashgrid.slang"\n'
            + PROBE
        )
        name = f"grid_probe_{abs(hash(source)) % 10**12}"
        module = gpu.device.load_module_from_source(name, source)
        program = gpu.device.link_program([module], [module.entry_point("probe")])
        self.kernel = gpu.device.create_compute_kernel(program)

    def run(self, tables: np.ndarray, points: np.ndarray, upstream: np.ndarray):
        gpu, n, dim = self.gpu, len(points), self.plan.input_dim
        weights = np.concatenate([np.zeros(self.plan.mlp_param_count, np.float32), tables.astype(np.float32)])
        buffers = {
            "weights": weights,
            "gradients": np.zeros(len(tables), np.int64),
            "points": points.astype(np.float32),
            "encoded": np.zeros(n * dim, np.float32),
            "slopes": np.zeros(n * dim * 2, np.float32),
            "upstream": upstream.astype(np.float32),
            "pointGradients": np.zeros(n * 2, np.float32),
        }
        gpu_buffers = {key: gpu.buffer(value.nbytes) for key, value in buffers.items()}
        for key, value in buffers.items():
            gpu.write(gpu_buffers[key], value)
        self.kernel.dispatch(
            [n, 1, 1],
            **{key: b.device_address for key, b in gpu_buffers.items()},
            domain=spy.float4(*self.config.domain),
            count=n,
        )
        read = {key: gpu.read(gpu_buffers[key], value.size, value.dtype) for key, value in buffers.items()}
        return (
            read["encoded"].reshape(n, dim),
            read["slopes"].reshape(n, dim, 2),
            read["gradients"].astype(np.float64) / 2**FIXED_POINT_BITS,
            read["pointGradients"].reshape(n, 2),
        )


def _points(config, n, seed):
    """Points over the domain and a little beyond it (outside, coordinates wrap or hash)."""
    rng = np.random.default_rng(seed)
    x0, x1, y0, y1 = config.domain
    return np.stack([rng.uniform(x0 - 0.1, x1 + 0.1, n), rng.uniform(y0 - 0.1, y1 + 0.1, n)], 1).astype(np.float32)


@pytest.fixture(scope="module", params=["hashgrid", "densegrid"])
def probe(gpu, request):
    return EncodingProbe(gpu, validate(Config(**{**SMALL, "encoding": request.param})))


def test_layout_matches_the_independent_reference(probe):
    levels = ref.levels(probe.config)
    assert [
        (level.scale, level.resolution, level.hashed, level.size, level.offset) for level in probe.plan.grid.layout
    ] == levels
    assert any(level[2] for level in levels) == (probe.config.encoding == "hashgrid")
    assert probe.plan.grid_param_count == ref.table_size(probe.config)


def test_forward_and_gradients_match_numpy(probe):
    config, n = probe.config, 96
    rng = np.random.default_rng(1)
    tables = rng.uniform(-1, 1, probe.plan.grid_param_count).astype(np.float32)
    points = _points(config, n, 2)
    upstream = rng.standard_normal((n, probe.plan.input_dim)).astype(np.float32)
    encoded, slopes, table_grad, point_grad = probe.run(tables, points, upstream.ravel())
    u = ref.units(config, points[:, 0], points[:, 1])
    expected = ref.encode(config, u, tables)
    assert np.abs(expected).max() > 0.1
    np.testing.assert_allclose(encoded, expected, atol=2e-5)
    # The app's own numpy twin (network.json's evaluator) agrees with the reference too
    twin = probe.plan.grid.encode(grid_units(config.domain, points[:, 0], points[:, 1]), tables)
    np.testing.assert_allclose(twin, expected, atol=1e-9)
    du_dp = 1.0 / np.array([config.domain[1] - config.domain[0], config.domain[3] - config.domain[2]])
    jacobian = ref.encode_jacobian(config, u, tables) * du_dp
    np.testing.assert_allclose(slopes, jacobian, atol=2e-4 * np.abs(jacobian).max())
    expected_tables = ref.tables_gradient(config, u, upstream.astype(np.float64))
    assert np.count_nonzero(expected_tables) > 0.3 * expected_tables.size
    # float32 weights: a fine level's fractions carry ~1e-6 of rounding
    np.testing.assert_allclose(table_grad, expected_tables, atol=1e-5 * np.abs(expected_tables).max())
    expected_point = np.einsum("ni,nij->nj", upstream.astype(np.float64), jacobian)
    np.testing.assert_allclose(point_grad, expected_point, atol=2e-4 * np.abs(expected_point).max())


def test_fixed_point_sums_are_exact(gpu):
    """Points on a 1/64 lattice, integer scales and upstream values in 1/16: every weight and
    contribution is exact in float32 and a multiple of 2^-32, so the fixed-point sums must equal
    the float64 reference exactly, however many samples share an entry."""
    config = validate(Config(**{**SMALL, "domain": [0.0, 1.0, 0.0, 1.0]}))
    probe = EncodingProbe(gpu, config)
    rng = np.random.default_rng(5)
    n = 512
    points = (rng.integers(0, 65, (n, 2)) / 64.0).astype(np.float32)
    upstream = (rng.integers(-32, 33, (n, probe.plan.input_dim)) / 16.0).astype(np.float32)
    tables = rng.uniform(-1, 1, probe.plan.grid_param_count).astype(np.float32)
    _, _, table_grad, _ = probe.run(tables, points, upstream.ravel())
    expected = ref.tables_gradient(config, ref.units(config, points[:, 0], points[:, 1]), upstream.astype(np.float64))
    assert np.count_nonzero(expected) > 0.3 * expected.size
    assert np.array_equal(table_grad, expected)


def test_gradients_match_central_differences(probe):
    config, n = probe.config, 32
    rng = np.random.default_rng(3)
    tables = rng.uniform(-1, 1, probe.plan.grid_param_count).astype(np.float32)
    points = _points(config, n, 4)
    upstream = rng.standard_normal((n, probe.plan.input_dim)).astype(np.float32)
    _, _, table_grad, point_grad = probe.run(tables, points, upstream.ravel())

    def objective(t, p):  # sum(upstream * encode(p)) as the GPU computes it, in float64
        return float(np.sum(upstream.astype(np.float64) * probe.run(t, p, upstream.ravel())[0]))

    for index in np.argsort(-np.abs(table_grad))[:4]:
        h = 0.25  # the encoding is linear in each table value: differences are exact but for rounding
        plus, minus = tables.copy(), tables.copy()
        plus[index] += h
        minus[index] -= h
        numeric = (objective(plus, points) - objective(minus, points)) / (plus[index] - minus[index])
        assert abs(numeric - table_grad[index]) < 1e-4 * abs(table_grad[index]) + 1e-5
    # In p, away from cell edges, where the encoding is smooth: one point at a time
    for k in range(4):
        for axis in range(2):
            h = 1e-3
            plus, minus = points.copy(), points.copy()
            plus[k, axis] += h
            minus[k, axis] -= h
            only = np.zeros_like(upstream)
            only[k] = upstream[k]
            values = [
                float(np.sum(only * probe.run(tables, p, only.ravel())[0], dtype=np.float64)) for p in (plus, minus)
            ]
            numeric = (values[0] - values[1]) / (float(plus[k, axis]) - float(minus[k, axis]))
            assert abs(numeric - point_grad[k, axis]) < 2e-2 * abs(point_grad[k, axis]) + 2e-2, (k, axis)
