"""What the tensor-core tests share: gradients against a float64 reference, and a device that runs
the tensor-core kernels with their products emulated in plain loops (shaders/common/mma_emulated.slang)."""

from __future__ import annotations

import numpy as np
from helpers import gpu_loss_and_gradient
from reference import loss_and_gradient, sample_points, truth_values


def check_gradients_against_float64(trainer, tolerance: float = 3e-2) -> None:
    """The loss and every gradient of step 0's batch against float64 numpy at the half weights,
    within `tolerance` of the largest gradient; and gradients arrive in every layer (a kernel
    that writes zeros fails)."""
    loss, gradient = gpu_loss_and_gradient(trainer)
    c = trainer.config
    params = trainer.parameters().astype(np.float16).astype(np.float32)
    x, y = sample_points(c.seed, 0, c.batch_size, c.domain)
    ref_loss, ref_gradient = loss_and_gradient(c, params, x, y, truth_values(c, x, y))
    assert abs(loss - ref_loss) / ref_loss < 2e-2, (loss, ref_loss)
    scale = np.max(np.abs(ref_gradient))
    worst = np.max(np.abs(gradient - ref_gradient)) / scale
    assert worst < tolerance, f"gradients {worst:.2e} of the largest away from float64"
    arrives = ref_gradient != 0  # ReLU's dead units have exactly zero gradients
    assert np.count_nonzero(gradient[arrives]) > 0.9 * np.count_nonzero(arrives), "every layer's gradient arrives"


def emulate_tensor_cores(gpu, monkeypatch, fused: bool = True):
    """`gpu` planning as a device with cooperative matrices whose products are emulated (the fused
    trainer where a network fits it if `fused`, else workgroup tiles on tensor cores), for this test."""
    kind = type(gpu)
    monkeypatch.setattr(kind, "tensor_cores", property(lambda self: True))
    monkeypatch.setattr(kind, "emulated_tensor_cores", property(lambda self: True))
    monkeypatch.setattr(kind, "fused_fragments", property(lambda self: fused))
    return gpu


def tensor_cores_for(gpu, monkeypatch, fused: bool):
    """`gpu` planning on tensor cores for this test, the fused trainer where `fused` else the
    workgroup tiles: native where the device has cooperative matrices (and, for the fused trainer,
    holds their operands as its weight copies assume), emulated elsewhere (CI's lavapipe)."""
    if gpu.tensor_cores and not gpu.emulated_tensor_cores and (gpu.fused_fragments or not fused):
        monkeypatch.setattr(type(gpu), "fused_fragments", property(lambda self: fused))
        return gpu
    return emulate_tensor_cores(gpu, monkeypatch, fused=fused)
