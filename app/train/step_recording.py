"""The recording of a Trainer's training steps into command encoders: whole steps (record_steps,
and train, which runs and reads them back now) or a step in pieces (record_piece), each dispatch
reading a StepArgs record (app/train/step_args.py) that _step_records fills from the trainer's
buffers, config and counters. StepRecording is a mixin of Trainer (app/train/trainer.py): the
buffers, counters and launch shape it reads are made in Trainer.__init__ and Trainer._size_slots."""

from __future__ import annotations

import numpy as np
import slangpy as spy

from ..gpu.kernel_cache import NetworkKernels
from ..kernels.launch_shape import ADJUST_THREADS, LaunchShape
from ..kernels.step_units import StepProgress, StepUnits
from ..model.optimizers import OPTIMIZERS
from .loss_ring import LOSS_HISTORY, LossRing
from .point_data import PointData
from .step_args import REDUCE_GROUPS_PER_ROW, REGULARIZATION_IDS, StepArgsRing
from .training_state import TrainerCore

# Whole steps per command buffer, whenever many run at once. slang-rhi keeps each command
# buffer's memory, pooled, at the size of its largest recording (on an H200 about 12 KB a step
# once 8192 steps shared one; docs/slangpy-command-buffer-memory.md): small buffers keep it small.
SUBMIT_STEPS = 64


class StepRecording(TrainerCore):
    """Trainer's recording methods. Besides TrainerCore's fields they read these, made by Trainer
    (and Trainer's batch_size), and advance step, optimizer_steps, samples_seen, data_position,
    version and progress as steps complete:"""

    kernels: NetworkKernels
    launch: LaunchShape
    units: StepUnits
    gradient_slots: spy.Buffer
    loss_slots: spy.Buffer
    grid_gradients: spy.Buffer
    truth_pixels: spy.Buffer
    losses: LossRing
    data: PointData | None
    _args: StepArgsRing

    # ---- recording ----------------------------------------------------------------------
    @property
    def samples_per_thread(self) -> int:
        return self.units.samples_per_thread

    @property
    def learn_units(self) -> int:
        return self.units.learn_units

    @property
    def learn_unit_samples(self) -> int:
        return self.units.learn_unit_samples

    @property
    def adjust_units(self) -> int:
        return self.units.adjust_units

    def _step_records(self, count: int) -> np.ndarray:
        """StepArgs records for the next `count` steps, each covering the whole step (record_piece
        narrows their ranges)."""
        c, launch, r = self.config, self.launch, np.zeros(count, self.kernels.step_args)
        r["weights"], r["master_weights"] = self.weights.device_address, self.master.device_address
        r["optimizer_state"] = self.optimizer_state.device_address
        r["gradient_slots"], r["loss_slots"] = self.gradient_slots.device_address, self.loss_slots.device_address
        r["loss_history"] = self.losses.buffer.device_address
        r["grid_gradients"] = self.grid_gradients.device_address
        r["truth_data"] = self.truth_pixels.device_address
        r["x0"], r["x1"], r["y0"], r["y1"] = c.domain
        r["batch_size"], r["thread_count"], r["seed"] = self.batch_size, launch.thread_count, c.seed
        ahead = np.arange(count)
        r["step"] = self.step + ahead
        r["history_index"] = (self.step + ahead) % LOSS_HISTORY
        r["sample_end"] = self.units.loop_count
        r["gradient_slot_count"], r["loss_slot_count"] = launch.gradient_slot_count, launch.loss_slot_count
        r["groups_per_row"], r["param_end"] = REDUCE_GROUPS_PER_ROW, self.plan.mlp_param_count + 1
        r["grid_end"] = self.plan.grid_param_count
        optimizer = OPTIMIZERS[c.optimizer]
        settings = r["optimizer"]  # OptimizerSettings (shaders/optimizers.slang)
        settings["kind"], settings["learning_rate"], settings["hyper"] = optimizer.id, c.lr, optimizer.hyper_values(c)
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
        with self.gpu.submit() as encoder:
            address = self._args.upload(encoder, records)
            self._dispatch(encoder, self.kernels.learn_gradient, self.plan.group_size, address)
            self._dispatch(encoder, self.kernels.adjust_parameters, ADJUST_THREADS, address)

    def _dispatch(
        self, encoder: spy.CommandEncoder, kernel: spy.ComputeKernel, threads: int, address: int, rows: int = 1
    ) -> None:
        """One dispatch reading the StepArgs at `address`."""
        self._dispatch_shaped(encoder, kernel, kernel.pipeline, spy.uint3(threads, rows, 1), address)

    def _dispatch_shaped(
        self, encoder: spy.CommandEncoder, kernel: spy.ComputeKernel, pipeline, size: spy.uint3, address: int
    ) -> None:
        """One dispatch of `kernel` (its `pipeline`) over `size` threads reading the StepArgs at
        `address`. Through the compute-pass API (~13 us of CPU against ~20 us for
        ComputeKernel.dispatch, at a few hundred dispatches a frame), with the root object the ring
        keeps for that kernel and record slot."""
        compute = encoder.begin_compute_pass()
        compute.bind_pipeline(pipeline, self._args.root(kernel, address))
        compute.dispatch(size)
        compute.end()
        # Pointer accesses are invisible to the driver's hazard tracking: order them by hand.
        encoder.global_barrier()

    def _adjust_size(self, count: int) -> spy.uint3:
        """adjustParameters' threads for `count` workgroups, in rows that keep each dimension in bounds."""
        rows = max(1, -(-count // REDUCE_GROUPS_PER_ROW))
        return spy.uint3(max(1, min(count, REDUCE_GROUPS_PER_ROW)) * ADJUST_THREADS, rows, 1)

    def _adjust_dispatch(self, encoder: spy.CommandEncoder, count: int, address: int) -> None:
        kernel = self.kernels.adjust_parameters
        self._dispatch_shaped(encoder, kernel, kernel.pipeline, self._adjust_size(count), address)

    def _complete_steps(self, count: int = 1) -> None:
        self.version += count
        self.step += count
        self.optimizer_steps += count
        self.samples_seen += count * self.batch_size
        self.data_position += count * self.batch_size if self.data is not None else 0
        self.progress = StepProgress()

    def record_steps(self, encoder: spy.CommandEncoder, count: int) -> range:
        """Records `count` whole optimizer steps; returns their step indices. What every step's two
        dispatches share (kernels, pipelines, sizes) is looked up once: at small batches recording
        is the window's limit (about 16 us a step on an H200's host; looked up every step, these
        cost 2.5 us of a step on the 2-core development machine)."""
        if self.progress.started:
            raise RuntimeError("a step recorded in pieces is in progress: finish it with record_piece")
        first = self.step
        if count:
            base = self._args.upload(encoder, self._step_records(count))
            learn, adjust = self.kernels.learn_gradient, self.kernels.adjust_parameters
            learn_pipeline, adjust_pipeline = learn.pipeline, adjust.pipeline
            learn_size = spy.uint3(self.launch.group_count * self.plan.group_size, 1, 1)
            adjust_size = self._adjust_size(self.adjust_units)
            stride = self._args.dtype.itemsize
            for address in range(base, base + count * stride, stride):
                self._dispatch_shaped(encoder, learn, learn_pipeline, learn_size, address)
                self._dispatch_shaped(encoder, adjust, adjust_pipeline, adjust_size, address)
            self._complete_steps(count)
        return range(first, self.step)

    def record_piece(self, encoder: spy.CommandEncoder, units: int) -> range:
        """Records the next `units` groups of the current step's phase (learnGradient's units,
        then adjustParameters' groups). Returns the step's index once its last piece is recorded,
        else an empty range. A step in pieces gives bit-identical weights to a whole one."""
        phase, position = self.progress.phase, self.progress.position
        total = self.learn_units if phase == "learn" else self.adjust_units
        count = max(1, min(units, total - position))
        if phase == "learn":
            ranges = self.units.learn_ranges(position, count)
            records = self._step_records(len(ranges))
            records["step"], records["optimizer"]["step_number"] = self.step, self.optimizer_steps + 1
            if self.data is not None:  # every piece belongs to the current step
                self.data.fill(records, self.data_position, 0)
            for record, (first_group, _groups, begin, end) in zip(records, ranges):
                record["group_offset"], record["sample_begin"], record["sample_end"] = first_group, begin, end
            base = self._args.upload(encoder, records)
            for i, (_, groups, _, _) in enumerate(ranges):
                self._dispatch(
                    encoder,
                    self.kernels.learn_gradient,
                    groups * self.plan.group_size,
                    base + i * self._args.dtype.itemsize,
                )
        else:
            records = self._step_records(1)
            ranges = self.units.adjust_range(position, count)
            records["param_offset"], records["param_end"], records["grid_offset"], records["grid_end"] = ranges
            self._adjust_dispatch(encoder, count, self._args.upload(encoder, records))
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
