"""The tensor-core kernels on any device, CI's lavapipe included: the fully fused trainer
(app/kernels/paths/fused/) and the workgroup tiles on tensor cores (paths/tiles/tiles_mma.slang),
with every cooperative-matrix product, load and store emulated in plain loops
(shaders/common/mma_emulated.slang), and all else as on NVIDIA: the tile layout, the shared
memory, the barriers, the order of the sums. Against float64 numpy, and bit-identical run to run. Products of fp16 pairs are exact in
fp32, so the emulation is closer to float64 than the hardware (measured 1.5e-5 to 5e-5 of the
largest gradient, the rounding of fp16 activations; tensor cores 1.5e-3 to 3.4e-3): the bound is
2e-3, which an entry read from the wrong place fails by far."""

from __future__ import annotations

import numpy as np
import pytest
from tensor_core_checks import check_gradients_against_float64, emulate_tensor_cores

from app.config.config import Config, validate
from app.train.trainer import Trainer

EMULATED_TOLERANCE = 2e-3
TARGETS = ["x", "y", "x*y"]


def _trainer(gpu, monkeypatch, fused: bool, **fields) -> Trainer:
    emulate_tensor_cores(gpu, monkeypatch, fused)
    trainer = Trainer(gpu, validate(Config(**fields, precision="half", batch_size=1000, seed=5)))  # a partial tile
    assert trainer.plan.matmul == "emulated tensor-core"
    assert (trainer.plan.gradient_path == "fused") == fused, trainer.plan.gradient_path
    return trainer


DEEP = dict(encoding="raw", hidden=[64, 64, 64], activation="leaky_relu")  # also trained twice below


@pytest.mark.parametrize(
    "fields",
    [
        dict(encoding="poly2", hidden=[32, 32], activation="tanh"),  # narrow: one tile a subgroup
        dict(encoding="fourier", frequencies=3, hidden=[64, 48], activation="sigmoid"),  # 14 inputs, 48 wide
        dict(DEEP, output_activation="sigmoid"),
        dict(encoding="raw", hidden=[80, 80], activation="relu"),  # two rounds of columns, weights loaded every tile
        dict(encoding="raw", hidden=[128, 128], activation="tanh"),  # 8 subgroups, 32-sample tiles
    ],
    ids=["poly2-32-32", "fourier-64-48", "sigmoid-output", "80-80-per-tile-weights", "128-128"],
)
def test_the_fused_trainer_emulated_matches_float64(gpu, monkeypatch, fields):
    check_gradients_against_float64(_trainer(gpu, monkeypatch, True, **fields), EMULATED_TOLERANCE)


@pytest.mark.parametrize(
    "fields",
    [
        DEEP,
        dict(encoding="fourier", frequencies=3, hidden=[48, 32], activation="tanh"),  # padded first layer
    ],
    ids=["64x3", "fourier-48-32"],
)
def test_workgroup_tiles_on_emulated_tensor_cores_match_float64(gpu, monkeypatch, fields):
    check_gradients_against_float64(_trainer(gpu, monkeypatch, False, **fields), EMULATED_TOLERANCE)


@pytest.mark.parametrize("outputs", [1, 3])  # 3: the count that broke determinism on an H100 (issue 28)
@pytest.mark.parametrize("fused", [True, False], ids=["fused", "workgroup-tiles"])
def test_every_output_count_on_emulated_tensor_cores(gpu, monkeypatch, outputs, fused):
    """Output counts that leave the gradient slots no multiple of 4 floats, and padded output tiles."""
    trainer = _trainer(gpu, monkeypatch, fused, encoding="raw", hidden=[32, 32], targets=TARGETS[:outputs])
    assert trainer.plan.slot_stride % 4 == 0
    check_gradients_against_float64(trainer, EMULATED_TOLERANCE)


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "workgroup-tiles"])
def test_emulated_tensor_cores_are_bit_reproducible(gpu, monkeypatch, fused):
    """Two runs, and the same steps in two calls, give the same bytes: several workgroups sum
    their slots in a fixed order, and nothing in the emulation depends on timing. The networks
    of the gradient tests above, whose kernels a process has compiled by then."""
    fields = dict(DEEP, output_activation="sigmoid") if fused else DEEP
    first, second = _trainer(gpu, monkeypatch, fused, **fields), _trainer(gpu, monkeypatch, fused, **fields)
    assert first.launch.shape.group_count > 1
    first.train(6)
    second.train(2)
    second.train(4)
    assert first.parameters().tobytes() == second.parameters().tobytes()
    assert not np.array_equal(first.parameters(), first.plan.initial_parameters(5)), "it trained"
