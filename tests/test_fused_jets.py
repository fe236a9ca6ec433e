"""The fused tensor-core trainer on a loss with derivative terms (shaders/fused_jets.slang): each
sample's value and tangents as three rows of a tile. Its gradient of the whole nested loss against
central differences of the float64 numpy twin (the gradient check, app/check/grad_check.py), on
CI through emulated products and on a GPU on its tensor cores (with VISUAL_TRAINER_FUSED_JETS=1
until a GPU run has measured them: app/gpu/gpu.py fused_jets), and bit for bit again.

Measured when written (lavapipe, emulated; tolerance 5e-2 in half): softplus eikonal 1.6e-4,
tanh Sobolev on Fourier features 2.6e-3, sigmoid output 1.3e-3. With softplus's second derivative
left out (curvatureFromOutput 0), the eikonal case read 6.4e-2 and failed."""

from __future__ import annotations

import numpy as np
import pytest
from tensor_core_checks import emulate_tensor_cores

from app.check import grad_check
from app.config.config import Config, validate
from app.train.trainer import Trainer

TARGETS = ["sin(3*x)*cos(2*y)", "x*y + 0.5*x"]
CASES = {
    # the bench's network and loss: three hidden layers split by columns, one output, and the
    # normal alignment at a quarter of the samples, drawn on the circle
    "eikonal-softplus": dict(
        activation="softplus", encoding="raw", hidden=[64, 64, 64], sdf="circle", eikonal=0.1, normal_weight=0.5
    ),
    # Fourier features' tangents, a 48-wide layer, two outputs
    "sobolev-fourier": dict(
        activation="tanh", encoding="fourier", frequencies=2, hidden=[64, 48], targets=TARGETS, grad_weight=1.0
    ),
    # the output activation's own jet, both terms at once
    "sigmoid-output": dict(
        activation="tanh",
        encoding="poly2",
        hidden=[32],
        targets=TARGETS,
        output_activation="sigmoid",
        grad_weight=0.5,
        eikonal=0.3,
    ),  # fmt: skip
}


def _trainer(gpu, **fields) -> Trainer:
    trainer = Trainer(gpu, validate(Config(precision="half", batch_size=100, seed=6, **fields)))  # a partial tile
    assert trainer.plan.gradient_path == "fused" and trainer.plan.derivatives, trainer.plan.gradient_path
    return trainer


def _check(trainer: Trainer) -> None:
    trainer.train(3)
    check = grad_check.run(trainer)
    assert check.passed, check.line() + "; " + check.detail()
    assert check.nested and check.error <= grad_check.TOLERANCE["half"]


@pytest.mark.parametrize("name", CASES)
def test_emulated_fused_jets_match_the_nested_float64_twin(gpu, monkeypatch, name):
    emulate_tensor_cores(gpu, monkeypatch)
    _check(_trainer(gpu, **CASES[name]))


def test_emulated_fused_jets_train_bit_for_bit_again(gpu, monkeypatch):
    emulate_tensor_cores(gpu, monkeypatch)
    first, second = (_trainer(gpu, **CASES["sigmoid-output"]) for _ in range(2))
    first.train(4)
    second.train(1)
    second.train(3)
    assert first.parameters().tobytes() == second.parameters().tobytes()
    assert not np.array_equal(first.parameters(), first.plan.initial_parameters(6)), "it trained"


@pytest.mark.parametrize("name", CASES)
def test_fused_jets_on_tensor_cores(gpu, name):
    if not (gpu.tensor_cores and gpu.fused_fragments):
        pytest.skip("no cooperative matrices on this device (the emulated test above runs the same kernels)")
    if not gpu.fused_jets:
        pytest.skip("VISUAL_TRAINER_FUSED_JETS=1 runs them on tensor cores (app/gpu/gpu.py: fused_jets)")
    fields = dict(CASES[name], batch_size=4096)
    trainer = Trainer(gpu, validate(Config(precision="half", seed=6, **fields)))
    assert trainer.plan.gradient_path == "fused" and trainer.plan.matmul == "tensor-core"
    _check(trainer)
    again = Trainer(gpu, validate(Config(precision="half", seed=6, **fields)))
    again.train(3)
    assert again.parameters().tobytes() == trainer.parameters().tobytes(), "bit for bit again"
