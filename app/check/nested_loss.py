"""The gradient check of the nested loss (training on derivatives): a float64 numpy twin of the whole
loss the derivative kernels train on, and its parameter gradient by central differences. It shares
nothing with shaders/model/derivatives.slang: the input gradient by forward mode in numpy (the
encoding's Jacobian by complex step), the truth's from its numpy twin (truth_twin.py); how:
docs/architecture.md, 'The gradient check'."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..errors import UserError
from ..kernels.plan import NetworkPlan
from ..model.activations import LEAKY_RELU_SLOPE
from .finite_difference import kink_free_central_difference
from .truth_twin import numpy_truth, truth_tangents


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # 1 / (1 + e^-z), without an exponential to overflow


# Each activation's derivative from its definition, as a function of the pre-activation z.
DERIVATIVES = {
    "leaky_relu": lambda z: np.where(z > 0, 1.0, LEAKY_RELU_SLOPE),
    "relu": lambda z: (z > 0).astype(np.float64),
    "tanh": lambda z: 1.0 - np.tanh(z) ** 2,
    "sigmoid": lambda z: _sigmoid(z) * (1.0 - _sigmoid(z)),
    "sin": np.cos,
    "softplus": _sigmoid,  # d/dz log(1 + e^z)
    "silu": lambda z: _sigmoid(z) * (1.0 + z * (1.0 - _sigmoid(z))),  # d/dz z sigmoid(z)
    "identity": np.ones_like,
}
# Every encoding that trains on derivatives is analytic in x and y, so Im enc(x + i e, y) / e is its
# derivative to rounding (a difference quotient of a 2^7 pi Fourier feature would be 1e-3 out).
COMPLEX_STEP = 1e-30
NO_NUMPY_TRUTH = (
    "the gradient check of --grad-weight and --eikonal needs a truth numpy can evaluate "
    "(targets, an image, a shape or a mesh); a Slang file's target has none"
)
NORM_FLOOR = 1e-12  # derivatives.slang's floor under |grad f|^2: else a vanishing gradient's step is NaN


def encoding_tangents(plan: NetworkPlan, points: np.ndarray) -> np.ndarray:
    """(D, N, inputs): d encoding / dx, / dy (and / dz) at points (N, D) by complex step."""
    columns = np.asarray(points, np.float64).T.astype(complex)
    tangents = []
    for axis in range(len(columns)):
        moved = columns.copy()
        moved[axis] += 1j * COMPLEX_STEP
        z = moved[2] if len(moved) == 3 else None
        tangents.append(plan.encoding.numpy(moved[0], moved[1], plan.encoding_setting, z=z).imag / COMPLEX_STEP)
    return np.stack(tangents)


@dataclass
class NestedBatch:
    """A batch as the twin needs it: the encoded points and their Jacobian, the truth and its
    gradient, all float64, and the loss's weights."""

    inputs: np.ndarray  # (N, inputs)
    tangents: np.ndarray  # (D, N, inputs): the inputs' derivatives along x, y (and z)
    truth: np.ndarray  # (N, outputs)
    truth_tangents: np.ndarray  # (D, N, outputs): the truth's alike
    grad_weight: float
    eikonal: float
    normals: np.ndarray  # (N, D): a boundary sample's outward normal, else 0 (sample_twin.py)
    normal_weight: float


def nested_batch(plan: NetworkPlan, config, points: np.ndarray, normals: np.ndarray | None = None) -> NestedBatch:
    """The check's batch of `points` (N, 2 or 3) (and at boundary samples their normals) for the
    twin: a UserError where the truth has no numpy twin."""
    truth = numpy_truth(plan, config.domain, config.image, config.z_range)
    if truth is None:
        raise UserError(NO_NUMPY_TRUTH)
    columns = points.astype(np.float64).T
    z = columns[2] if len(columns) == 3 else None
    inputs = plan.encoding.numpy(columns[0], columns[1], plan.encoding_setting, z=z)
    normals = np.zeros(points.shape) if normals is None else normals.astype(np.float64)
    return NestedBatch(
        inputs, encoding_tangents(plan, points), truth(*columns), truth_tangents(truth, points),
        config.grad_weight, config.eikonal, normals, config.normal_weight,
    )  # fmt: skip


def nested_loss(plan: NetworkPlan, params: np.ndarray, batch: NestedBatch) -> tuple[float, list[np.ndarray]]:
    """The batch's mean nested loss in float64, and which side of its kink each ReLU-family
    pre-activation is on. Per sample: the value loss + grad_weight * sum_o |grad f_o - grad t_o|^2
    + eikonal * sum_o (|grad f_o| - 1)^2 + normal_weight * sum_o |grad f_o - n|^2 at the boundary
    samples."""
    h, tangents, sides = batch.inputs, batch.tangents, []
    for layer in plan.layers:
        weights = layer.weights(params)
        z = h @ weights.T + layer.biases(params)
        if layer.activation.relu_like:
            sides.append(z > 0)
        tangents = DERIVATIVES[layer.activation.name](z) * (tangents @ weights.T)  # the chain rule
        h = layer.activation.numpy(z, **layer.activation.params)
    value = plan.loss.numpy(h, batch.truth)
    sobolev = ((tangents - batch.truth_tangents) ** 2).sum(axis=(0, 2))
    norm = np.sqrt(np.maximum((tangents**2).sum(axis=0), NORM_FLOOR))
    eikonal = ((norm - 1.0) ** 2).sum(axis=1)
    boundary = np.any(batch.normals != 0, axis=1)  # the samples drawn on the boundary
    alignment = ((tangents - batch.normals.T[:, :, None]) ** 2).sum(axis=(0, 2)) * boundary
    terms = batch.grad_weight * sobolev + batch.eikonal * eikonal + batch.normal_weight * alignment
    return float(np.mean(value + terms)), sides


def central_difference(
    plan: NetworkPlan, params: np.ndarray, index: int, batch: NestedBatch, sides, step: float, smallest: float
) -> float:
    """d nested_loss / d params[index], with a step that carries no sample across a kink;
    `sides` are nested_loss's at `params`."""
    loss = functools.partial(nested_loss, plan, batch=batch)
    return kink_free_central_difference(loss, params, index, sides, step, smallest)


def chosen_parameters(plan: NetworkPlan, gradient: np.ndarray, most: int) -> np.ndarray:
    """Which parameters the central differences take: all of a network of at most `most`, else
    each layer's weight and bias with the largest |gradient| (where a wrong scale shows) and
    the rest drawn at random, a fixed draw, up to `most` in all."""
    if plan.param_count <= most:
        return np.arange(plan.param_count)
    ranges = [(r.offset, r.bias_offset) for r in plan.layers] + [(r.bias_offset, r.end) for r in plan.layers]
    largest = {first + int(np.argmax(np.abs(gradient[first:end]))) for first, end in ranges}
    others = np.setdiff1d(np.arange(plan.param_count), sorted(largest))
    drawn = np.random.default_rng(0).choice(others, size=most - len(largest), replace=False)
    return np.sort(np.concatenate([sorted(largest), drawn]))
