"""The fused tensor-core trainer on a loss with derivative terms (paths/fused/fused_jets.slang):
each sample's value and tangents as three rows of a tile. Its gradient of the whole nested loss against
central differences of the float64 numpy twin (the gradient check, app/check/grad_check.py), on
CI through emulated products and on a GPU on its tensor cores, and bit for bit again.

Measured when written (lavapipe, emulated; tolerance 5e-2 in half): softplus eikonal 1.6e-4 on
2-64-64-64-1, tanh Sobolev on Fourier features 2.6e-3, a sigmoid output 1.3e-3. With softplus's
second derivative left out (curvatureFromOutput 0), the eikonal case read 6.4e-2 and failed. CI
runs smaller networks of the same kinds: an emulated kernel compiles in 8 to 12 s there."""

from __future__ import annotations

import numpy as np
import pytest
from tensor_core_checks import emulate_tensor_cores

from app.check import grad_check
from app.config.config import Config, validate
from app.train.trainer import Trainer

TARGETS = ["sin(3*x)*cos(2*y)", "x*y + 0.5*x"]
CASES = {
    # softplus (curvature e^-h), two hidden layers split by columns, one output, and the normal
    # alignment at a quarter of the samples, drawn on the circle
    "eikonal-softplus": dict(
        activation="softplus", encoding="raw", hidden=[32, 32], sdf="circle", eikonal=0.1, normal_weight=0.5
    ),
    # tanh (curvature -2h), Fourier features' tangents, 3 column tiles, two outputs through the
    # sigmoid output activation's own jet, the Sobolev and eikonal terms at once
    "sobolev-fourier-sigmoid": dict(
        activation="tanh",
        encoding="fourier",
        frequencies=2,
        hidden=[48, 32],
        targets=TARGETS,
        output_activation="sigmoid",
        grad_weight=0.5,
        eikonal=0.3,
    ),  # fmt: skip
}


def _check(gpu, case: dict) -> None:
    """The gradient check after 3 steps, and the same 3 steps again, bit for bit (in one call
    and in two)."""
    fields = dict(precision="half", seed=6, **case)
    trainer = Trainer(gpu, validate(Config(**fields)))
    assert trainer.plan.gradient_path == "fused" and trainer.plan.derivatives, trainer.plan.gradient_path
    trainer.train(3)
    check = grad_check.run(trainer)
    assert check.passed, check.line() + "; " + check.detail()
    assert check.nested and check.error <= grad_check.TOLERANCE["half"]
    again = Trainer(gpu, validate(Config(**fields)))
    again.train(1)
    again.train(2)
    assert again.parameters().tobytes() == trainer.parameters().tobytes(), "bit for bit again"
    assert not np.array_equal(trainer.parameters(), trainer.plan.initial_parameters(6)), "it trained"


@pytest.mark.parametrize("name", CASES)
def test_emulated_fused_jets_match_the_nested_float64_twin(gpu, monkeypatch, name):
    emulate_tensor_cores(gpu, monkeypatch)
    _check(gpu, dict(CASES[name], batch_size=100))  # a partial tile


@pytest.mark.gpu_machine
@pytest.mark.parametrize("name", CASES)
def test_fused_jets_on_tensor_cores(gpu, name):
    if not (gpu.tensor_cores and gpu.fused_fragments):
        pytest.skip("no cooperative matrices on this device (the emulated test above runs the same kernels)")
    _check(gpu, dict(CASES[name], batch_size=4096))
