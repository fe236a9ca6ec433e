"""The gradient check: the parameter gradient the training kernels compute (read exactly, through one
SGD step of PROBE_LR, the trainer then put back), against an independent SlangPy path on the same
fixed batch (grad_reference.py), and that path against float64 central differences of the numpy
twins; a nested loss against its own twin (nested_loss.py). How, and why each tolerance:
docs/architecture.md, 'The gradient check'."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..errors import UserError
from ..kernels.plan import NetworkPlan
from ..kernels.planning import plan_for
from ..model.derivative_loss import derivatives_on
from ..train.trainer import Trainer
from ..truth.mesh_truth import load_mesh_field
from ..truth.space import depth_range
from .finite_difference import kink_free_central_difference
from .grad_reference import CHECK_BATCH, ReferencePath
from .nested_loss import NO_NUMPY_TRUTH, central_difference, chosen_parameters, nested_batch, nested_loss
from .sample_twin import mesh_samples, sample_points, sample_points_3d, with_boundary

# An SGD step of 2^24 moves each parameter by -2^24 g, which float32 holds to ~1e-7 of g however
# small g is next to the parameter (at a rate of 1, a gradient 1e-4 of its parameter keeps 3 digits).
PROBE_LR = float(2**24)
# Ten times the error trained networks reach in each precision (docs/architecture.md, 'The gradient
# check'), far below what a wrong derivative, layer or term does.
TOLERANCE = {"float": 1e-2, "half": 5e-2}
FD_TOLERANCE = 1e-2
FD_STEP = 1e-6  # relative to max(1, |w|); float64 differences: truncation and rounding far below 1e-2
FD_SMALLEST_STEP = 1e-9  # where float64 rounding, ~1e-16 * loss / h, is still ~1e-7 of the loss
SCALE_FLOOR = 1e-2  # components below this share of the largest are compared at it, above float noise
NESTED_PARAMETERS = 1024  # the most parameters the nested loss's central differences take


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
    nested: str = ""  # the nested loss's terms, where the check compared it with central differences

    @property
    def passed(self) -> bool:
        if self.nested:  # one comparison: the training kernels against the differences
            return self.error <= self.tolerance
        return self.error <= self.tolerance and self.fd_error <= FD_TOLERANCE

    def line(self) -> str:
        count = f"{self.parameters:,}"
        if self.nested and self.fd_parameters < self.parameters:  # a large network's differences take a share
            count = f"{self.fd_parameters:,} of {self.parameters:,}"
        return f"grad-check: max relative error {self.error:.3g} over {count} parameters"

    def detail(self) -> str:
        if self.nested:
            return (
                f"training kernels' gradient of the whole loss ({self.nested}) against float64 central "
                f"differences of numpy's nested loss on {CHECK_BATCH} samples of step {self.step} "
                f"(tolerance {self.tolerance:g})"
            )
        where = f" (run on {self.reference_device})" if self.reference_device else ""
        text = (
            f"training kernels against SlangPy's bwds{where} on {CHECK_BATCH} samples of step {self.step} "
            f"(tolerance {self.tolerance:g}); float64 central differences agree within {self.fd_error:.3g} "
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
            "nested_loss": self.nested or None,
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


def numpy_loss(path: ReferencePath, params: np.ndarray, inputs: np.ndarray | None, truths: np.ndarray):
    """The batch's mean loss in float64 through the app's numpy twins of the network's parts
    (encodings and grids, activations, losses), and which side of its kink each ReLU-family
    pre-activation is on. `inputs` are the encoded points, or None for a grid, which encodes
    them here from the tables in `params`."""
    plan = path.plan
    h = plan.grid.encode(path.units, plan.tables(params)) if inputs is None else inputs
    sides = []
    for layer in plan.layers:
        z = h @ layer.weights(params).T + layer.biases(params)
        if layer.activation.relu_like:
            sides.append(z > 0)
        h = layer.activation.numpy(z, **layer.activation.params)
    return float(np.mean(plan.loss.numpy(h, truths.astype(np.float64)))), sides


def _central_difference(path: ReferencePath, params: np.ndarray, index: int, inputs, truths, sides) -> float:
    """d loss / d params[index] by central differences of numpy_loss, with a step that carries
    no sample across a kink; `sides` are numpy_loss's at `params`."""
    loss = functools.partial(numpy_loss, path, inputs=inputs, truths=truths)
    return kink_free_central_difference(loss, params, index, sides, FD_STEP, FD_SMALLEST_STEP)


def _finite_differences(
    path: ReferencePath, params: np.ndarray, reference: np.ndarray, points: np.ndarray, truths: np.ndarray
) -> tuple[float, int]:
    """Max relative error of `reference` against central differences of the float64 numpy loss,
    for each layer's weight and bias with the largest |reference|, and a grid's largest table value's."""
    ranges = [
        r for layer in path.plan.layers for r in ((layer.offset, layer.bias_offset), (layer.bias_offset, layer.end))
    ]
    if path.plan.grid is not None:
        ranges.append((path.plan.mlp_param_count, path.plan.param_count))
    chosen = [first + int(np.argmax(np.abs(reference[first:end]))) for first, end in ranges]
    params = params.astype(np.float64)
    inputs = None if path.plan.grid is not None else path.inputs(params, points).astype(np.float64)
    _, sides = numpy_loss(path, params, inputs, truths)  # once: every difference starts from here
    numeric = [_central_difference(path, params, index, inputs, truths, sides) for index in chosen]
    return float(np.max(relative_errors(np.array(numeric), reference[chosen], whole=reference))), len(chosen)


def check_checkable(config) -> None:
    """Refuses, before anything trains, a check that has no reference: the nested loss's twin needs
    the truth in numpy, which a Slang file's target has not (nested_loss.nested_batch says so too)."""
    if derivatives_on(config.loss_settings) and plan_for(config).slang_truth is not None:
        raise UserError(NO_NUMPY_TRUTH)


def check_points(plan: NetworkPlan, config, step: int) -> np.ndarray:
    """The first CHECK_BATCH points of `step` as the kernels draw them (sample_twin.py): (x, y), or
    (x, y, z) for a function of (x, y, z), a mesh's half of them near its surface."""
    if plan.point_dim != 3:
        return sample_points(config.seed, step, CHECK_BATCH, config.domain)
    if plan.mesh is not None:
        field = load_mesh_field(plan.mesh.spec, (*config.domain, *config.z_range))
        return mesh_samples(config.seed, step, CHECK_BATCH, config.domain, config.z_range, field).astype(np.float32)
    return sample_points_3d(config.seed, step, CHECK_BATCH, config.domain, config.z_range)


def run(trainer: Trainer, step: int | None = None) -> GradCheck:
    """Checks the current network's gradient on the first CHECK_BATCH samples of `step`'s batch
    (the trainer's next step by default). Call between steps."""
    if trainer.progress.started:
        raise RuntimeError("the gradient check runs between steps")
    step = trainer.step if step is None else step
    plan, config = trainer.plan, trainer.config
    check_checkable(config)
    masters = params = trainer.parameters()
    if plan.precision == "half":
        params = params.astype(np.float16).astype(np.float32)
    if derivatives_on(config.loss_settings):  # numpy alone: its twin of the nested loss, at the kernels' samples
        return _nested_check(trainer, params, check_points(plan, config, step), step)
    path = ReferencePath(trainer.gpu, plan, check_batch(trainer))
    path.image = config.image
    if trainer.data is None:
        points, truths = path.batch(config.seed, step, config.domain, depth_range(config.truth_settings))
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


def _nested_terms(config) -> str:
    terms = ["value"]
    if config.grad_weight > 0:
        terms.append(f"{config.grad_weight:g} x Sobolev")
    if config.eikonal > 0:
        terms.append(f"{config.eikonal:g} x eikonal")
    if config.normal_weight > 0:
        terms.append(f"{config.normal_weight:g} x normal alignment")
    return " + ".join(terms)


def _nested_check(trainer: Trainer, params: np.ndarray, points: np.ndarray, step: int):
    """The training kernels' gradient of the nested loss against central differences of its
    float64 numpy twin (app/check/nested_loss.py) at `params`, the weights the kernels use."""
    plan, config = trainer.plan, trainer.config
    batch = nested_batch(plan, config, *with_boundary(plan, config, points, step))
    params = params.astype(np.float64)
    loss, sides = nested_loss(plan, params, batch)
    gradient = training_gradient(trainer, step)
    chosen = chosen_parameters(plan, gradient, NESTED_PARAMETERS)
    numeric = np.array(
        [central_difference(plan, params, int(i), batch, sides, FD_STEP, FD_SMALLEST_STEP) for i in chosen]
    )
    reference = numeric + regularization_gradient(plan, config, trainer.parameters())[chosen]
    error = float(np.max(relative_errors(gradient[chosen], reference)))
    return GradCheck(
        error=error, parameters=plan.param_count, fd_error=error, fd_parameters=len(chosen),
        tolerance=TOLERANCE[plan.precision], loss=loss, step=step, precision=plan.precision,
        reference_device="", nested=_nested_terms(config),
    )  # fmt: skip
