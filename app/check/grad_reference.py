"""The gradient check's independent path: the network's loss and parameter gradient on a fixed batch
through SlangPy's function-call API (shaders/check/grad_check.slang, one vectorised call a layer,
`.bwds` chained back from the loss), sharing no code with the training kernels; a grid's tables
get numpy's scatter of the first layer's input gradient. Where `.bwds` is wrong on the trainer's
device (slangpy#222) it runs on the same GPU through CUDA (docs/architecture.md, 'The gradient check')."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np
import slangpy as spy

from ..errors import UserError
from ..gpu.device import create_device
from ..gpu.gpu import Gpu
from ..kernels.plan import NetworkPlan
from ..model.activations import ACTIVATIONS, LEAKY_RELU_SLOPE
from ..model.hashgrid import grid_units
from ..truth.mesh_truth import load_mesh_field, trilinear
from ..truth.slang_file import TARGET_NAMESPACE, slang_target_block
from ..truth.targets import target_to_slang
from .sample_twin import mesh_samples
from .truth_twin import numpy_truth

if TYPE_CHECKING:
    from ..train.trainer import Trainer

CHECK_BATCH = 256  # samples, or a dataset's training points where it has fewer
REFERENCE_LOSSES = {"squared": "squaredError", "logistic": "logisticLoss", "softmax": "softmaxLoss"}
ACTIVATION_IDS = {name: k for k, name in enumerate(ACTIVATIONS)}


def _module_source(plan: NetworkPlan) -> str:
    constants = [
        f"static const float LEAKY_RELU_SLOPE = {LEAKY_RELU_SLOPE!r};",
        f"static const int MAX_FAN_IN = {max(plan.sizes[:-1])};",
        f"static const int MAX_OUTPUTS = {plan.output_dim};",
        f"static const int OUTPUT_DIM = {plan.output_dim};",
    ]
    constants += [f"static const int ACTIVATION_{name.upper()} = {k};" for name, k in ACTIVATION_IDS.items()]
    point = "float2" if plan.point_dim == 2 else "float3"
    if plan.slang_truth is None:
        slang = [target_to_slang(t, plan.point_dim) for t in plan.targets]
        cases = "\n".join(f"    case {k}: return {value};" for k, value in enumerate(slang))
        truth = f"float truthAt({point} p, int k)\n{{\n    switch (k)\n    {{\n{cases}\n    default: return 0.0;\n    }}\n}}\n"
    else:
        truth = (
            f"float truthAt({point} p, int k)\n{{\n    return {TARGET_NAMESPACE}::target(p, k);\n}}\n"
            + slang_target_block(plan.slang_truth.source)
        )
    if plan.point_dim == 3:  # sampling.slang's samplePoint3, the 3D kernels' sampler
        constants.append("#define POINT_3D 1")
        truth += """
float3 batchPoint3(int index, uint seed, uint step, float4 domain, float2 zRange)
{
    return samplePoint3(seed, step, uint(index), domain, zRange);
}
"""
    return (
        "\n".join(constants)
        + """
#include "check/grad_check.slang"
#include "truth/sampling.slang"
#include "truth/targets.slang"

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
def _cuda_device(uuid: str | None) -> spy.Device | None:
    """A CUDA device on the trainer's GPU, the adapter of UUID `uuid` (NVIDIA's Vulkan driver and
    CUDA give a GPU the same UUID), so that a check runs on the GPU the run was given; CUDA's
    choice where the trainer's adapter is unknown."""
    try:
        return create_device("cuda", gpu=uuid)
    except UserError:
        return None


@functools.lru_cache(maxsize=8)  # one probe per device and network, not one per check
def _reference_device(gpu: Gpu, source: str, outputs: int) -> tuple[spy.Device, str]:
    """The trainer's device where SlangPy's .bwds is right there, else a CUDA device on the same
    GPU (the path is independent of the trainer's device: it takes and returns numpy)."""
    if _bwds_works(_module(gpu.device, source), gpu.device, outputs):
        return gpu.device, ""
    cuda = _cuda_device(gpu.adapter.uuid if gpu.adapter is not None else None)
    if cuda is not None and _bwds_works(_module(cuda, source), cuda, outputs):
        return cuda, f"CUDA: SlangPy's bwds is wrong on this {gpu.device.info.type.name} driver"
    raise ReferenceUnavailable(
        f"the gradient check cannot run here: SlangPy's bwds gives wrong gradients on "
        f"this {gpu.device.info.type.name} driver (slangpy#222) and no CUDA device works"
    )


class ReferencePath:
    """The network's loss and gradient through shaders/check/grad_check.slang, for one plan."""

    def __init__(self, gpu: Gpu, plan: NetworkPlan, samples: int = CHECK_BATCH):
        self.plan, self.samples = plan, samples
        self.loss_function = REFERENCE_LOSSES[plan.loss_name]
        source = _module_source(plan)
        self.device, self.device_note = _reference_device(gpu, source, plan.output_dim)
        self.module = _module(self.device, source)
        self.kinds = [ACTIVATION_IDS[layer.activation.name] for layer in plan.layers]
        self.image: dict | None = None  # an image target's Config.image (its pixels are the truth)

    def batch(self, seed: int, step: int, domain, z_range=None) -> tuple[np.ndarray, np.ndarray]:
        """The points and the truth of the first `samples` samples of `step` (formulas, images, shapes);
        with a z_range, points (x, y, z) of a function of (x, y, z)."""
        if z_range is not None:
            return self._batch_3d(seed, step, domain, z_range)
        points = self.module.batchPoint(spy.grid((self.samples,)), seed, step, spy.float4(*domain), _result="numpy")
        points = np.ascontiguousarray(points.reshape(-1, 2), np.float32)
        if self.plan.image is not None or self.plan.sdf is not None:  # their numpy twins (a grid's bilinear read)
            truths = numpy_truth(self.plan, domain, self.image)(points[:, 0], points[:, 1])
        else:
            truths = np.stack(
                [self.module.truthAt(points, k, _result="numpy") for k in range(self.plan.output_dim)], axis=1
            )
        self.units = grid_units(domain, points[:, 0], points[:, 1])
        return points, np.ascontiguousarray(truths, np.float32)

    def _batch_3d(self, seed: int, step: int, domain, z_range) -> tuple[np.ndarray, np.ndarray]:
        box = [*domain, *z_range]
        if self.plan.mesh is not None:  # its samples and trilinear truth by their numpy twins
            field = load_mesh_field(self.plan.mesh.spec, tuple(float(v) for v in box))
            points = mesh_samples(seed, step, self.samples, domain, z_range, field).astype(np.float32)
            self.units = grid_units(box, points[:, 0], points[:, 1], points[:, 2])
            return points, trilinear(field.distance, field.box, points.astype(np.float64))[:, None].astype(np.float32)
        grid, bounds = spy.grid((self.samples,)), (spy.float4(*domain), spy.float2(*z_range))
        points = self.module.batchPoint3(grid, seed, step, *bounds, _result="numpy")
        points = np.ascontiguousarray(points.reshape(-1, 3), np.float32)
        truths = [self.module.truthAt(points, k, _result="numpy") for k in range(self.plan.output_dim)]
        self.units = grid_units([*domain, *z_range], points[:, 0], points[:, 1], points[:, 2])
        return points, np.ascontiguousarray(np.stack(truths, axis=1), np.float32)

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
        z = points[:, 2].astype(np.float64) if points.shape[1] == 3 else None  # a function of (x, y, z)
        if self.plan.grid is not None:
            inputs = self.plan.grid.encode(self.units, self.plan.tables(params)).astype(np.float32)
        else:
            inputs = self.plan.encoding.numpy(x, y, self.plan.encoding_setting, z=z).astype(np.float32)
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
