"""GPU training state for one architecture: parameters, optimizer moments, gradient slots,
and the recording of training and evaluation kernels into command encoders. No UI here."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import slangpy as spy

from app.config import Config, STRUCTURAL_FIELDS
from app.kernels import NetworkKernels, kernels_for, wave_width
from app.shadergen import layer_offsets, train_group_size, uses_thread_accumulators

# Launch shape (measured on an H200, 4-16-4): one sample per thread up to 4,096 samples, then
# at least 4 per thread, and at most 32,768 threads. More samples per thread amortise each
# thread's final wave sum of its gradients; fewer threads than this starve the GPU.
MIN_PARALLEL_THREADS = 4096
MIN_SAMPLES_PER_THREAD = 4
MAX_TRAIN_THREADS = 32768
SLOT_MEMORY_BYTES = 256 << 20
REDUCE_GROUPS_PER_ROW = 32768
LOSS_HISTORY = 8192        # ring of per-step losses on the GPU, read back after each submit
_USAGE = spy.BufferUsage.unordered_access | spy.BufferUsage.shader_resource | spy.BufferUsage.copy_source | spy.BufferUsage.copy_destination


def initial_parameters(config: Config) -> np.ndarray:
    """He-uniform weights for ReLU-like activations, Glorot-uniform otherwise; zero biases."""
    rng = np.random.default_rng(config.seed)
    sizes, params = config.layer_sizes, np.zeros(config.param_count, np.float32)
    for k, offset in enumerate(layer_offsets(config)):
        fan_in, fan_out = sizes[k], sizes[k + 1]
        act = config.output_activation if k == len(sizes) - 2 else config.activation
        limit = math.sqrt(6.0 / fan_in) if act in ("relu", "leaky_relu") else math.sqrt(6.0 / (fan_in + fan_out))
        params[offset:offset + fan_out * fan_in] = rng.uniform(-limit, limit, fan_out * fan_in)
    return params


@dataclass
class Snapshot:
    """A GPU-side copy of everything a step changes, to go back to (e.g. before a NaN)."""
    master: spy.Buffer
    moments: spy.Buffer
    step: int
    optimizer_steps: int


@dataclass
class Evaluation:
    predictions: np.ndarray  # (G, G, outputs), [j, i] with j along y
    truths: np.ndarray
    cell_loss: np.ndarray    # (G, G)
    error_max: np.ndarray    # (outputs,)

    @property
    def loss(self) -> float:
        return float(np.mean(self.cell_loss, dtype=np.float64))


class Trainer:
    def __init__(self, device: spy.Device, config: Config):
        self.device = device
        self.config = config
        self.kernels: NetworkKernels = kernels_for(device, config)
        self.wave_width = wave_width(device)
        self.step = 0             # optimizer steps taken; also the sampler's step index
        self.optimizer_steps = 0  # steps since the optimizer state was last reset
        p = config.param_count
        self.master = self._buffer(p * 4)
        self.weights = self.master if config.precision == "float" else self._buffer(p * 2)
        self.moments = self._buffer(2 * p * 4)
        self.loss_history = self._buffer(LOSS_HISTORY * 4)
        # Host-visible copy target for what a frame reads back (losses, error maxima): copies
        # recorded into the frame's own encoder cost no extra GPU round trip, unlike to_numpy()
        # on device memory, which took ~1.3 ms per call on an H200.
        self._readback = device.create_buffer(size=(LOSS_HISTORY + config.output_dim) * 4,
                                              usage=spy.BufferUsage.copy_destination,
                                              memory_type=spy.MemoryType.read_back)
        self._readback_count = 0
        self._eval_grid = 0
        self._size_slots()
        self.reset(config.seed)

    # ---- buffers ------------------------------------------------------------------------
    def _buffer(self, size: int) -> spy.Buffer:
        return self.device.create_buffer(size=max(size, 4), usage=_USAGE)

    def _size_slots(self) -> None:
        """Launch shape from the batch size, and one gradient slot per wave (thread accumulators)
        or per group (group tiles), capped by memory. Each wave has a loss slot."""
        p, group = self.config.param_count, train_group_size(self.config)
        waves_per_group = -(-group // self.wave_width)
        slots_per_group = waves_per_group if uses_thread_accumulators(self.config) else 1
        max_groups = max(1, SLOT_MEMORY_BYTES // (4 * p * slots_per_group))
        batch = self.config.batch_size
        threads = min(batch, max(MIN_PARALLEL_THREADS, batch // MIN_SAMPLES_PER_THREAD), MAX_TRAIN_THREADS)
        groups = min(-(-threads // group), max_groups)
        self.thread_count = groups * group
        self.gradient_slot_count = groups * slots_per_group
        self.loss_slot_count = groups * waves_per_group
        self.gradient_slots = self._buffer(self.gradient_slot_count * p * 4)
        self.loss_slots = self._buffer(self.loss_slot_count * 4)
        encoder = self.device.create_command_encoder()
        encoder.clear_buffer(self.gradient_slots)
        self.device.submit_command_buffer(encoder.finish())

    def reset(self, seed: int | None = None) -> None:
        """Fresh weights from `seed` (the config's when None), zero optimizer state."""
        if seed is not None and seed != self.config.seed:
            self.config = self.config.replace(seed=seed)
        self.set_parameters(initial_parameters(self.config))
        self.step = 0
        self._reset_optimizer_state()

    def _reset_optimizer_state(self) -> None:
        self.moments.copy_from_numpy(np.zeros(2 * self.config.param_count, np.float32))
        self.optimizer_steps = 0

    def set_parameters(self, params: np.ndarray) -> None:
        params = np.ascontiguousarray(params, dtype=np.float32)
        self.master.copy_from_numpy(params)
        if self.weights is not self.master:
            self.weights.copy_from_numpy(params.astype(np.float16))

    def gpu_bytes(self) -> int:
        """Device memory held by this trainer's buffers (evaluation buffers included)."""
        buffers = {id(b): b for b in (self.master, self.weights, self.moments, self.loss_history,
                                      self.gradient_slots, self.loss_slots,
                                      *(getattr(self, n) for n in ("predictions", "truths", "cell_loss", "error_max")
                                        if hasattr(self, n)))}
        return sum(b.memory_usage.device for b in buffers.values())

    def parameters(self) -> np.ndarray:
        return self.master.to_numpy().view(np.float32)[: self.config.param_count].copy()

    # ---- live changes ---------------------------------------------------------------------
    def apply(self, config: Config) -> None:
        """Takes a config whose structure matches; hot fields apply from the next step."""
        if config.structure_key() != self.config.structure_key():
            changed = [f for f in STRUCTURAL_FIELDS if getattr(config, f) != getattr(self.config, f)]
            raise ValueError(f"structural change ({', '.join(changed)}) needs a new Trainer")
        old = self.config
        self.config = config
        if config.optimizer != old.optimizer:
            self._reset_optimizer_state()
        if config.batch_size != old.batch_size:
            self._size_slots()

    # ---- training -------------------------------------------------------------------------
    def _optimizer_settings(self) -> dict:
        c = self.config
        return {"kind": 1 if c.optimizer == "adam" else 0, "learningRate": c.lr, "beta1": c.beta1,
                "beta2": c.beta2, "epsilon": c.epsilon, "stepNumber": self.optimizer_steps + 1}

    def record_steps(self, encoder: spy.CommandEncoder, count: int) -> range:
        """Records `count` optimizer steps; returns their step numbers for read_losses."""
        c, k = self.config, self.kernels
        first = self.step
        groups = c.param_count + 1
        rows = -(-groups // REDUCE_GROUPS_PER_ROW)
        for _ in range(count):
            k.learn_gradient.dispatch(
                [self.thread_count, 1, 1], command_encoder=encoder,
                weights=self.weights.device_address, gradientSlots=self.gradient_slots.device_address,
                lossSlots=self.loss_slots.device_address, batchSize=c.batch_size,
                threadCount=self.thread_count, seed=c.seed, step=self.step, domain=spy.float4(*c.domain))
            # Pointer accesses are invisible to the driver's hazard tracking: order them by hand.
            encoder.global_barrier()
            k.adjust_parameters.dispatch(
                [min(groups, REDUCE_GROUPS_PER_ROW) * 64, rows, 1], command_encoder=encoder,
                masterWeights=self.master.device_address, weights=self.weights.device_address,
                moments=self.moments.device_address, gradientSlots=self.gradient_slots.device_address,
                lossSlots=self.loss_slots.device_address, lossHistory=self.loss_history.device_address,
                historyIndex=self.step % LOSS_HISTORY, gradientSlotCount=self.gradient_slot_count,
                lossSlotCount=self.loss_slot_count,
                batchSize=c.batch_size, groupsPerRow=REDUCE_GROUPS_PER_ROW,
                optimizer=self._optimizer_settings())
            encoder.global_barrier()
            self.step += 1
            self.optimizer_steps += 1
        return range(first, self.step)

    def read_losses(self, steps: range) -> np.ndarray:
        """Per-step mean training loss for steps recorded and submitted (at most LOSS_HISTORY)."""
        if len(steps) == 0:
            return np.zeros(0, np.float32)
        if len(steps) > LOSS_HISTORY:
            raise ValueError(f"at most {LOSS_HISTORY} steps can be read back at once")
        ring = self.loss_history.to_numpy().view(np.float32)
        return ring[np.arange(steps.start, steps.stop) % LOSS_HISTORY].copy()

    def record_readback(self, encoder: spy.CommandEncoder, steps: range) -> None:
        """Records copies of `steps`' losses and, from the evaluation recorded before it, each
        output's largest |error| into host-visible memory; `readback()` returns them once the
        encoder has run."""
        count = len(steps)
        if count > LOSS_HISTORY:
            raise ValueError(f"at most {LOSS_HISTORY} steps can be read back at once")
        encoder.global_barrier()  # the kernels wrote through pointers the driver cannot track
        start = steps.start % LOSS_HISTORY if count else 0
        first = min(count, LOSS_HISTORY - start)
        if first:
            encoder.copy_buffer(self._readback, 0, self.loss_history, start * 4, first * 4)
        if count > first:  # the ring wrapped
            encoder.copy_buffer(self._readback, first * 4, self.loss_history, 0, (count - first) * 4)
        encoder.copy_buffer(self._readback, LOSS_HISTORY * 4, self.error_max, 0, self.config.output_dim * 4)
        self._readback_count = count

    def readback(self) -> tuple[np.ndarray, np.ndarray]:
        """(losses, error maxima) recorded by the last record_readback, after it ran."""
        data = self._readback.to_numpy().view(np.float32)
        return data[: self._readback_count].copy(), data[LOSS_HISTORY:LOSS_HISTORY + self.config.output_dim].copy()

    def train(self, count: int) -> np.ndarray:
        """Runs `count` steps now and returns their losses."""
        encoder = self.device.create_command_encoder()
        steps = self.record_steps(encoder, count)
        self.device.submit_command_buffer(encoder.finish())
        return self.read_losses(steps)

    def snapshot(self) -> Snapshot:
        snap = Snapshot(self._buffer(self.master.size), self._buffer(self.moments.size), self.step, self.optimizer_steps)
        encoder = self.device.create_command_encoder()
        encoder.copy_buffer(snap.master, 0, self.master, 0, self.master.size)
        encoder.copy_buffer(snap.moments, 0, self.moments, 0, self.moments.size)
        self.device.submit_command_buffer(encoder.finish())
        return snap

    def restore(self, snap: Snapshot) -> None:
        self.set_parameters(snap.master.to_numpy().view(np.float32)[: self.config.param_count])
        encoder = self.device.create_command_encoder()
        encoder.copy_buffer(self.moments, 0, snap.moments, 0, self.moments.size)
        self.device.submit_command_buffer(encoder.finish())
        self.step, self.optimizer_steps = snap.step, snap.optimizer_steps

    # ---- evaluation -----------------------------------------------------------------------
    def _ensure_eval_buffers(self, grid: int) -> None:
        if grid == self._eval_grid:
            return
        outputs = self.config.output_dim
        self._eval_grid = grid
        self.predictions = self._buffer(grid * grid * outputs * 4)
        self.truths = self._buffer(grid * grid * outputs * 4)
        self.cell_loss = self._buffer(grid * grid * 4)
        self.error_max = self._buffer(outputs * 4)

    def record_evaluation(self, encoder: spy.CommandEncoder, grid: int | None = None) -> int:
        """Evaluates the network on the grid's cell centres; returns the grid size used."""
        grid = grid or self.config.eval_grid
        self._ensure_eval_buffers(grid)
        encoder.clear_buffer(self.error_max)
        encoder.global_barrier()
        self.kernels.evaluate_grid.dispatch(
            [grid * grid, 1, 1], command_encoder=encoder, weights=self.weights.device_address,
            predictions=self.predictions.device_address, truths=self.truths.device_address,
            cellLoss=self.cell_loss.device_address, errorMax=self.error_max.device_address,
            grid=grid, domain=spy.float4(*self.config.domain))
        encoder.global_barrier()
        return grid

    def read_evaluation(self) -> Evaluation:
        g, o = self._eval_grid, self.config.output_dim
        return Evaluation(
            predictions=self.predictions.to_numpy().view(np.float32)[: g * g * o].reshape(g, g, o).copy(),
            truths=self.truths.to_numpy().view(np.float32)[: g * g * o].reshape(g, g, o).copy(),
            cell_loss=self.cell_loss.to_numpy().view(np.float32)[: g * g].reshape(g, g).copy(),
            error_max=self.error_max.to_numpy().view(np.float32)[:o].copy())

    def read_eval_loss(self) -> float:
        """The last evaluation's loss alone (one small read instead of read_evaluation's three)."""
        g = self._eval_grid
        return float(np.mean(self.cell_loss.to_numpy().view(np.float32)[: g * g], dtype=np.float64))

    def evaluate(self, grid: int | None = None) -> Evaluation:
        encoder = self.device.create_command_encoder()
        self.record_evaluation(encoder, grid)
        self.device.submit_command_buffer(encoder.finish())
        return self.read_evaluation()
