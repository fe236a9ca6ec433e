"""The grid encodings of functions of (x, y, z) (--dims 3 --encoding hashgrid|densegrid): the
trilinear encoding, its tables' and point's gradients, a training step's gradient in each path that
takes 3D, training, seeds, the views' slice and the files, against a numpy twin written here from
the formulas (8 corners; instant-ngp's hash x ^ y * 2654435761 ^ z * 805459861; R^3 dense corners)."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
import reference_grid
import slangpy as spy
from helpers import gpu_loss_and_gradient
from reference import activate, activation_derivative, grid_centres, sample_points_3d
from tensor_core_checks import tensor_cores_for

from app.config.config import Config, validate
from app.errors import UserError
from app.files.export_slang import evaluated_parameters, export_files
from app.files.network_io import TABLES_FILE, export_network, forward, load_network, tables_npy
from app.kernels.planning import plan_for
from app.kernels.shadergen.grid import encoding_constants
from app.model.hashgrid import FIXED_POINT_BITS
from app.train.trainer import Trainer
from app.truth.targets import target_to_numpy
from app.views.evaluation import GridEvaluator

PRIMES = (1, 2654435761, 805459861)
TARGET = "sin(4*x)*cos(3*y)*z"
# Scales 4, 8, 16, 32: R = 6, 10, 18, 34, so 216 and 1000 corners stored whole and the two finer
# levels (5832, 39304 > 2^10) hashed; a box that is no cube, so that the axes cannot be swapped.
GRID_3D = dict(dims=3, encoding="hashgrid", grid_levels=4, grid_features=2, grid_log2_size=10,
               grid_base_resolution=4, grid_level_scale=2.0, domain=[-1.0, 1.0, -0.75, 0.75], z_range=[0.0, 2.0])  # fmt: skip
NETWORK = dict(**GRID_3D, targets=[TARGET], hidden=[16], activation="tanh")  # thread accumulators


# ---- the numpy twin, from the formulas ---------------------------------------------------------
def levels(config) -> list[tuple[float, int, bool, int, int]]:
    """(scale, R, hashed, size, first entry) per level: R^3 corners, hashed (hashgrid) past 2^T."""
    out, first = [], 0
    for level in range(config.grid_levels):
        scale = float(np.float32(config.grid_base_resolution * config.grid_level_scale**level))
        side = int(np.floor(scale)) + 2
        hashed = config.encoding == "hashgrid" and side**3 > 2**config.grid_log2_size
        size = 2**config.grid_log2_size if hashed else side**3
        out.append((scale, side, hashed, size, first))
        first += size
    return out


def _entry(config, level, corner) -> int:
    _, side, hashed, _, first = level
    x, y, z = (int(c) % 2**32 for c in corner)
    if hashed:
        mixed = ((x * PRIMES[0]) % 2**32) ^ ((y * PRIMES[1]) % 2**32) ^ ((z * PRIMES[2]) % 2**32)
        return first + mixed % 2**config.grid_log2_size
    return first + x % side + (y % side) * side + (z % side) * side * side


def units(config, x, y, z) -> np.ndarray:
    lo = np.array([config.domain[0], config.domain[2], config.z_range[0]])
    hi = np.array([config.domain[1], config.domain[3], config.z_range[1]])
    return (np.stack([x, y, z], 1).astype(np.float64) - lo) / (hi - lo)


def corners(config, u: np.ndarray):
    """Per point, per level: the 8 corners' (entry, trilinear weight, d weight / du)."""
    result = []
    for point in u:
        per_level = []
        for level in levels(config):
            pos = point * level[0]
            cell = np.floor(pos)
            t = pos - cell
            eight = []
            for offset in itertools.product((0, 1), repeat=3):
                upper = np.array(offset, bool)
                w, side = np.where(upper, t, 1.0 - t), np.where(upper, 1.0, -1.0)
                slope = np.array([side[0] * w[1] * w[2], w[0] * side[1] * w[2], w[0] * w[1] * side[2]]) * level[0]
                eight.append((_entry(config, level, cell + upper), w.prod(), slope))
            per_level.append(eight)
        result.append(per_level)
    return result


def table_size(config) -> int:
    _, _, _, size, first = levels(config)[-1]
    return (first + size) * config.grid_features


def encode(config, u, tables):
    """The encoding (N, L * F) and its jacobian d encoding / du (N, L * F, 3), float64."""
    f, table = config.grid_features, np.asarray(tables, np.float64).reshape(-1, config.grid_features)
    out, jacobian = np.zeros((len(u), config.grid_levels * f)), np.zeros((len(u), config.grid_levels * f, 3))
    for n, per_level in enumerate(corners(config, u)):
        for level, eight in enumerate(per_level):
            for entry, weight, slope in eight:
                out[n, level * f : level * f + f] += weight * table[entry]
                jacobian[n, level * f : level * f + f] += table[entry][:, None] * slope[None, :]
    return out, jacobian


def tables_gradient(config, u, d_encoded) -> np.ndarray:
    f = config.grid_features
    grad = np.zeros((table_size(config) // f, f))
    for n, per_level in enumerate(corners(config, u)):
        for level, eight in enumerate(per_level):
            for entry, weight, _ in eight:
                grad[entry] += weight * d_encoded[n, level * f : level * f + f]
    return grad.ravel()


def units_per_point(config) -> np.ndarray:
    return 1.0 / np.array(
        [config.domain[1] - config.domain[0], config.domain[3] - config.domain[2], np.ptp(config.z_range)]
    )


def network_forward(config, params, x, y, z):
    """A grid network's outputs (N, O) and d outputs / d (x, y, z) (N, O, 3), float64."""
    layers, offset = reference_grid.mlp_layers(config, params, len(config.targets))
    h, jacobian = encode(config, units(config, x, y, z), params[offset:])
    jacobian = jacobian * units_per_point(config)
    for w, b, act in layers:
        pre = h @ w.T + b
        jacobian = activation_derivative(act, pre)[:, :, None] * np.einsum("oi,nij->noj", w, jacobian)
        h = activate(act, pre)
    return h, jacobian


def network_loss_and_gradient(config, params, x, y, z, truth):
    """The mean squared error of a grid network and its gradient: the MLP's, then the tables'."""
    layers, offset = reference_grid.mlp_layers(config, params, truth.shape[1])
    u = units(config, x, y, z)
    h, _ = encode(config, u, params[offset:])
    inputs, pre = [], []
    for w, b, act in layers:
        inputs.append(h)
        pre.append(h @ w.T + b)
        h = activate(act, pre[-1])
    diff = h - truth
    d, parts = 2.0 * diff / len(u), []
    for (w, _b, act), h_in, z_pre in reversed(list(zip(layers, inputs, pre))):
        dz = d * activation_derivative(act, z_pre)
        parts.append(np.concatenate([(dz.T @ h_in).ravel(), dz.sum(axis=0)]))
        d = dz @ w
    loss = float(np.mean(np.sum(diff * diff, axis=1)))
    return loss, np.concatenate([*reversed(parts), tables_gradient(config, u, d)])


def truth_of(config, x, y, z) -> np.ndarray:
    point = (x.astype(np.float64), y.astype(np.float64), z.astype(np.float64))
    return np.stack([target_to_numpy(t, dims=3)(*point) for t in config.targets], 1)


# ---- encodeGrid alone ----------------------------------------------------------------------------
PROBE = """
[shader("compute")]
[numthreads(32, 1, 1)]
void probe(uint3 tid : SV_DispatchThreadID, uniform float* weights, uniform int64_t* gradients, uniform float* points,
           uniform float* encoded, uniform float* slopes, uniform float* upstream, uniform float* pointGradients,
           uniform float4 domain, uniform float2 depth, uniform uint count)
{
    if (tid.x >= count)
        return;
    setKernelContext(weights, gradients, domain, nullptr);
    setKernelDepth(depth);
    uint n = tid.x;
    float3 p = float3(points[3 * n], points[3 * n + 1], points[3 * n + 2]);
    let plain = encodeGrid(p);
    MLVec<INPUT_DIM> d = zeroInput();
    for (int i = 0; i < INPUT_DIM; i++)
    {
        encoded[n * INPUT_DIM + i] = plain.data[i];
        d.data[i] = upstream[n * INPUT_DIM + i];
    }
    for (int axis = 0; axis < 3; axis++)
    {
        float3 along = float3(axis == 0 ? 1.0 : 0.0, axis == 1 ? 1.0 : 0.0, axis == 2 ? 1.0 : 0.0);
        let tangent = fwd_diff(encodeGrid)(diffPair(p, along));
        for (int i = 0; i < INPUT_DIM; i++)
            slopes[(n * INPUT_DIM + i) * 3 + axis] = tangent.d.data[i];
    }
    var pair = diffPair(p);
    bwd_diff(encodeGrid)(pair, d);
    for (int axis = 0; axis < 3; axis++)
        pointGradients[3 * n + axis] = pair.d[axis];
}
"""


class Probe3D:
    """encodeGrid of a 3D module alone (its gradient in p switched on), as test_hashgrid's probe."""

    def __init__(self, gpu, config):
        self.gpu, self.config, self.plan = gpu, config, plan_for(config)
        constants = encoding_constants(self.plan).replace("GRID_POINT_GRADIENT = false", "GRID_POINT_GRADIENT = true")
        source = (
            "typealias NFloat = float;\nstatic const bool UNROLL_MATVEC = false;\n"
            f"static const int INPUT_DIM = {self.plan.input_dim};\n{constants}\n#define POINT_3D 1\n"
            '#include "model/mlvec.slang"\n#include "common/kernel_context.slang"\n#include "model/hashgrid.slang"\n'
            + PROBE
        )
        module = gpu.device.load_module_from_source(f"grid_probe_3d_{abs(hash(source)) % 10**12}", source)
        self.kernel = gpu.device.create_compute_kernel(gpu.device.link_program([module], [module.entry_point("probe")]))

    def run(self, tables, points, upstream):
        gpu, n, dim = self.gpu, len(points), self.plan.input_dim
        arrays = {
            "weights": np.concatenate([np.zeros(self.plan.mlp_param_count, np.float32), tables.astype(np.float32)]),
            "gradients": np.zeros(len(tables), np.int64),
            "points": points.astype(np.float32).ravel(),
            "encoded": np.zeros(n * dim, np.float32),
            "slopes": np.zeros(n * dim * 3, np.float32),
            "upstream": upstream.astype(np.float32).ravel(),
            "pointGradients": np.zeros(n * 3, np.float32),
        }
        buffers = {key: gpu.buffer(value.nbytes) for key, value in arrays.items()}
        for key, value in arrays.items():
            gpu.write(buffers[key], value)
        self.kernel.dispatch(
            [n, 1, 1],
            **{key: b.device_address for key, b in buffers.items()},
            domain=spy.float4(*self.config.domain),
            depth=spy.float2(*self.config.z_range),
            count=n,
        )
        read = {key: gpu.read(buffers[key], value.size, value.dtype) for key, value in arrays.items()}
        return (
            read["encoded"].reshape(n, dim),
            read["slopes"].reshape(n, dim, 3),
            read["gradients"].astype(np.float64) / 2**FIXED_POINT_BITS,
            read["pointGradients"].reshape(n, 3),
        )


def _points(config, n: int, seed: int) -> np.ndarray:
    """Points of the box and a little beyond it (outside, coordinates wrap or hash)."""
    rng = np.random.default_rng(seed)
    (x0, x1, y0, y1), (z0, z1) = config.domain, config.z_range
    ranges = [(x0 - 0.1, x1 + 0.1), (y0 - 0.1, y1 + 0.1), (z0 - 0.1, z1 + 0.1)]
    return np.stack([rng.uniform(lo, hi, n) for lo, hi in ranges], 1).astype(np.float32)


@pytest.fixture(scope="module", params=["hashgrid", "densegrid"])
def probe(gpu, request):
    return Probe3D(gpu, validate(Config(**{**GRID_3D, "encoding": request.param})))


def test_levels_are_cubes_stored_whole_or_hashed_past_the_table(probe):
    config, grid = probe.config, probe.plan.grid
    expected = levels(config)
    assert [(lv.scale, lv.resolution, lv.hashed, lv.size, lv.offset) for lv in grid.layout] == expected
    hashed = [level[2] for level in expected]
    assert hashed == ([False, False, True, True] if config.encoding == "hashgrid" else [False] * 4)
    assert probe.plan.grid_param_count == table_size(config) and probe.plan.input_dim == 8
    two_d = validate(Config(**{**GRID_3D, "encoding": config.encoding, "dims": 2})).encoding_settings.setting
    assert repr(grid) == repr(two_d) and grid != two_d  # 2D's module names hash the repr: theirs stay


def test_the_encoding_and_its_gradients_match_numpy(probe):
    """Values, d/dx, d/dy, d/dz (fwd_diff), the tables' fixed-point gradient and the point's gradient
    (bwd_diff) at points in and around the box, against the twin above."""
    config, n = probe.config, 96
    rng = np.random.default_rng(1)
    tables = rng.uniform(-1, 1, probe.plan.grid_param_count).astype(np.float32)
    points = _points(config, n, 2)
    upstream = rng.standard_normal((n, probe.plan.input_dim)).astype(np.float32)
    encoded, slopes, table_grad, point_grad = probe.run(tables, points, upstream)
    u = units(config, *points.T)
    expected, jacobian = encode(config, u, tables)
    assert np.abs(expected).max() > 0.1
    np.testing.assert_allclose(encoded, expected, atol=2e-5)
    box = [*config.domain, *config.z_range]
    twin = probe.plan.encoding.numpy(*points[:, :2].T, probe.plan.grid, box, tables, z=points[:, 2])
    np.testing.assert_allclose(twin, expected, atol=1e-9)  # the app's twin (network.json's evaluator)
    jacobian = jacobian * units_per_point(config)
    assert np.abs(jacobian[:, :, 2]).max() > 1.0  # z moves it
    np.testing.assert_allclose(slopes, jacobian, atol=2e-4 * np.abs(jacobian).max())
    expected_tables = tables_gradient(config, u, upstream.astype(np.float64))
    assert (
        np.count_nonzero(expected_tables) > 0.4 * n * 8 * config.grid_levels * config.grid_features
    )  # corners reached
    np.testing.assert_allclose(table_grad, expected_tables, atol=1e-5 * np.abs(expected_tables).max())
    expected_point = np.einsum("ni,nij->nj", upstream.astype(np.float64), jacobian)
    np.testing.assert_allclose(point_grad, expected_point, atol=2e-4 * np.abs(expected_point).max())


# ---- training ------------------------------------------------------------------------------------
PATHS = {
    "thread": {},
    "group": dict(hidden=[20, 12], activation="sin"),
    "tiles": dict(hidden=[32, 32], activation="leaky_relu"),
    "tiles, half, tensor cores": dict(hidden=[32, 32], activation="leaky_relu", precision="half"),
    "fused, tensor cores": dict(hidden=[32, 32], activation="leaky_relu", precision="half"),
    "fused, one softplus layer, tensor cores": dict(hidden=[32], activation="softplus", precision="half"),
}


@pytest.mark.parametrize("path", PATHS)
def test_a_steps_gradient_matches_numpy_in_each_path(gpu, monkeypatch, make_trainer, path):
    """The MLP's and the tables' gradient of one step over its 3D samples (tables of a trained size:
    the initial 1e-4 would hide the MLP's share); on tensor cores, the first layer's backward product
    gives the grid its input gradient, in workgroup tiles and in the fused trainer (emulated where the
    device has none)."""
    if path.endswith("tensor cores"):
        tensor_cores_for(gpu, monkeypatch, fused=path.startswith("fused"))
    trainer = make_trainer(**{**NETWORK, **PATHS[path]}, batch_size=256, seed=2)
    assert trainer.plan.gradient_path == path.split(",")[0]
    assert trainer.plan.matmul.endswith("tensor-core") == path.endswith("tensor cores")
    params = trainer.parameters()
    params[trainer.plan.mlp_param_count :] = np.random.default_rng(0).uniform(-0.5, 0.5, trainer.plan.grid_param_count)
    trainer.set_parameters(params)
    half = trainer.config.precision == "half"
    if half:
        params = params.astype(np.float16).astype(np.float32)
    loss, gradient = gpu_loss_and_gradient(trainer)
    c = trainer.config
    x, y, z = sample_points_3d(c.seed, 0, c.batch_size, c.domain, c.z_range)
    assert z.min() < 0.1 and z.max() > 1.9  # over z_range
    ref_loss, ref_gradient = network_loss_and_gradient(c, params, x, y, z, truth_of(c, x, y, z))
    assert abs(loss - ref_loss) / ref_loss < (2e-2 if half else 1e-4)
    mlp = trainer.plan.mlp_param_count
    for part in (slice(0, mlp), slice(mlp, None)):
        error = np.abs(gradient[part] - ref_gradient[part]).max() / np.abs(ref_gradient[part]).max()
        assert error < (3e-2 if half else 1e-4), (part, error)
    assert np.count_nonzero(gradient[mlp:]) > 0.2 * trainer.plan.grid_param_count


@pytest.fixture(scope="module")
def trained(gpu):
    """Two trainers of one seed, 120 steps each, and the first one's losses."""
    config = validate(Config(**NETWORK, batch_size=1024, seed=3))
    first, second = Trainer(gpu, config), Trainer(gpu, config)
    losses = first.train(120)
    second.train(120)
    return first, second, losses


def test_it_learns_and_a_seed_gives_the_same_bytes(trained):
    first, second, losses = trained
    assert losses[-10:].mean() < losses[0] / 100, (losses[0], losses[-10:])
    assert first.parameters().tobytes() == second.parameters().tobytes()
    assert first.optimizer_state_values().tobytes() == second.optimizer_state_values().tobytes()


def test_the_views_slice_and_its_slopes_match_numpy(trained):
    """The evaluation at the slice z = 1 (the middle of z_range [0, 2]): predictions and their d/dx,
    d/dy through the grid's forward derivative, against the twin (a grid spanning another depth,
    or a slope along the wrong axis, fails)."""
    trainer, grid = trained[0], 16
    evaluation = GridEvaluator(trainer, grid).evaluate()
    x, y = (a.ravel() for a in grid_centres(trainer.config.domain, grid))
    outputs, jacobian = network_forward(trainer.config, trainer.parameters(), x, y, np.ones_like(x))
    np.testing.assert_allclose(evaluation.predictions.reshape(-1, 1), outputs, atol=2e-5)
    assert np.ptp(outputs) > 1.0  # sin(4x) cos(3y) at z = 1, learned
    slopes = evaluation.derivatives.reshape(-1, 1, 4)[:, :, :2]
    np.testing.assert_allclose(slopes, jacobian[:, :, :2], atol=2e-4 * np.abs(jacobian).max())


def test_network_json_tables_and_the_slang_export_round_trip(gpu, trained, tmp_path):
    """network.json with its tables: numpy's forward pass equals the twin; --load-network reads it
    back as a 3D grid; the export, compiled alone, computes the same outputs and its
    bwd_diff d/d(x, y, z) the twin's slopes."""
    trainer = trained[0]
    params = evaluated_parameters(trainer)
    network = export_network(trainer.plan, trainer.config, params)
    assert network["encoding"]["kind"] == "hashgrid" and network["domain"]["z"] == [0.0, 2.0]
    (tmp_path / "network.json").write_text(json.dumps(network))
    (tmp_path / TABLES_FILE).write_bytes(tables_npy(trainer.plan, params))
    rng = np.random.default_rng(4)
    xyz = np.stack([rng.uniform(-1, 1, 64), rng.uniform(-0.75, 0.75, 64), rng.uniform(0, 2, 64)], 1).astype(np.float32)
    outputs, jacobian = network_forward(trainer.config, params, *xyz.T)
    tables = np.load(tmp_path / TABLES_FILE)
    np.testing.assert_allclose(forward(network, *xyz[:, :2].T, tables.ravel(), z=xyz[:, 2]), outputs, atol=1e-9)
    config, loaded = load_network(str(tmp_path / "network.json"), Config())
    assert config.dims == 3 and config.z_range == [0.0, 2.0] and config.structure() == trainer.config.structure()
    assert np.array_equal(loaded, params)

    files = export_files(trainer, tmp_path / "net.slang")
    for path, data in files:
        path.write_bytes(data)
    source = files[0][1].decode()
    assert "float[TRAINED_INPUTS] trained_encode(float3 xyz)" in source and "float2" not in source
    device = spy.create_device(type=gpu.device.info.type, enable_hot_reload=False)
    device.load_module_from_source("exported_grid_3d", source)
    module = spy.Module(device.load_module_from_source("exported_grid_3d_harness", HARNESS))
    bound = device.create_buffer(
        data=np.fromfile(tmp_path / "net.tables.bin", "<f4"), usage=spy.BufferUsage.shader_resource
    )
    exported = module.output_0.set(trained_grid_tables=bound)(xyz, _result="numpy")
    np.testing.assert_allclose(exported, outputs[:, 0], atol=2e-5)
    gradient = module.bwd_0.set(trained_grid_tables=bound)(xyz, _result="numpy")
    np.testing.assert_allclose(gradient, jacobian[:, 0], atol=1e-3 * np.abs(jacobian).max())


HARNESS = """
import exported_grid_3d;

float output_0(float3 xyz) { return trained_network_outputs(xyz)[0]; }

[Differentiable]
float first(float3 xyz) { return trained_network_outputs(xyz)[0]; }

float3 bwd_0(float3 xyz) { var p = diffPair(xyz); bwd_diff(first)(p, 1.0); return p.d; }
"""


def test_a_3d_grid_is_sized_by_its_cubes_and_refuses_derivative_terms():
    """A densegrid that fits in 2D holds R^3 corners a level in 3D (refused past the limit, naming
    its size); the derivative terms are 2D for a grid (hashgrid_derivatives.slang)."""
    large = dict(encoding="densegrid", grid_levels=8, grid_base_resolution=16, grid_level_scale=1.5)
    validate(Config(**large))
    with pytest.raises(UserError, match=r"the densegrid would hold [\d,]+ table values"):
        validate(Config(**large, dims=3))
    with pytest.raises(UserError, match="--dims 3 trains a hashgrid on the squared error alone") as error:
        validate(Config(**GRID_3D, eikonal=0.1))
    assert "\n" not in str(error.value)
