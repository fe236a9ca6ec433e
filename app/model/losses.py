"""The per-sample losses as Python <-> Slang twins: each a [Differentiable] function in
shaders/model/loss.slang that the generated outputLoss calls and the kernels reach through bwd_diff,
and its numpy functions here (the loss, and what the outputs mean). The problem picks the loss:
squared error, logistic on one logit, or softmax over one a class (docs/architecture.md, 'Losses')."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


def _squared(y: np.ndarray, truth: np.ndarray) -> np.ndarray:
    return np.sum((y - truth) ** 2, axis=1)


def _logistic(y: np.ndarray, truth: np.ndarray) -> np.ndarray:
    z = y[:, 0]
    return np.logaddexp(0.0, z) - truth[:, 0] * z  # log(1 + e^z) - t z, without overflow


def _log_softmax(y: np.ndarray) -> np.ndarray:
    shifted = y - np.max(y, axis=1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))


def _softmax_cross_entropy(y: np.ndarray, truth: np.ndarray) -> np.ndarray:
    return -np.sum(truth * _log_softmax(y), axis=1)


def _sigmoid(y: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * y))  # 1 / (1 + e^-y) without overflow


@dataclass(frozen=True)
class LossSettings:
    """The loss section of a Config: the terms added to the per-sample loss, the weights'
    regularization and the derivative terms (app/model/derivative_loss.py)."""

    regularization: str  # none, l1 or l2
    reg_rate: float
    grad_weight: float
    eikonal: float
    normal_weight: float


@dataclass(frozen=True)
class Loss:
    name: str
    slang: str  # its function in shaders/model/loss.slang
    output: str  # network.json's output kind: how the outputs turn into predictions
    numpy: Callable[[np.ndarray, np.ndarray], np.ndarray]  # (N, outputs) y, truth -> (N,) losses
    predict: Callable[[np.ndarray], np.ndarray]  # outputs -> values or class probabilities
    label: str  # how the loss plot names it

    @property
    def classifies(self) -> bool:
        return self.name != "squared"

    def classes(self, y: np.ndarray) -> np.ndarray:
        """The predicted class of each row of outputs (classification only)."""
        return (y[:, 0] > 0).astype(np.int64) if self.name == "logistic" else np.argmax(y, axis=1)


LOSSES: dict[str, Loss] = {
    loss.name: loss
    for loss in (
        Loss("squared", "squaredError", "identity", _squared, lambda y: y, "squared error summed over outputs"),
        Loss("logistic", "logisticLoss", "logistic", _logistic, _sigmoid, "binary cross-entropy"),
        Loss(
            "softmax",
            "softmaxCrossEntropy",
            "softmax",
            _softmax_cross_entropy,
            lambda y: np.exp(_log_softmax(y)),
            "softmax cross-entropy",
        ),
    )
}
