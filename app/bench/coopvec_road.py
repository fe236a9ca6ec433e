"""One cooperative-vector road to training 2-64-64-64-4 in half precision (app/bench/roads.py
measures them): its buffers and kernels (shaders/bench/bench_roads.slang), the float64 numpy reference
its gradients are checked against, and the check."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import slangpy as spy

from ..resources import shader_dir

LAYERS = ((16, 64), (64, 64), (64, 64), (64, 16))  # (In, Out), padded as the shader pads them
W_AT = (0, 1088, 5248, 9408)  # elements: as shaders/bench/bench_roads.slang's W0..W3, B0..B3
B_AT = (1024, 5184, 9344, 10432)
COUNT = 10448
REAL_IN, REAL_OUT = 2, 4
STORE_HALVES = 416  # a sample's X, H1-3, dZ1-3, dY in the stored road
CHECK_BATCH = 4096
CHECK_TOLERANCE = 0.03
STEPS_PER_SUBMIT = 64
USAGE = spy.BufferUsage.shader_resource | spy.BufferUsage.unordered_access
ROW_MAJOR, TRAINING_OPTIMAL = spy.CoopVecMatrixLayout.row_major, spy.CoopVecMatrixLayout.training_optimal
SLOPE = 0.01


def initial_parameters(seed: int = 0) -> np.ndarray:
    """He-uniform weights on the real rows and columns, zeros in the padding and the biases."""
    rng = np.random.default_rng(seed)
    params = np.zeros(COUNT, np.float32)
    for layer, ((fan_in, fan_out), at) in enumerate(zip(LAYERS, W_AT)):
        real_in = REAL_IN if layer == 0 else fan_in
        real_out = REAL_OUT if layer == len(LAYERS) - 1 else fan_out
        w = np.zeros((fan_out, fan_in), np.float32)
        bound = np.sqrt(6.0 / real_in)
        w[:real_out, :real_in] = rng.uniform(-bound, bound, (real_out, real_in))
        params[at : at + w.size] = w.ravel()
    return params


def reference_gradients(params: np.ndarray, points: np.ndarray) -> np.ndarray:
    """The shader's gradients (sums over the batch, dY = 2 (y - t) / 4) in float64 numpy."""
    p = params.astype(np.float64)
    weights = [p[at : at + i * o].reshape(o, i) for (i, o), at in zip(LAYERS, W_AT)]
    biases = [p[at : at + o] for (_, o), at in zip(LAYERS, B_AT)]
    x = np.zeros((len(points), 16))
    x[:, :2] = points
    acts = [x]
    for k in range(3):
        z = acts[-1] @ weights[k].T + biases[k]
        acts.append(np.where(z > 0, z, SLOPE * z))
    y = acts[-1] @ weights[3].T + biases[3]
    px, py = points[:, 0].astype(np.float64), points[:, 1].astype(np.float64)
    truth = np.stack([(px + py) / (1 + py * py), 2 * px + py, 0.5 * px * px + 1.2 * py, px + 0.5 * py * py], 1)
    dz = np.zeros_like(y)
    dz[:, :4] = 2 * (y[:, :4] - truth) / 4
    grads = np.zeros(COUNT)
    for k in (3, 2, 1, 0):
        (i, o), at, bt = LAYERS[k], W_AT[k], B_AT[k]
        grads[at : at + i * o] = (dz.T @ acts[k]).ravel()
        grads[bt : bt + o] = dz.sum(0)
        if k:
            dz = (dz @ weights[k]) * np.where(acts[k] > 0, 1.0, SLOPE)
    return grads


@dataclass(frozen=True)
class MatrixSet:
    """The four weight matrices (or their gradients) in two layouts: row-major where the
    parameters (or gradients) keep them, and training-optimal in a buffer of their own."""

    row: list  # descriptors into the row-major parameters
    optimal_descs: list
    offsets: tuple[int, ...]  # bytes: each matrix in `optimal`
    optimal: spy.Buffer


def matrix_set(device: spy.Device, data_type: spy.DataType) -> MatrixSet:
    item = 4 if data_type == spy.DataType.float32 else 2
    row, descs, offsets, offset = [], [], [], 0
    for (fan_in, fan_out), at in zip(LAYERS, W_AT):
        row.append(device.create_coop_vec_matrix_desc(fan_out, fan_in, ROW_MAJOR, data_type, at * item))
        desc = device.create_coop_vec_matrix_desc(fan_out, fan_in, TRAINING_OPTIMAL, data_type, offset)
        descs.append(desc)
        offsets.append(offset)
        offset += -(-desc.size // 64) * 64  # each matrix 64-byte aligned
    return MatrixSet(row, descs, tuple(offsets), device.create_buffer(size=offset, usage=USAGE))


def road_module(device: spy.Device, grad_type: str) -> spy.SlangModule:
    """shaders/bench/bench_roads.slang with its gradients' type, "float" or "half"."""
    component = "Float32" if grad_type == "float" else "Float16"
    prefix = (
        f"typealias GradT = {grad_type};\n"
        f"static const CoopVecComponentType GRAD_TYPE = CoopVecComponentType.{component};\n"
    )
    source = prefix + (shader_dir() / "bench" / "bench_roads.slang").read_text()
    return device.load_module_from_source(f"bench_roads_{grad_type}", source)


class CoopVecRoad:
    """One road's buffers and kernels for one batch size."""

    def __init__(self, device: spy.Device, road: str, batch: int, grad_type: str):
        # The stored road's partial products: about 512 workgroups' worth (the H200 has 132 SMs),
        # each over 128 to 2048 samples.
        self.chunk = min(2048, max(128, batch // 512))
        if batch % self.chunk and road == "stored":
            raise ValueError(f"the stored road needs a batch that is a multiple of {self.chunk}")
        self.device, self.road, self.batch = device, road, batch
        self.grad_dtype = np.float32 if grad_type == "float" else np.float16
        module = road_module(device, grad_type)

        def kernel(name: str) -> spy.ComputeKernel:
            return device.create_compute_kernel(device.link_program([module], [module.entry_point(name)]))

        self.learn = kernel("roadLearnAtomic" if road == "atomic" else "roadLearnStored")
        self.adam = kernel("roadAdam")
        # The weights as the products read them; for the atomic road, its gradients' sums too
        self.weight_set = matrix_set(device, spy.DataType.float16)
        self.grad_set = matrix_set(device, spy.DataType.float32 if grad_type == "float" else spy.DataType.float16)
        params = initial_parameters()
        self.params = device.create_buffer(data=params, usage=USAGE)
        self.half_params = device.create_buffer(data=params.astype(np.float16), usage=USAGE)
        self.moments = device.create_buffer(data=np.zeros(2 * COUNT, np.float32), usage=USAGE)
        self.grads = device.create_buffer(size=COUNT * self.grad_dtype().itemsize, usage=USAGE)
        rng = np.random.default_rng(1)
        self.points_host = rng.uniform(-1, 1, (batch, 2)).astype(np.float32)
        self.points = device.create_buffer(data=self.points_host, usage=USAGE)
        if road == "stored":
            self.weight_gradient, self.sum_partials = kernel("roadWeightGradient"), kernel("roadSumPartials")
            self.store = device.create_buffer(size=batch * STORE_HALVES * 2, usage=USAGE)
            self.ones = device.create_buffer(data=np.ones(256, np.float16), usage=USAGE)
            groups = batch // self.chunk
            partial_floats = groups * sum(o * (i + 16) for i, o in LAYERS)
            self.partials = device.create_buffer(size=partial_floats * 4, usage=USAGE)

    def record_learn(self, encoder: spy.CommandEncoder) -> None:
        """The weights into the training-optimal layout and the per-sample kernel (for the atomic
        road, with its gradients cleared first)."""
        encoder.convert_coop_vec_matrices(
            self.weight_set.optimal, self.weight_set.optimal_descs, self.half_params, self.weight_set.row
        )
        if self.road == "atomic":
            encoder.clear_buffer(self.grad_set.optimal)
            encoder.clear_buffer(self.grads)
        encoder.global_barrier()
        args = dict(
            points=self.points.device_address, batch=self.batch, matrixOffsets=spy.uint4(*self.weight_set.offsets)
        )
        buffers = (
            dict(g=self.grad_set.optimal, gRowMajor=self.grads) if self.road == "atomic" else dict(store=self.store)
        )
        self.learn.dispatch(
            [self.batch, 1, 1],
            command_encoder=encoder,
            a=args,
            w=self.weight_set.optimal,
            p=self.half_params,
            **buffers,
        )
        encoder.global_barrier()

    def record_weight_gradients(self, encoder: spy.CommandEncoder) -> None:
        """The gradients into `self.grads`, row-major: converted back from the training-optimal
        layout (atomic), or multiplied from the stored samples and summed (stored)."""
        if self.road == "atomic":
            grads = self.grad_set
            encoder.convert_coop_vec_matrices(self.grads, grads.row, grads.optimal, grads.optimal_descs)
            encoder.global_barrier()
            return
        grad_args = dict(
            store=self.store.device_address,
            ones=self.ones.device_address,
            partials=self.partials.device_address,
            batch=self.batch,
            chunk=self.chunk,
        )
        for layer in range(4):
            self.weight_gradient.dispatch(
                [self.batch // self.chunk * 128, 1, 1], command_encoder=encoder, a=grad_args, layer=layer
            )
        encoder.global_barrier()
        elements = sum(o * (i + 16) for i, o in LAYERS)
        self.sum_partials.dispatch(
            [elements, 1, 1],
            command_encoder=encoder,
            partials=self.partials.device_address,
            grads=self.grads.device_address,
            batch=self.batch,
            chunk=self.chunk,
        )
        encoder.global_barrier()

    def record_gradients(self, encoder: spy.CommandEncoder) -> None:
        self.record_learn(encoder)
        self.record_weight_gradients(encoder)

    def record_step(self, encoder: spy.CommandEncoder, step: int, part: str = "step") -> None:
        """A whole training step, or one part of it for the breakdown: "learn" (record_learn) or
        "weight_gradients" (record_weight_gradients)."""
        if part == "learn":
            self.record_learn(encoder)
            return
        if part == "weight_gradients":
            self.record_weight_gradients(encoder)
            return
        self.record_gradients(encoder)
        self.adam.dispatch(
            [COUNT, 1, 1],
            command_encoder=encoder,
            params=self.params.device_address,
            halfParams=self.half_params.device_address,
            grads=self.grads.device_address,
            moments=self.moments.device_address,
            count=COUNT,
            invBatch=1.0 / self.batch,
            lr=0.01,
            step=step,
        )
        encoder.global_barrier()

    def gradients(self) -> np.ndarray:
        encoder = self.device.create_command_encoder()
        self.record_gradients(encoder)
        self.device.submit_command_buffer(encoder.finish())
        self.device.wait()
        return self.grads.to_numpy().view(self.grad_dtype).astype(np.float64)[:COUNT]

    def half_weights(self) -> np.ndarray:
        return self.half_params.to_numpy().view(np.float16).astype(np.float64)[:COUNT]

    def time(self, steps: int, part: str = "step") -> float:
        self.device.wait()
        start = time.perf_counter()
        done = 0
        while done < steps:
            encoder = self.device.create_command_encoder()
            for _ in range(min(STEPS_PER_SUBMIT, steps - done)):
                self.record_step(encoder, done, part)
                done += 1
            self.device.submit_command_buffer(encoder.finish())
        self.device.wait()
        return time.perf_counter() - start


def check(device: spy.Device, road: str, grad_type: str) -> dict:
    """One batch's gradients against numpy; the stored road's also against a second run."""
    first = CoopVecRoad(device, road, CHECK_BATCH, grad_type)
    got = first.gradients()
    want = reference_gradients(first.half_weights(), first.points_host.astype(np.float64))
    errors = [
        float(np.linalg.norm(got[at : at + i * o] - want[at : at + i * o]) / np.linalg.norm(want[at : at + i * o]))
        for (i, o), at in zip(LAYERS, W_AT)
    ]
    result = {"relative_error_per_layer": errors}
    if road == "stored":
        again = CoopVecRoad(device, road, CHECK_BATCH, grad_type).gradients()
        result["bit_identical_rerun"] = bool(np.array_equal(got, again))
    return result
