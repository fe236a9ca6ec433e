"""The half-precision paths on tensor cores (cooperative matrices), where the device has them: the
fully fused trainer (app/kernels/paths/fused/fused.slang) wherever a network fits it, workgroup tiles
(app/kernels/paths/tiles/tiles_mma.slang) for wider ones. CI's lavapipe has none, so these run on the GPU
machine; tests/test_tensor_cores_emulated.py runs the same kernels on CI with their products
emulated. fp16 products with fp32 accumulation and fp16 activations and gradients between layers:
the gradients follow a float64 reference to within 3e-2 of the largest gradient (room for fp16's
2^-11 rounding accumulated over four layers and thousands of samples; measured 1.5e-3 to 3.4e-3
on the H200), as the half SIMT path's do."""

from __future__ import annotations

import numpy as np
import pytest
from tensor_core_checks import check_gradients_against_float64

from app.config.config import Config, validate
from app.loop.session import Session
from app.train.trainer import Trainer

pytestmark = pytest.mark.gpu_machine
WIDE = dict(encoding="raw", hidden=[64, 64, 64], activation="leaky_relu")


@pytest.fixture
def tensor_gpu(gpu):
    if not gpu.tensor_cores:
        pytest.skip("no cooperative matrices on this device")
    return gpu


@pytest.mark.parametrize("activation", ["leaky_relu", "tanh", "sigmoid", "relu"])
def test_tensor_core_gradients_match_float64(tensor_gpu, activation):
    trainer = Trainer(
        tensor_gpu, validate(Config(**dict(WIDE, activation=activation), precision="half", batch_size=4096, seed=3))
    )
    assert (
        trainer.plan.matmul == "tensor-core" and (trainer.plan.gradient_path == "fused") == tensor_gpu.fused_fragments
    )
    check_gradients_against_float64(trainer)


@pytest.mark.parametrize(
    "fields",
    [
        dict(encoding="poly2", hidden=[32, 32], activation="tanh"),  # narrow: one tile a subgroup
        dict(encoding="fourier", frequencies=3, hidden=[64, 48], activation="sigmoid"),  # 14 inputs, 48 wide
        dict(encoding="raw", hidden=[64, 64, 64], output_activation="sigmoid"),  # the output's derivative
        dict(encoding="raw", hidden=[80, 80]),  # two rounds of columns, weights loaded every tile
        dict(encoding="raw", hidden=[128, 128]),  # 8 subgroups, 32-sample tiles
        dict(encoding="fourier", frequencies=3, hidden=[64, 64, 64, 64]),  # 8 subgroups: its 19 dW tiles
    ],
    ids=["poly2-32-32", "fourier-64-48", "sigmoid-output", "80-80-per-tile-weights", "128-128", "64x4"],
)
def test_fused_trainer_gradients_match_float64_on_other_shapes(tensor_gpu, fields):
    config = validate(Config(**fields, precision="half", batch_size=3000, seed=5))  # a partial last tile
    trainer = Trainer(tensor_gpu, config)
    if trainer.plan.gradient_path != "fused":
        pytest.skip("this device's cooperative matrices hold operands otherwise: no fused trainer")
    check_gradients_against_float64(trainer)


def test_devices_with_other_operand_layouts_keep_workgroup_tiles(tensor_gpu, monkeypatch):
    """Where a device's cooperative matrices hold B operands otherwise than the fused trainer's
    fragment-native weight copies assume (app/gpu/gpu.py fused_fragments), workgroup tiles train."""
    monkeypatch.setattr(type(tensor_gpu), "fused_fragments", property(lambda self: False))
    config = Config(encoding="raw", hidden=[128, 128], precision="half", batch_size=2048, seed=2)
    trainer = Trainer(tensor_gpu, validate(config))
    assert trainer.plan.matmul == "tensor-core" and trainer.plan.gradient_path != "fused"
    check_gradients_against_float64(trainer)


TARGETS = ["x", "y", "x*y", "x - y", "sin(3*x)", "cos(2*y)", "x*x", "y*y"]


@pytest.mark.parametrize("outputs", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("fused", [True, False], ids=["fused", "workgroup-tiles"])
def test_every_output_count_trains_on_tensor_cores(tensor_gpu, monkeypatch, outputs, fused):
    """Output counts that are not a multiple of 4 leave the MLP's parameters, and so a gradient
    slot, a multiple of 4 floats no more: the slots must still start where tensor cores can store
    whole tiles (plan.slot_stride). Gradients against float64, on both tensor-core paths."""
    if not fused:
        monkeypatch.setattr(type(tensor_gpu), "fused_fragments", property(lambda self: False))
    config = validate(Config(**WIDE, targets=TARGETS[:outputs], precision="half", batch_size=3000, seed=7))
    trainer = Trainer(tensor_gpu, config)
    assert trainer.plan.matmul == "tensor-core" and trainer.plan.slot_stride % 4 == 0
    if fused and trainer.plan.gradient_path != "fused":
        pytest.skip("this device's cooperative matrices hold operands otherwise: no fused trainer")
    check_gradients_against_float64(trainer)


@pytest.mark.parametrize("outputs", [1, 3, 4, 8])
def test_a_hash_grid_on_tensor_cores_is_bit_reproducible_whatever_the_outputs(tensor_gpu, outputs):
    """The break found on an H100: a hash grid (32 inputs: the first layer's gradient tiles stored
    straight into the slot) with three outputs gave other weights every run."""
    config = validate(
        Config(
            encoding="hashgrid",
            grid_levels=16,
            grid_log2_size=12,
            hidden=[64, 64],
            targets=TARGETS[:outputs],
            precision="half",
            batch_size=65536,
            seed=4,
        )
    )
    first, second = Trainer(tensor_gpu, config), Trainer(tensor_gpu, config)
    assert first.plan.matmul == "tensor-core" and first.launch.shape.group_count > 1
    first.train(30)
    second.train(30)
    assert np.array_equal(first.parameters(), second.parameters())


def test_tensor_cores_are_bit_reproducible(tensor_gpu):
    config = validate(Config(**WIDE, precision="half", batch_size=100_000, seed=42))
    first, second = Trainer(tensor_gpu, config), Trainer(tensor_gpu, config)
    first.train(20)
    second.train(7)
    second.train(13)
    assert np.array_equal(first.parameters(), second.parameters())


def test_half_on_tensor_cores_fits_as_well_as_float(tensor_gpu):
    losses = {}
    for precision in ("float", "half"):
        session = Session(tensor_gpu, validate(Config(**WIDE, precision=precision, batch_size=16384, seed=1)))
        session.eval_every = 1 << 30
        while session.trainer.step < 1500:
            session.advance(session.chunk_size(1500))
        losses[precision] = session.evaluate()
    assert losses["half"] < max(2 * losses["float"], losses["float"] + 2e-3), losses
