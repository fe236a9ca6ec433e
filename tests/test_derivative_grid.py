"""Training on derivatives with a grid encoding (shaders/model/hashgrid_derivatives.slang): the kernels'
gradient of the nested loss, the MLP's and the tables', against central differences of a float64
numpy twin built on tests/reference_grid.py (the grids' reference written from the docs, not from
app/model/hashgrid.py), whose slope of the features in p is itself checked by finite differences of
its encoding; bit-identical runs; and the Sobolev effect with a hash grid."""

import json

import numpy as np
import pytest
import reference_grid as ref
from helpers import assert_tables_keep_their_bytes_under_another_launch, gpu_loss_and_gradient, run_headless_here
from reference import activate, activation_derivative, derivative_loss, sample_points, truth_gradient, truth_values

from app.config.config import Config, validate

# Scales 3, 6, 12, 24 over a domain of 3 x 2: a hash grid's finest level (26^2 corners) is hashed
# into 2^8 entries; a dense grid stores all 961 entries.
GRID = dict(grid_levels=4, grid_features=2, grid_log2_size=8, grid_base_resolution=3, grid_level_scale=2.0,
            domain=[-1.0, 2.0, -0.5, 1.5])  # fmt: skip


class NestedGridTwin:
    """One batch's nested loss in float64 as a function of every parameter. Each feature is a sum
    over its level's 4 corners of a weight times a table value, and its gradient in p the same sum
    with the weights' slopes: the entries, weights and slopes (from reference_grid.corners) depend
    on the points alone, so they are gathered once, and each central difference is cheap."""

    def __init__(self, config, x, y, outputs):
        u = ref.units(config, x, y)
        f, width = config.grid_features, config.grid_levels * config.grid_features
        self.config, self.n, self.width, self.outputs = config, len(u), width, outputs
        x0, x1, y0, y1 = config.domain
        du_dp = np.array([1.0 / (x1 - x0), 1.0 / (y1 - y0)])
        index, weight, slope = [], [], []  # per feature of each point: its 4 corners'
        for per_level in ref.corners(config, u):
            for four in per_level:
                for j in range(f):
                    index.append([entry * f + j for entry, _, _ in four])
                    weight.append([w for _, w, _ in four])
                    slope.append([dw_du * du_dp for _, _, dw_du in four])
        self.index, self.weight, self.slope = np.array(index), np.array(weight), np.array(slope)

    def touched(self, table_count: int) -> np.ndarray:
        """Which table values some sample's corners reach: the loss depends on no other."""
        return np.isin(np.arange(table_count), self.index)

    def loss(self, params, truth, gradient_of_truth) -> float:
        layers, first_table = ref.mlp_layers(self.config, params, self.outputs)
        corner_values = params[first_table:][self.index]
        h = (self.weight * corner_values).sum(axis=1).reshape(self.n, self.width)
        jacobian = np.einsum("rc,rca->ra", corner_values, self.slope).reshape(self.n, self.width, 2)
        for w, b, act in layers:  # forward mode: the outputs' gradient in p, layer by layer
            z = h @ w.T + b
            jacobian = activation_derivative(act, z)[:, :, None] * np.einsum("oi,nij->noj", w, jacobian)
            h = activate(act, z)
        return derivative_loss(self.config, h, jacobian, truth, gradient_of_truth)


def numeric_gradient(trainer, h=1e-6):
    """The twin's loss and its central differences in the MLP's parameters and the table values
    the batch reaches (the others' gradient is 0: the loss does not read them)."""
    config, params, mlp = trainer.config, trainer.parameters().astype(np.float64), trainer.plan.mlp_param_count
    x, y = sample_points(config.seed, 0, config.batch_size, config.domain)
    truth, gradient_of_truth = truth_values(config, x, y), truth_gradient(config, x, y)
    twin = NestedGridTwin(config, x, y, truth.shape[1])
    read = np.concatenate([np.ones(mlp, bool), twin.touched(params.size - mlp)])
    gradient = np.zeros_like(params)
    for i in np.flatnonzero(read):
        plus, minus = params.copy(), params.copy()
        plus[i] += h
        minus[i] -= h
        gradient[i] = (twin.loss(plus, truth, gradient_of_truth) - twin.loss(minus, truth, gradient_of_truth)) / (2 * h)
    return twin.loss(params, truth, gradient_of_truth), gradient, read


def hash_collisions(config, x, y) -> int:
    """Entries of the hashed levels that two or more of the batch's distinct corners share."""
    u = ref.units(config, x, y)
    shared = 0
    for scale, _side, hashed, size, _first in ref.levels(config):
        if not hashed:
            continue
        cells = np.floor(u * scale).astype(np.int64)
        corners = {(cx + dx, cy + dy) for cx, cy in cells for dx in (0, 1) for dy in (0, 1)}
        entries = [(cx ^ ((cy * ref.PRIME) % 2**32)) % size for cx, cy in corners]
        shared += len(entries) - len(set(entries))
    return shared


def test_reference_features_slope_matches_central_differences():
    """reference_grid's d features / du, which the twin's Sobolev and eikonal terms rest on, against
    central differences of its own encoding, at points whose cells stay the same over the step."""
    config = validate(Config(**GRID, encoding="hashgrid"))
    rng = np.random.default_rng(7)
    u, tables, h = rng.uniform(0.0, 1.0, (40, 2)), rng.uniform(-1, 1, ref.table_size(config)), 1e-7
    for scale, *_ in ref.levels(config):  # keep points 1e-5 of a cell away from its edges
        fraction = u * scale - np.floor(u * scale)
        u = u[np.all((fraction > 1e-5) & (fraction < 1 - 1e-5), axis=1)]
    assert len(u) > 30
    jacobian = ref.encode_jacobian(config, u, tables)
    for axis in range(2):
        step = np.zeros(2)
        step[axis] = h
        numeric = (ref.encode(config, u + step, tables) - ref.encode(config, u - step, tables)) / (2 * h)
        np.testing.assert_allclose(jacobian[:, :, axis], numeric, atol=1e-6 * np.abs(jacobian).max())
    assert np.abs(jacobian[:, -config.grid_features :]).max() > 10  # the finest level's slope: 24 per unit u


CASES = {
    "hashgrid, thread accumulators, sobolev": dict(
        encoding="hashgrid", hidden=[6], activation="tanh", grad_weight=0.7, targets=["sin(3*x)*cos(2*y)", "x*y"]
    ),
    "densegrid, thread accumulators, both terms": dict(
        encoding="densegrid", hidden=[6], activation="softplus", grad_weight=1.0, eikonal=0.25,
        targets=["sin(3*x)*cos(2*y)"],
    ),
    "hashgrid, group tiles, eikonal": dict(
        encoding="hashgrid", hidden=[24, 12], activation="tanh", eikonal=0.5, targets=["sqrt(x*x + y*y) - 0.5"]
    ),
    "hashgrid, thread accumulators, sobolev, half": dict(
        encoding="hashgrid", hidden=[6], activation="tanh", grad_weight=0.7, targets=["sin(3*x)*cos(2*y)"],
        precision="half",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_gradient_with_a_grid_matches_central_differences(make_trainer, case):
    trainer = make_trainer(**GRID, **CASES[case], batch_size=64, seed=3)
    assert trainer.plan.gradient_path == ("group" if "group" in case else "thread") and trainer.plan.derivatives
    mlp = trainer.plan.mlp_param_count
    params = trainer.parameters()
    # tables of a trained size: the initial 1e-4 would leave the features, and the MLP's share, ~0
    params[mlp:] = np.random.default_rng(0).uniform(-0.5, 0.5, trainer.plan.grid_param_count)
    half = trainer.config.precision == "half"
    trainer.set_parameters(params.astype(np.float16).astype(np.float32) if half else params)  # the twin's values
    config = trainer.config
    if config.encoding == "hashgrid":
        assert hash_collisions(config, *sample_points(config.seed, 0, config.batch_size, config.domain)) > 0
    gpu_l, gpu_g = gpu_loss_and_gradient(trainer)
    ref_l, ref_g, read = numeric_gradient(trainer)
    assert abs(gpu_l - ref_l) / ref_l < (1e-3 if half else 1e-4)
    touched = read[mlp:]
    assert 0.05 * touched.size < np.count_nonzero(touched) < touched.size
    assert not gpu_g[mlp:][~touched].any()  # a table value no sample's corners reach: exactly 0
    for part in (slice(0, mlp), slice(mlp, None)):
        scale = np.abs(ref_g[part]).max()
        error = np.abs(gpu_g[part] - ref_g[part]).max() / scale
        assert error < (1e-2 if half else 1e-4), (part, error, scale)  # half: ~3 significant digits


def test_grid_derivative_training_is_bit_identical_under_another_launch_shape(gpu, monkeypatch):
    """Another number of workgroups adds the tables' fixed-point contributions in another order:
    the tables after a step are the same bytes (the MLP's float sums follow the slots, so a second
    step would start from other weights)."""
    config = validate(Config(**GRID, encoding="hashgrid", hidden=[6], activation="tanh", grad_weight=1.0,
                             targets=["sin(3*x)*cos(2*y)"], batch_size=2000, seed=4))  # fmt: skip
    assert_tables_keep_their_bytes_under_another_launch(
        gpu, monkeypatch, config, MAX_TRAIN_THREADS=256, MIN_PARALLEL_THREADS=256
    )


SMALL_GRID_ARGS = ["--grid-levels", "4", "--grid-table", "8", "--grid-base-resolution", "4", "--grid-level-scale", "2"]


def test_two_grid_runs_with_derivatives_write_the_same_bytes(gpu, tmp_path):
    """The CLI twice, same seed, a hash grid with a hashed level and the Sobolev term."""
    outputs = []
    for run_name in ("first", "second"):
        out = tmp_path / run_name
        args = ["--encoding", "hashgrid", *SMALL_GRID_ARGS, "--grad-weight", "1", "--iterations", "50"]
        run = run_headless_here(gpu, tmp_path, *args, "--out", str(out))
        assert run.returncode == 0, run.stderr
        outputs.append(out)
    for name in ("network.json", "network.tables.npy"):
        assert (outputs[0] / name).read_bytes() == (outputs[1] / name).read_bytes(), name
    tables = np.load(outputs[0] / "network.tables.npy")
    assert np.abs(tables).max() > 1e-3  # trained: the tables start within 1e-4


def test_sobolev_training_with_a_hash_grid_fits_slopes(gpu, tmp_path):
    """The known effect, measured with a hash grid: the derivative eval loss after 300 steps is at
    most a third of the value loss alone's."""
    losses = {}
    for weight in ("0", "1"):
        out = tmp_path / f"weight{weight}"
        args = ["--encoding", "hashgrid", *SMALL_GRID_ARGS, "--target", "sin(3*x)*cos(2*y)", "--activation", "tanh",
                "--hidden", "16", "--batch-size", "256"]  # fmt: skip
        run = run_headless_here(gpu, tmp_path, *args, "--iterations", "300", "--grad-weight", weight, "--out", str(out))
        assert run.returncode == 0, run.stderr
        losses[weight] = json.loads((out / "summary.json").read_text())["eval_grad_loss"]
    assert losses["1"] <= losses["0"] / 3, losses
