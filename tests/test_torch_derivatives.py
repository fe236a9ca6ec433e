"""The PyTorch reference of the derivatives benchmark rows (app/bench/torch_derivatives.py) on
the CPU: both losses and their parameter gradients (PyTorch's double backward) against numpy
written again on purpose (tests/torch_derivatives_check.py). The app does not need PyTorch, so
these skip where it is not installed."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu_machine  # PyTorch is installed there (docs/extending.md, tests on the GPU machine)
torch = pytest.importorskip("torch", reason="PyTorch is not installed (only the benchmark's reference rows use it)")

import torch_derivatives_check as check  # noqa: E402  (it imports torch, which may be missing)

from app.bench import torch_derivatives  # noqa: E402
from app.bench.derivatives_task import LOSSES, SIZES  # noqa: E402


@pytest.mark.parametrize("loss", LOSSES)
def test_every_parameter_gradient_of_a_tiny_network_matches_numpy(loss):
    errors = check.check_loss(loss, check.TINY, batch=16, seed=1)
    assert errors["loss_error"] < check.LOSS_BOUND, errors
    assert errors["gradient_error"] < check.GRADIENT_BOUND, errors
    assert errors["largest_gradient"] > 1e-2, "the gradients compared are not all near zero"


@pytest.mark.parametrize("loss", LOSSES)
def test_sampled_parameter_gradients_of_the_benchmarks_network_match_numpy(loss):
    errors = check.check_loss(loss, SIZES, batch=32, seed=2, parameters=60)
    assert errors["loss_error"] < check.LOSS_BOUND, errors
    assert errors["gradient_error"] < check.GRADIENT_BOUND, errors


@pytest.mark.parametrize("loss", LOSSES)
def test_eager_steps_run_on_the_cpu(loss):
    assert torch_derivatives.time_eager(loss, 64, 2, device="cpu") > 0


def test_without_cuda_the_rows_say_why():
    reason = torch_derivatives.unavailable_reason()
    assert (reason is None) == torch.cuda.is_available()
    if reason:
        assert "CUDA" in reason
