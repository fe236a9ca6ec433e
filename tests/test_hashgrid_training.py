"""Training whole grid networks: the training kernels' gradients in every gradient path against
numpy (tests/reference_grid.py), bit-identical tables over runs, pieces and launch shapes, the path
a grid network takes, and the tables' optimizer step."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import reference_grid as ref
from helpers import assert_tables_keep_their_bytes_under_another_launch, gpu_loss_and_gradient
from reference import sample_points
from tensor_core_checks import tensor_cores_for
from test_hashgrid import SMALL

from app.config.config import Config, validate
from app.kernels.paths.fused.path import FUSED
from app.kernels.planning import plan_for
from app.model.hashgrid import GRID_EPSILON
from app.train.trainer import Trainer
from app.truth.targets import target_to_numpy

PATHS = {
    "thread accumulators": dict(hidden=[6]),
    "group tiles": dict(hidden=[20, 12], activation="sin"),
    "workgroup tiles": dict(hidden=[32, 32]),
    "workgroup tiles, half": dict(hidden=[32, 32], precision="half"),
    "workgroup tiles, half, tensor cores": dict(hidden=[32, 32], precision="half"),
    "fused trainer": dict(hidden=[32, 32], precision="half"),
    # 3 inputs, one feature a level: a pair of features straddles two levels; hidden layers of 16,
    # narrower than the float dX the second slot must hold
    "fused trainer, 3 levels of 1 feature, 16-16": dict(
        hidden=[16, 16], precision="half", grid_levels=3, grid_features=1
    ),
    # 20 inputs (4 a level), padded to 32: two tiles of dX, the second part zeros
    "fused trainer, 5 levels of 4 features": dict(hidden=[32, 32], precision="half", grid_levels=5, grid_features=4),
}


@pytest.mark.parametrize("path", PATHS)
def test_training_gradient_of_grid_networks_matches_numpy(gpu, monkeypatch, make_trainer, path):
    """Every path that takes a grid. On tensor cores the first layer's backward product also
    gives the grid's input gradient (tiles_mma.slang, fused_grid.slang): native on a GPU with them,
    emulated without."""
    fused = path.startswith("fused trainer")
    if path.endswith("tensor cores") or fused:
        tensor_cores_for(gpu, monkeypatch, fused)
    elif path.endswith("half"):
        monkeypatch.setattr(type(gpu), "tensor_cores", property(lambda self: False))
    fields = {**SMALL, **PATHS[path]}
    trainer = make_trainer(**fields, targets=["sin(2*x)*y", "x - y*y"], batch_size=300, seed=2)
    expected_path = "fused" if fused else {"thread accumulators": "thread", "group tiles": "group"}.get(path, "tiles")
    assert trainer.plan.gradient_path == expected_path
    assert trainer.plan.matmul.endswith("tensor-core") == (path.endswith("tensor cores") or fused)
    params = trainer.parameters()
    rng = np.random.default_rng(0)  # tables of a trained size: the initial 1e-4 would hide the MLP's share
    params[trainer.plan.mlp_param_count :] = rng.uniform(-0.5, 0.5, trainer.plan.grid_param_count)
    trainer.set_parameters(params)
    half = trainer.config.precision == "half"
    if half:
        params = params.astype(np.float16).astype(np.float32)
    loss, gradient = gpu_loss_and_gradient(trainer)
    c = trainer.config
    x, y = sample_points(c.seed, 0, c.batch_size, c.domain)
    truth = np.stack([target_to_numpy(t)(x.astype(np.float64), y.astype(np.float64)) for t in c.targets], 1)
    ref_loss, ref_gradient = ref.network_loss_and_gradient(c, params, x, y, truth)
    assert abs(loss - ref_loss) / ref_loss < (2e-2 if half else 1e-4)
    mlp = trainer.plan.mlp_param_count
    for part in (slice(0, mlp), slice(mlp, None)):
        scale = np.abs(ref_gradient[part]).max()
        error = np.abs(gradient[part] - ref_gradient[part]).max() / scale
        assert error < (3e-2 if half else 1e-4), (path, part, error)
    assert np.count_nonzero(gradient[mlp:]) > 0.3 * trainer.plan.grid_param_count


def _train_in_pieces(trainer, steps):
    sizes = itertools.cycle([1, 3, 2, 7, 5])
    while trainer.step < steps:
        with trainer.gpu.submit() as encoder:
            trainer.record_piece(encoder, next(sizes))


HALF = dict(hidden=[32, 32], precision="half")


@pytest.mark.parametrize(
    "fields, fused",
    [
        (dict(hidden=[6]), False),
        (dict(hidden=[32, 32]), False),
        (HALF, False),
        (HALF, True),
        (HALF | {"dims": 3}, True),
    ],
)
def test_tables_are_bit_identical_over_runs_pieces_and_launch_shapes(gpu, monkeypatch, fields, fused):
    """Two runs, and steps split in pieces, give identical bytes; another number of workgroups
    (a different order of the tables' atomic adds) gives identical tables after a step. Half
    precision on tensor cores, in workgroup tiles and in the fused trainer, in 2D and 3D (emulated
    where the device has none: the SIMT tiles are above)."""
    if fields.get("precision") == "half":
        tensor_cores_for(gpu, monkeypatch, fused)
    config = validate(Config(**SMALL, **fields, targets=["sin(3*x)", "x*y"], batch_size=2000, seed=4))
    first, second, pieces = Trainer(gpu, config), Trainer(gpu, config), Trainer(gpu, config)
    first.train(4)
    second.train(4)
    _train_in_pieces(pieces, 4)
    assert first.parameters().tobytes() == second.parameters().tobytes() == pieces.parameters().tobytes()
    assert first.optimizer_state_values().tobytes() == pieces.optimizer_state_values().tobytes()
    limits = dict(MAX_TILE_GROUPS=3, MAX_TRAIN_THREADS=256, MIN_PARALLEL_THREADS=256, FUSED_MAX_THREADS=3 * 256)
    assert_tables_keep_their_bytes_under_another_launch(gpu, monkeypatch, config, **limits)


def test_grid_networks_take_a_path_with_an_input_gradient():
    """On cooperative matrices a half 64-64 network takes the fused trainer with a grid too (its
    first layer's backward product gives the tables' input gradient, fused_grid.slang), with the
    tables after the MLP's parameters and the weight copies after them; with derivative terms,
    which the fused trainer's grid does not take, the grid takes a path of its own."""
    config = validate(Config(**SMALL, hidden=[64, 64], precision="half"))
    plain = plan_for(config.replace(encoding="raw"), tensor_cores=True)
    grid = plan_for(config, tensor_cores=True)
    assert plain.gradient_path == grid.gradient_path == "fused" and all(grid.mma) and grid.grid is not None
    copies = FUSED.weight_copies(grid)
    assert copies and min(c.forward for c in copies) >= grid.param_count
    assert FUSED.weight_count(grid) >= grid.param_count + sum(2 * c.fan_in * c.fan_out for c in copies)
    sdf = plan_for(config.replace(sdf="circle", eikonal=0.1), tensor_cores=True)
    assert sdf.derivatives and sdf.gradient_path != "fused"


def test_tables_take_adam_with_their_own_epsilon_and_skip_untouched_entries(make_trainer):
    """Three Adam steps against numpy: the MLP with the configured epsilon, the tables with
    GRID_EPSILON (app/model/hashgrid.py says why); an entry no sample touched keeps its value and
    moments."""
    lr, b1, b2, eps = 0.01, 0.8, 0.9, 1e-4
    trainer = make_trainer(
        **SMALL, hidden=[6], optimizer="adam", lr=lr, beta1=b1, beta2=b2, epsilon=eps, batch_size=256, seed=3
    )
    mlp = trainer.plan.mlp_param_count
    epsilons = np.full(trainer.plan.param_count, eps)
    epsilons[mlp:] = GRID_EPSILON
    params = trainer.parameters().astype(np.float64)
    m, v = np.zeros_like(params), np.zeros_like(params)
    clear = np.ones(params.size, bool)  # as in test_kernels: MLP gradients clear of float32 noise
    for t in range(1, 4):
        _, grad = gpu_loss_and_gradient(trainer, step=trainer.step)
        clear[:mlp] &= np.abs(grad[:mlp]) > 1e-3  # the tables' fixed-point sums are the GPU's own
        trainer.train(1)
        touched = np.ones(params.size, bool)
        touched[mlp:] = grad[mlp:] != 0
        m = np.where(touched, b1 * m + (1 - b1) * grad, m)
        v = np.where(touched, b2 * v + (1 - b2) * grad * grad, v)
        step = lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + epsilons)
        params = np.where(touched, params - step, params)
    assert 0 < np.count_nonzero(~touched[mlp:]) < trainer.plan.grid_param_count  # some entries untouched
    np.testing.assert_allclose(trainer.parameters()[clear], params[clear], rtol=1e-4, atol=1e-6)
