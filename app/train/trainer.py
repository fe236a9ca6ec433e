"""Trainer: one NetworkPlan trained on the GPU. It holds the parameters and optimizer state, records
training steps into command encoders (whole, or in pieces over several frames) with the StepArgs
records their dispatches read, takes live changes of the hot settings, and snapshots and restores
everything a step changes. No UI here."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import slangpy as spy

from ..config.config import STRUCTURAL_FIELDS, Config
from ..gpu.gpu import Gpu
from ..gpu.kernel_cache import NetworkKernels
from ..kernels.launch_shape import ADJUST_THREADS
from ..kernels.paths import GradientPath, path_of
from ..kernels.plan import NetworkPlan
from ..kernels.step_units import StepProgress
from ..model.optimizers import OPTIMIZERS, STATE_WIDTH
from .loss_ring import LOSS_HISTORY, LossRing
from .point_data import PointData, data_key
from .step_args import REDUCE_GROUPS_PER_ROW, REGULARIZATION_IDS, StepArgsRing
from .step_launch import StepLaunch
from .truth_grid import follows_domain, upload_truth_grid

# Whole steps per command buffer, whenever many run at once. slang-rhi keeps each command
# buffer's memory, pooled, at the size of its largest recording (docs/slangpy-command-buffer-memory.md;
# docs/benchmarks.md, 'Soak'): small buffers keep it small.
SUBMIT_STEPS = 64


@dataclass
class Snapshot:
    """A GPU-side copy of everything a step changes, to go back to (e.g. before a NaN)."""

    buffers: list[spy.Buffer]  # copies of the trainer's _state_buffers(), in their order
    step: int = 0
    optimizer_steps: int = 0
    samples_seen: int = 0
    config: Config | None = None  # the hot settings the steps after it ran with (for replay)
    data_position: int = 0


class Trainer:
    def __init__(self, gpu: Gpu, config: Config):
        self.gpu, self.config = gpu, config
        self.plan: NetworkPlan = gpu.plan(config)
        self.path: GradientPath = path_of(self.plan)  # how learnGradient sums (app/kernels/paths/)
        self.kernels: NetworkKernels = gpu.kernels.get(self.plan)
        # A dataset's points (app/train/point_data.py) where the plan trains on points
        self.data = PointData.of(gpu, config) if self.plan.truth_kind == "points" else None
        # The parameters: fp32 masters, and what the kernels read (the masters themselves in
        # float, a half copy in the gradient path's layout in half), and the optimizer's state
        p = self.plan.param_count
        self.master = gpu.buffer(p * 4)
        self.weights = (
            self.master if self.plan.precision == "float" else gpu.buffer(self.path.weight_count(self.plan) * 2)
        )
        self.optimizer_state = gpu.buffer(STATE_WIDTH * p * 4)
        # What a step sums: the launch's gradient and loss slots, and a trained grid's gradients,
        # one fixed-point sum a table value (app/model/hashgrid.py)
        self.launch = StepLaunch(gpu, self.plan, self.path, self.batch_size)
        self.grid_gradients = gpu.buffer(self.plan.grid_param_count * 8)
        self.truth_pixels = upload_truth_grid(gpu, self.plan, config)
        self._replaced_truth_pixels: list = []  # kept while dispatches recorded earlier may read them
        self.losses = LossRing(gpu)
        self._step_args = StepArgsRing(gpu, self.kernels.step_args)
        # Counters, set by reset(), advanced as steps complete, kept in snapshots and checkpoints
        self.step = 0  # optimizer steps taken; also the sampler's step index
        self.optimizer_steps = 0  # steps since the optimizer state was last reset
        self.samples_seen = 0  # samples of all steps taken, whatever their batch sizes
        self.data_position = 0  # samples drawn from the points: where the next step's begin
        self.version = 0  # changes whenever the weights do (evaluations compare it)
        self.progress = StepProgress()  # how far a step recorded in pieces has got
        with gpu.submit(wait=False) as encoder:
            self._clear_sums(encoder)  # new buffers hold whatever their memory held
        self.reset(config.seed)
        self._build_pipelines()

    @property
    def batch_size(self) -> int:
        """Samples a step trains on: the config's batch size, at most the training points."""
        return self.data.batch(self.config.batch_size) if self.data is not None else self.config.batch_size

    @property
    def epochs(self) -> float:
        """Epochs over the training points drawn so far (0 for formulas)."""
        return self.data.epochs(self.data_position) if self.data is not None else 0.0

    # ---- live changes ---------------------------------------------------------------------
    def apply(self, config: Config) -> None:
        """Takes a config with the same plan; hot fields apply from the next piece of work. New
        data settings (another dataset of the same problem, points, noise...) make new points."""
        if self.gpu.plan(config) != self.plan:
            changed = [f for f in STRUCTURAL_FIELDS if getattr(config, f) != getattr(self.config, f)]
            raise ValueError(f"structural change ({', '.join(changed)}) needs a new Trainer")
        data = None
        if self.data is not None and data_key(config) != self.data.key:
            data = PointData.of(self.gpu, config)  # first: a UserError changes nothing
        old, batch, self.config = self.config, self.batch_size, config
        if follows_domain(self.plan) and (config.domain, config.z_range) != (old.domain, old.z_range):
            self._replaced_truth_pixels = [self.truth_pixels]
            self.truth_pixels = upload_truth_grid(self.gpu, self.plan, config)
        if data is not None:
            self.set_data(data)
        if config.optimizer != old.optimizer:
            self.reset_optimizer()
        if self.batch_size != batch:
            self._relaunch()  # the launch shape follows the batch; a step in progress restarts

    def set_data(self, data: PointData) -> None:
        """New points from the next step on, their epochs from the start; a step recorded in part
        is dropped (its samples came from the old points)."""
        batch = self.batch_size
        self.data, self.data_position = data, 0
        self.version += 1  # the evaluation of the points is out of date
        if self.batch_size != batch:
            self._relaunch()
        elif self.progress.started:
            self.abandon_step()

    def _relaunch(self) -> None:
        """A launch for the current batch size; a step recorded in part is dropped."""
        # Steps in flight (the window's, while a UI action changes the batch) reach the old slots
        # through pointers: they are freed only once those have run.
        self.gpu.device.wait()
        self.launch = StepLaunch(self.gpu, self.plan, self.path, self.batch_size)
        self.abandon_step()

    # ---- parameters and optimizer state ---------------------------------------------------
    def reset(self, seed: int | None = None) -> None:
        """Fresh weights from `seed` (the config's when None), zero optimizer state, step 0."""
        if seed is not None and seed != self.config.seed:
            self.config = self.config.replace(seed=seed)
        self.set_parameters(self.plan.initial_parameters(self.config.seed))
        self.step = self.samples_seen = self.data_position = 0
        self.reset_optimizer()
        if self.progress.started:
            self.abandon_step()

    def reset_optimizer(self) -> None:
        """Zero optimizer state and a fresh bias correction; the parameters stay."""
        self.gpu.write(self.optimizer_state, np.zeros(STATE_WIDTH * self.plan.param_count, np.float32))
        self.optimizer_steps = 0

    def set_parameters(self, params: np.ndarray) -> None:
        params = np.asarray(params, dtype=np.float32)
        self.version += 1
        self.gpu.write(self.master, params)
        if self.weights is not self.master:
            self.gpu.write(self.weights, self.path.weight_image(self.plan, params.astype(np.float16)))

    def load(
        self,
        master: np.ndarray,
        weights: np.ndarray | None,
        optimizer_state: np.ndarray,
        step: int,
        optimizer_steps: int,
        samples_seen: int,
        data_position: int = 0,
    ) -> None:
        """Puts back a saved state (a checkpoint). The half copy is written as it was saved rather
        than rounded again here, so that a resumed run is bit-identical to one never stopped.
        `optimizer_state` is the config's optimizer's (optimizer_state_values)."""
        self.set_parameters(master)
        if weights is not None and self.weights is not self.master:
            self.gpu.write(self.weights, self.path.weight_image(self.plan, np.asarray(weights, np.float16)))
        state = np.zeros(STATE_WIDTH * self.plan.param_count, np.float32)
        state[: len(optimizer_state)] = optimizer_state
        self.gpu.write(self.optimizer_state, state)
        self.step, self.optimizer_steps, self.samples_seen = step, optimizer_steps, samples_seen
        self.data_position = data_position
        if self.progress.started:
            self.abandon_step()

    def parameters(self) -> np.ndarray:
        """The fp32 master parameters, flat in the plan's layout."""
        return self.gpu.read(self.master, self.plan.param_count)

    def optimizer_state_values(self) -> np.ndarray:
        """The current optimizer's state: its k-th float of parameter i at k * param_count + i."""
        return self.gpu.read(
            self.optimizer_state, OPTIMIZERS[self.config.optimizer].state_width * self.plan.param_count
        )

    def gpu_bytes(self) -> int:
        """Device memory held by this trainer's buffers."""
        buffers = [
            *self._state_buffers(),
            self.truth_pixels,
            self.losses.buffer,
            self.launch.gradient_slots,
            self.launch.loss_slots,
            self.grid_gradients,
        ]
        buffers += [self.data.buffer] if self.data is not None else []
        return sum(b.memory_usage.device for b in buffers)

    # ---- snapshots ------------------------------------------------------------------------
    def _state_buffers(self) -> list[spy.Buffer]:
        """Everything a step changes: the masters, the optimizer state and the half copy."""
        return [self.master, self.optimizer_state] + ([self.weights] if self.weights is not self.master else [])

    def new_snapshot(self) -> Snapshot:
        return Snapshot([self.gpu.buffer(buffer.size) for buffer in self._state_buffers()])

    def record_snapshot(self, encoder: spy.CommandEncoder, snap: Snapshot) -> None:
        """Records a copy of the state at a step boundary into `snap`: between steps, or in a step
        recorded in pieces before its first parameter update."""
        if self.progress.updating:
            raise RuntimeError("snapshots are taken before a step's parameter updates")
        encoder.global_barrier()
        for copy, buffer in zip(snap.buffers, self._state_buffers()):
            encoder.copy_buffer(copy, 0, buffer, 0, buffer.size)
        snap.step, snap.optimizer_steps, snap.samples_seen = self.step, self.optimizer_steps, self.samples_seen
        snap.config, snap.data_position = self.config, self.data_position

    def record_snapshot_now(self, snap: Snapshot) -> None:
        with self.gpu.submit() as encoder:
            self.record_snapshot(encoder, snap)

    def snapshot(self) -> Snapshot:
        snap = self.new_snapshot()
        self.record_snapshot_now(snap)
        return snap

    def restore(self, snap: Snapshot) -> None:
        """Puts back the state `snap` holds; a step in progress is dropped."""
        with self.gpu.submit() as encoder:
            encoder.global_barrier()
            for copy, buffer in zip(snap.buffers, self._state_buffers()):
                encoder.copy_buffer(buffer, 0, copy, 0, buffer.size)
            self._clear_sums(encoder)
        self.step, self.optimizer_steps, self.samples_seen = snap.step, snap.optimizer_steps, snap.samples_seen
        self.data_position = snap.data_position
        self.progress = StepProgress()
        self.version += 1

    # ---- recording steps ------------------------------------------------------------------
    def record_steps(self, encoder: spy.CommandEncoder, count: int) -> range:
        """Records `count` whole optimizer steps; returns their step indices. What every step's two
        dispatches share (kernels, pipelines, sizes) is looked up once: at small batches recording
        is the window's limit (docs/benchmarks.md, 'Derivative training')."""
        if self.progress.started:
            raise RuntimeError("a step recorded in pieces is in progress: finish it with record_piece")
        first = self.step
        if count:
            base = self._step_args.upload(encoder, self._step_records(count))
            learn, adjust = self.kernels.learn_gradient, self.kernels.adjust_parameters
            learn_pipeline, adjust_pipeline = learn.pipeline, adjust.pipeline
            learn_size = spy.uint3(self.launch.shape.group_count * self.plan.group_size, 1, 1)
            adjust_size = _adjust_threads(self.launch.units.adjust_units)
            stride, dispatch = self._step_args.dtype.itemsize, self._step_args.dispatch
            for address in range(base, base + count * stride, stride):
                dispatch(encoder, learn, learn_pipeline, learn_size, address)
                dispatch(encoder, adjust, adjust_pipeline, adjust_size, address)
            self._complete_steps(count)
        return range(first, self.step)

    def record_piece(self, encoder: spy.CommandEncoder, units: int) -> range:
        """Records the next `units` groups of the current step's phase (learnGradient's units,
        then adjustParameters' groups). Returns the step's index once its last piece is recorded,
        else an empty range. A step in pieces gives bit-identical weights to a whole one."""
        phase, position, step_units = self.progress.phase, self.progress.position, self.launch.units
        total = step_units.learn_units if phase == "learn" else step_units.adjust_units
        count = max(1, min(units, total - position))
        if phase == "learn":
            ranges = step_units.learn_ranges(position, count)
            records = self._step_records(len(ranges))
            records["step"], records["optimizer"]["step_number"] = self.step, self.optimizer_steps + 1
            if self.data is not None:  # every piece belongs to the current step
                self.data.fill(records, self.data_position, 0)
            for record, (first_group, _groups, begin, end) in zip(records, ranges):
                record["group_offset"], record["sample_begin"], record["sample_end"] = first_group, begin, end
            base, stride = self._step_args.upload(encoder, records), self._step_args.dtype.itemsize
            learn = self.kernels.learn_gradient
            for i, (_, groups, _, _) in enumerate(ranges):
                size = spy.uint3(groups * self.plan.group_size, 1, 1)
                self._step_args.dispatch(encoder, learn, learn.pipeline, size, base + i * stride)
        else:
            records = self._step_records(1)
            ranges = step_units.adjust_range(position, count)
            records["param_offset"], records["param_end"], records["grid_offset"], records["grid_end"] = ranges
            adjust, address = self.kernels.adjust_parameters, self._step_args.upload(encoder, records)
            self._step_args.dispatch(encoder, adjust, adjust.pipeline, _adjust_threads(count), address)
        position += count
        if position < total:
            self.progress = StepProgress(phase, position)
            return range(0)
        if phase == "learn":
            self.progress = StepProgress("adjust", 0)
            return range(0)
        self._complete_steps()
        return range(self.step - 1, self.step)

    def train(self, count: int) -> np.ndarray:
        """Runs `count` whole steps now and returns their losses, SUBMIT_STEPS a command buffer."""
        losses = []
        while count > 0:
            chunk, first = min(count, LOSS_HISTORY), self.step
            for start in range(0, chunk, SUBMIT_STEPS):
                last = start + SUBMIT_STEPS >= chunk
                with self.gpu.submit(wait=last) as encoder:
                    self.record_steps(encoder, min(SUBMIT_STEPS, chunk - start))
                    if last:
                        self.losses.record_readback(encoder, range(first, self.step))
            losses.append(self.losses.read())
            count -= chunk
        return np.concatenate(losses) if losses else np.zeros(0, np.float32)

    def abandon_step(self) -> None:
        """Drops a step recorded only in part: its gradient and loss sums are cleared."""
        with self.gpu.submit(wait=False) as encoder:
            self._clear_sums(encoder)
        self.progress = StepProgress()

    def _clear_sums(self, encoder: spy.CommandEncoder) -> None:
        encoder.clear_buffer(self.launch.gradient_slots)
        encoder.clear_buffer(self.launch.loss_slots)
        encoder.clear_buffer(self.grid_gradients)

    def _complete_steps(self, count: int = 1) -> None:
        self.version += count
        self.step += count
        self.optimizer_steps += count
        self.samples_seen += count * self.batch_size
        self.data_position += count * self.batch_size if self.data is not None else 0
        self.progress = StepProgress()

    def _step_records(self, count: int) -> np.ndarray:
        """StepArgs records for the next `count` steps, each covering the whole step (record_piece
        narrows their ranges)."""
        c, shape, r = self.config, self.launch.shape, np.zeros(count, self.kernels.step_args)
        r["weights"], r["master_weights"] = self.weights.device_address, self.master.device_address
        r["optimizer_state"] = self.optimizer_state.device_address
        r["gradient_slots"] = self.launch.gradient_slots.device_address
        r["loss_slots"] = self.launch.loss_slots.device_address
        r["loss_history"] = self.losses.buffer.device_address
        r["grid_gradients"] = self.grid_gradients.device_address
        r["truth_data"] = self.truth_pixels.device_address
        r["x0"], r["x1"], r["y0"], r["y1"] = c.domain
        if self.plan.point_dim == 3:  # the field is in StepArgs only then (shaders/common/step_args.slang)
            r["z0"], r["z1"] = c.z_range
        r["batch_size"], r["thread_count"], r["seed"] = self.batch_size, shape.thread_count, c.seed
        ahead = np.arange(count)
        r["step"] = self.step + ahead
        r["history_index"] = (self.step + ahead) % LOSS_HISTORY
        r["sample_end"] = self.launch.units.loop_count
        r["gradient_slot_count"], r["loss_slot_count"] = shape.gradient_slot_count, shape.loss_slot_count
        r["groups_per_row"], r["param_end"] = REDUCE_GROUPS_PER_ROW, self.plan.mlp_param_count + 1
        r["grid_end"] = self.plan.grid_param_count
        optimizer = OPTIMIZERS[c.optimizer]
        settings = r["optimizer"]  # OptimizerSettings (shaders/model/optimizers.slang)
        settings["kind"], settings["learning_rate"] = optimizer.id, c.lr
        settings["hyper"] = optimizer.hyper_values(c.optimizer_settings)
        settings["step_number"] = self.optimizer_steps + 1 + ahead  # 1-based: Adam's bias correction
        r["regularization"], r["reg_rate"] = REGULARIZATION_IDS[c.regularization], c.reg_rate
        r["grad_weight"], r["eikonal_weight"], r["normal_weight"] = c.grad_weight, c.eikonal, c.normal_weight
        if self.data is not None:
            self.data.fill(r, self.data_position, self.batch_size)
        return r

    def _build_pipelines(self) -> None:
        """The driver compiles a kernel at its first dispatch: these dispatches change nothing
        (no samples, no parameters), so the first real step, and the frame budget's first
        measure of it, pay no compile."""
        records = self._step_records(1)
        records["batch_size"] = records["sample_end"] = records["param_end"] = records["grid_end"] = 0
        learn, adjust = self.kernels.learn_gradient, self.kernels.adjust_parameters
        with self.gpu.submit() as encoder:
            address = self._step_args.upload(encoder, records)
            self._step_args.dispatch(encoder, learn, learn.pipeline, spy.uint3(self.plan.group_size, 1, 1), address)
            self._step_args.dispatch(encoder, adjust, adjust.pipeline, spy.uint3(ADJUST_THREADS, 1, 1), address)


def _adjust_threads(workgroups: int) -> spy.uint3:
    """adjustParameters' threads for `workgroups`, in rows that keep each dimension in bounds."""
    rows = max(1, -(-workgroups // REDUCE_GROUPS_PER_ROW))
    return spy.uint3(max(1, min(workgroups, REDUCE_GROUPS_PER_ROW)) * ADJUST_THREADS, rows, 1)
