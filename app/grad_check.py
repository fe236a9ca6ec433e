"""The gradient check: the parameter gradient that the training kernels compute, against an
independent path on the same fixed batch, and that path against central finite differences.

- The training kernels' gradient is read exactly: one plain SGD step with a learning rate of
  2^24 moves each parameter by -2^24 g, which float32 holds to ~1e-7 of g however small g is
  next to the parameter (with a rate of 1, a gradient 1e-4 of its parameter would keep only
  three digits); the trainer is put back as it was.
- The independent path is shaders/grad_check.slang through SlangPy's function-call API: each
  layer is one vectorised call over (sample, neuron) on differentiable tensors
  (Tensor.with_grads()), and `.bwds` of each call, chained from the loss back to the first
  layer, gives the gradient. It shares no code with the training kernels; the batch's points
  come from the same sampler (shaders/sampling.slang) and the truth from the same definition.
- Central differences of that path's loss check it in turn, for each layer's weight and bias
  with the largest gradient (a forward pass per difference: all N would be too slow).
- A dataset's batch is its training points at the positions the trainer's next step takes
  (shuffledIndex from shaders/sampling.slang, read in numpy from the dataset), with the loss its
  problem takes, written again in shaders/grad_check.slang; regularisation's gradient
  (rate * sign(w) or rate * w on the weights) is added to the reference in numpy.
- A grid encoding (app/hashgrid.py) is the path's input: its numpy twin encodes the points from
  the tables, and the tables' gradient is numpy's scatter of the first layer's input gradient
  (.bwds of that call) with the bilinear weights; differences check the largest table value's.

Errors are relative to max(|reference|, 1e-2 * the largest |reference| component): a component
far below the gradient's scale is compared at 1% of that scale, where float noise is meaningful.
Tolerances, from the unit roundoff u of each precision and measured against a float64 numpy
gradient of the same batch (tests/test_grad_check.py):
- float (u = 6e-8): each component is a float32 mean of 256 per-sample terms. Untrained, both
  paths are within ~2e-6 of float64; trained, the terms cancel (the residuals are small and of
  either sign) and the error grows to ~1e-3 of a component in this measure (18-32-32-2 after
  800 steps: training kernels 6.6e-4, the SlangPy path 8.7e-4). 1e-2 leaves ten times that;
  a wrong derivative, layer or term moves components by far more.
- half (u = 4.9e-4): the network runs in half (weights, sums, activations), the reference in
  float32 with the same half weights and inputs: ~u * sqrt(fan-in) per layer, a few 1e-3 early
  in training; 5e-2. Once a network fits to within a few half ulps of its outputs, half's own
  rounding of the residuals dominates the training gradient (12% of its scale for the network
  above) and the check says so: that gradient really is that far from the exact one.
- finite differences (step h = 1e-3 * max(1, |w|), float32 losses summed in float64): truncation
  ~h^2 and rounding ~u * loss / h, ~1e-4 of the gradient's scale; 1e-2."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import slangpy as spy

from . import image_truth
from .components import ACTIVATIONS, LEAKY_RELU_SLOPE
from .device import create_device
from .errors import UserError
from .gpu import Gpu
from .hashgrid import grid_units
from .plan import NetworkPlan
from .shadergen import TARGET_NAMESPACE, slang_target_block
from .targets import target_to_slang
from .trainer import Trainer

CHECK_BATCH = 256  # samples, or a dataset's training points where it has fewer
REFERENCE_LOSSES = {"squared": "squaredError", "logistic": "logisticLoss", "softmax": "softmaxLoss"}
PROBE_LR = float(2**24)
TOLERANCE = {"float": 1e-2, "half": 5e-2}
FD_TOLERANCE = 1e-2
SCALE_FLOOR = 1e-2
ACTIVATION_IDS = {name: k for k, name in enumerate(ACTIVATIONS)}
EXIT_FAILED = 4


@dataclass
class GradCheck:
    error: float  # max relative error, training kernels against the SlangPy path
    parameters: int
    fd_error: float  # max relative error, the SlangPy path against central differences
    fd_parameters: int
    tolerance: float
    loss: float  # the batch's mean loss, both paths agreeing
    step: int
    precision: str
    reference_device: str = ""  # where the SlangPy path ran, when not on the trainer's device

    @property
    def passed(self) -> bool:
        return self.error <= self.tolerance and self.fd_error <= FD_TOLERANCE

    def line(self) -> str:
        return f"grad-check: max relative error {self.error:.3g} over {self.parameters:,} parameters"

    def detail(self) -> str:
        where = f" (run on {self.reference_device})" if self.reference_device else ""
        text = (
            f"training kernels against SlangPy's bwds{where} on {CHECK_BATCH} samples of step {self.step} "
            f"(tolerance {self.tolerance:g}); central differences agree within {self.fd_error:.3g} "
            f"on {self.fd_parameters} parameters (tolerance {FD_TOLERANCE:g})"
        )
        if self.precision == "half" and self.error > self.tolerance:
            text += (
                "; in half precision, once the outputs are within a few half ulps of the truth, half's "
                "rounding of the residuals dominates the training gradient"
            )
        return text

    def to_dict(self) -> dict:
        return {
            "max_relative_error": self.error,
            "parameters": self.parameters,
            "tolerance": self.tolerance,
            "finite_difference_error": self.fd_error,
            "finite_difference_parameters": self.fd_parameters,
            "finite_difference_tolerance": FD_TOLERANCE,
            "batch": CHECK_BATCH,
            "step": self.step,
            "reference_device": self.reference_device or None,
            "passed": self.passed,
        }


def relative_errors(gradient: np.ndarray, reference: np.ndarray, whole: np.ndarray | None = None) -> np.ndarray:
    """Each component's error relative to its reference, or to SCALE_FLOOR of the largest
    |reference| component where it is smaller; of `whole` when `reference` is a part of it."""
    scale = max(float(np.max(np.abs(reference if whole is None else whole))), 1e-30) * SCALE_FLOOR
    return np.abs(gradient - reference) / np.maximum(np.abs(reference), scale)


def regularization_gradient(plan: NetworkPlan, config, params: np.ndarray) -> np.ndarray:
    """The gradient of rate * sum |w| (L1) or rate * sum w^2 / 2 (L2) over every layer's
    weights (not its biases), float64."""
    gradient = np.zeros(plan.param_count)
    if config.regularization == "none":
        return gradient
    for layer in plan.layers:
        w = params[layer.offset : layer.bias_offset].astype(np.float64)
        gradient[layer.offset : layer.bias_offset] = config.reg_rate * (
            np.sign(w) if config.regularization == "l1" else w
        )
    return gradient


def check_batch(trainer: Trainer) -> int:
    return trainer.data.batch(CHECK_BATCH) if trainer.data is not None else CHECK_BATCH


def training_gradient(trainer: Trainer, step: int) -> np.ndarray:
    """The mean-loss gradient the training kernels compute for the first CHECK_BATCH samples
    of `step`'s batch, at the current parameters; the trainer is left as it was."""
    config, snapshot, saved_step = trainer.config, trainer.snapshot(), trainer.step
    before = trainer.parameters().astype(np.float64)
    try:
        trainer.apply(config.replace(optimizer="sgd", lr=PROBE_LR, beta1=0.0, batch_size=check_batch(trainer)))
        trainer.step = step
        trainer.train(1)
        after = trainer.parameters().astype(np.float64)
    finally:
        trainer.apply(config)
        trainer.restore(snapshot)
        trainer.step = saved_step
    return (before - after) / PROBE_LR


def _module_source(plan: NetworkPlan) -> str:
    constants = [
        f"static const float LEAKY_RELU_SLOPE = {LEAKY_RELU_SLOPE!r};",
        f"static const int MAX_FAN_IN = {max(plan.sizes[:-1])};",
        f"static const int MAX_OUTPUTS = {plan.output_dim};",
        f"static const int OUTPUT_DIM = {plan.output_dim};",
    ]
    constants += [f"static const int ACTIVATION_{name.upper()} = {k};" for name, k in ACTIVATION_IDS.items()]
    if plan.slang_truth is None:
        cases = "\n".join(f"    case {k}: return {target_to_slang(t)};" for k, t in enumerate(plan.targets))
        truth = f"float truthAt(float2 p, int k)\n{{\n    switch (k)\n    {{\n{cases}\n    default: return 0.0;\n    }}\n}}\n"
    else:
        truth = (
            f"float truthAt(float2 p, int k)\n{{\n    return {TARGET_NAMESPACE}::target(p, k);\n}}\n"
            + slang_target_block(plan.slang_truth.source)
        )
    return (
        "\n".join(constants)
        + """
#include "grad_check.slang"
#include "sampling.slang"
#include "targets.slang"

float2 batchPoint(int index, uint seed, uint step, float4 domain)
{
    return samplePoint(seed, step, uint(index), domain);
}

// A dataset's batch: the training point that sample `index` of a step starting at `offset` of
// epoch `epoch` takes (the generated drawSample's arithmetic, here in 64 bits for the position).
int batchRow(int index, uint seed, uint epoch, uint offset, uint count)
{
    uint position = offset + uint(index);
    return int(shuffledIndex(position % count, count, seed, epoch + position / count));
}
"""
        + truth
    )


@functools.lru_cache(maxsize=8)
def _module(device: spy.Device, source: str) -> spy.Module:
    import hashlib

    name = "grad_check_" + hashlib.sha1(source.encode()).hexdigest()[:16]
    return spy.Module.load_from_source(device, name, source)


class ReferenceUnavailable(UserError):
    """SlangPy's .bwds gives wrong gradients on this device and there is no other to use."""


def _bwds_works(module: spy.Module, device: spy.Device, outputs: int) -> bool:
    """SlangPy's .bwds through squaredError's loop against its closed form, 2 (output - truth):
    on NVIDIA's Vulkan driver (H200, SlangPy 0.43.1) backward passes through such loops put
    every gradient into element 0 (the symptom of slangpy#222); lavapipe and CUDA are right."""
    samples = 64
    values = np.linspace(-1.0, 1.0, samples * outputs, dtype=np.float32)
    out = spy.Tensor.from_numpy(device, values).with_grads(zero=True)
    truths = spy.Tensor.from_numpy(device, np.zeros_like(values))
    losses = module.squaredError(spy.grid((samples,)), out, truths, outputs, _result="tensor").with_grads()
    losses.grad.copy_from_numpy(np.ones(samples, np.float32))
    module.squaredError.bwds(spy.grid((samples,)), out, truths, outputs, _result=losses)
    return bool(np.allclose(out.grad.to_numpy(), 2.0 * values, rtol=1e-5, atol=1e-6))


@functools.lru_cache(maxsize=1)
def _cuda_device() -> spy.Device | None:
    try:
        return create_device("cuda")
    except UserError:
        return None


@functools.lru_cache(maxsize=8)  # one probe per device and network, not one per check
def _reference_device(gpu: Gpu, source: str, outputs: int) -> tuple[spy.Device, str]:
    """The trainer's device where SlangPy's .bwds is right there, else a CUDA device on the same
    machine (the path is independent of the trainer's device: it takes and returns numpy)."""
    if _bwds_works(_module(gpu.device, source), gpu.device, outputs):
        return gpu.device, ""
    cuda = _cuda_device()
    if cuda is not None and _bwds_works(_module(cuda, source), cuda, outputs):
        return cuda, f"CUDA: SlangPy's bwds is wrong on this {gpu.device.info.type.name} driver"
    raise ReferenceUnavailable(
        f"the gradient check cannot run here: SlangPy's bwds gives wrong gradients on "
        f"this {gpu.device.info.type.name} driver (slangpy#222) and no CUDA device works"
    )


class ReferencePath:
    """The network's loss and gradient through shaders/grad_check.slang, for one plan."""

    def __init__(self, gpu: Gpu, plan: NetworkPlan, samples: int = CHECK_BATCH):
        self.plan, self.samples = plan, samples
        self.loss_function = REFERENCE_LOSSES[plan.loss_name]
        source = _module_source(plan)
        self.device, self.device_note = _reference_device(gpu, source, plan.output_dim)
        self.module = _module(self.device, source)
        self.kinds = [ACTIVATION_IDS[layer.activation.name] for layer in plan.layers]
        self.image: dict | None = None  # an image target's Config.image (its pixels are the truth)

    def batch(self, seed: int, step: int, domain) -> tuple[np.ndarray, np.ndarray]:
        """The points and the truth of the first `samples` samples of `step` (formulas, images)."""
        points = self.module.batchPoint(spy.grid((self.samples,)), seed, step, spy.float4(*domain), _result="numpy")
        points = np.ascontiguousarray(points.reshape(-1, 2), np.float32)
        if self.plan.image is not None:  # an image's truth: its numpy twin (app/image_truth.py)
            truths = image_truth.sample(image_truth.pixels_of(self.image), domain, points[:, 0], points[:, 1])
        else:
            truths = np.stack(
                [self.module.truthAt(points, k, _result="numpy") for k in range(self.plan.output_dim)], axis=1
            )
        self.units = grid_units(domain, points[:, 0], points[:, 1])
        return points, np.ascontiguousarray(truths, np.float32)

    def dataset_batch(self, trainer: Trainer) -> tuple[np.ndarray, np.ndarray]:
        """The points and the truth of the trainer's next `samples` training points."""
        data, position = trainer.data, trainer.data_position
        count = data.train_count
        epoch, offset = (position // count) % (1 << 32), position % count
        rows = self.module.batchRow(
            spy.grid((self.samples,)), trainer.config.seed, epoch, offset, count, _result="numpy"
        )
        points = np.ascontiguousarray(np.stack([data.dataset.x[rows], data.dataset.y[rows]], axis=1), np.float32)
        self.units = grid_units(trainer.config.domain, points[:, 0], points[:, 1])
        return points, np.ascontiguousarray(data.dataset.truth[rows], np.float32)

    def inputs(self, params: np.ndarray, points: np.ndarray) -> np.ndarray:
        """The encoded points (a grid's, from the tables in `params`), as the network sees them."""
        x, y = points[:, 0].astype(np.float64), points[:, 1].astype(np.float64)
        if self.plan.grid is not None:
            inputs = self.plan.grid.encode(self.units, self.plan.tables(params)).astype(np.float32)
        else:
            inputs = self.plan.encoding.numpy(x, y, self.plan.encoding_setting).astype(np.float32)
        if self.plan.precision == "half":  # the training network sees its input in half
            inputs = inputs.astype(np.float16).astype(np.float32)
        return np.ascontiguousarray(inputs)

    def _tensor(self, values: np.ndarray, grads: bool = False) -> spy.Tensor:
        tensor = spy.Tensor.from_numpy(self.device, np.ascontiguousarray(values, np.float32).ravel())
        return tensor.with_grads(zero=True) if grads else tensor

    def _forward(self, params: np.ndarray, inputs: np.ndarray, truths: spy.Tensor, grads: bool):
        """The layers' tensors (W, b), the activations from the input on, and the per-sample losses."""
        layers = [
            (self._tensor(layer.weights(params), grads), self._tensor(layer.biases(params), grads))
            for layer in self.plan.layers
        ]
        # On Vulkan, SlangPy binds an IDiffTensor in .bwds only with a gradient attached: the input too.
        activations = [self._tensor(inputs, grads)]
        for (w, b), layer, kind in zip(layers, self.plan.layers, self.kinds):
            out = self.module.neuron(
                spy.grid((self.samples * layer.fan_out,)),
                w,
                b,
                activations[-1],
                layer.fan_in,
                layer.fan_out,
                kind,
                _result="tensor",
            )
            activations.append(out.with_grads(zero=True) if grads else out)
        losses = getattr(self.module, self.loss_function)(
            spy.grid((self.samples,)), activations[-1], truths, self.plan.output_dim, _result="tensor"
        )
        return layers, activations, losses

    def loss(self, params: np.ndarray, points: np.ndarray, truths: np.ndarray) -> float:
        _, _, losses = self._forward(params, self.inputs(params, points), self._tensor(truths), False)
        return float(np.mean(losses.to_numpy(), dtype=np.float64))

    def gradient(self, params: np.ndarray, points: np.ndarray, truths: np.ndarray) -> tuple[float, np.ndarray]:
        """The mean loss and its gradient, flat in the plan's layout, by .bwds call by call."""
        t = self._tensor(truths)
        layers, activations, losses = self._forward(params, self.inputs(params, points), t, True)
        losses = losses.with_grads()
        losses.grad.copy_from_numpy(np.full(self.samples, 1.0 / self.samples, np.float32))
        getattr(self.module, self.loss_function).bwds(
            spy.grid((self.samples,)), activations[-1], t, self.plan.output_dim, _result=losses
        )
        for k in reversed(range(len(layers))):
            (w, b), layer = layers[k], self.plan.layers[k]
            self.module.neuron.bwds(
                spy.grid((self.samples * layer.fan_out,)),
                w,
                b,
                activations[k],
                layer.fan_in,
                layer.fan_out,
                self.kinds[k],
                _result=activations[k + 1],
            )
        parts = [np.concatenate([w.grad.to_numpy(), b.grad.to_numpy()]) for w, b in layers]
        if self.plan.grid is not None:  # the input's gradient, scattered into the tables
            d_inputs = activations[0].grad.to_numpy().reshape(self.samples, self.plan.input_dim)
            parts.append(self.plan.grid.table_gradient(self.units, d_inputs))
        gradient = np.concatenate([part.astype(np.float64) for part in parts])
        return float(np.mean(losses.to_numpy(), dtype=np.float64)), gradient


def _finite_differences(
    path: ReferencePath, params: np.ndarray, reference: np.ndarray, points: np.ndarray, truths: np.ndarray
) -> tuple[float, int]:
    """Max relative error of `reference` against central differences of the path's loss, for
    each layer's weight and bias with the largest |reference|, and a grid's largest table value's."""
    ranges = [
        r for layer in path.plan.layers for r in ((layer.offset, layer.bias_offset), (layer.bias_offset, layer.end))
    ]
    if path.plan.grid is not None:
        ranges.append((path.plan.mlp_param_count, path.plan.param_count))
    chosen = []
    for first, end in ranges:
        chosen.append(first + int(np.argmax(np.abs(reference[first:end]))))
    numeric = np.zeros(len(chosen))
    for n, index in enumerate(chosen):
        h = 1e-3 * max(1.0, abs(float(params[index])))
        plus, minus = params.copy(), params.copy()
        plus[index] += h
        minus[index] -= h
        h = float(plus[index]) - float(minus[index])  # the step float32 really took
        numeric[n] = (path.loss(plus, points, truths) - path.loss(minus, points, truths)) / h
    return float(np.max(relative_errors(numeric, reference[chosen], whole=reference))), len(chosen)


def run(trainer: Trainer, step: int | None = None) -> GradCheck:
    """Checks the current network's gradient on the first CHECK_BATCH samples of `step`'s batch
    (the trainer's next step by default). Call between steps."""
    if trainer.progress.started:
        raise RuntimeError("the gradient check runs between steps")
    step = trainer.step if step is None else step
    plan, config = trainer.plan, trainer.config
    masters = params = trainer.parameters()
    if plan.precision == "half":
        params = params.astype(np.float16).astype(np.float32)
    path = ReferencePath(trainer.gpu, plan, check_batch(trainer))
    path.image = config.image
    if trainer.data is None:
        points, truths = path.batch(config.seed, step, config.domain)
    else:
        points, truths = path.dataset_batch(trainer)
    loss, reference = path.gradient(params, points, truths)
    gradient = training_gradient(trainer, step)
    fd_error, fd_count = _finite_differences(path, params, reference, points, truths)
    reference = reference + regularization_gradient(plan, config, masters)
    return GradCheck(
        error=float(np.max(relative_errors(gradient, reference))),
        parameters=plan.param_count,
        fd_error=fd_error,
        fd_parameters=fd_count,
        tolerance=TOLERANCE[plan.precision],
        loss=loss,
        step=step,
        precision=plan.precision,
        reference_device=path.device_note,
    )
