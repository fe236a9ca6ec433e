"""The window's side of a Session (app/session.py): what one frame records, as much training and
evaluation as the frame budget (app/budget.py) allows, and what is taken from it once the frame's
GPU work has run. A mixin rather than a second object so that a newcomer still finds every part
of the training loop on `Session`; it uses the session's trainer, evaluator, guard and budget."""

from __future__ import annotations

import time
from dataclasses import dataclass

import slangpy as spy

from .budget import StepShape, TrainingWork
from .loss_ring import LOSS_HISTORY
from .plan import ADJUST_PARAMS
from .timing import GpuTimer

EVAL_INTERVAL_S = 0.5  # the window plots an eval point at most this often
FRAME_SUBMIT_STEPS = 32  # whole steps per command buffer before the frame's own
THROUGHPUT_WINDOW_S = 1.0  # samples/s shown: over the last second


@dataclass
class FrameWork:
    """What one frame recorded, for finish_frame."""

    training: TrainingWork
    steps: range
    cells: int
    eval_complete: bool
    record_seconds: float
    overlapped: bool = False  # steps ran on the GPU while the CPU recorded the rest

    def training_seconds(self, gpu_seconds: float) -> float:
        """What the training cost the frame: recording then running, or the longer of the two
        where they overlapped."""
        if self.overlapped:
            return max(self.record_seconds, gpu_seconds)
        return self.record_seconds + gpu_seconds


class FrameRecording:
    def record_frame(self, encoder: spy.CommandEncoder, timer: GpuTimer, running: bool) -> FrameWork:
        """Records this frame's training and evaluation, as much as the budget allows."""
        start = time.perf_counter()
        t = self.trainer
        train = self.divergence is None and (running or self.pending_steps > 0)
        cells = 0
        if self.evaluator.stale() and self.evaluator.can_start():
            cells, eval_seconds = self.budget.plan_eval(
                self.evaluator.cells - self.evaluator.progress, self.evaluator.cells
            )
        else:
            eval_seconds = 0.0
        work = TrainingWork("", 0, 0)
        if train:
            work = self.budget.plan_training(
                max(self.budget.compute_seconds() - eval_seconds, 1e-4),
                self._step_shape(),
                t.progress.phase,
                t.progress.started,
            )
            if work.kind == "steps":  # at most the loss ring's length, and the steps asked for while paused
                units = min(work.units, LOSS_HISTORY if running else min(LOSS_HISTORY, self.pending_steps))
                work = TrainingWork("steps", units, units * t.config.batch_size)
        steps, overlapped = self._record_training(encoder, timer, work)
        record_seconds = time.perf_counter() - start
        timer.mark(encoder, 1)
        complete = self.evaluator.record(encoder, cells) if cells else False
        if self.heatmaps is not None and 0 < self.evaluator.passes != self.heatmaps.drawn:
            self.heatmaps.record_draw(encoder)
        if complete:
            self.evaluator.record_summary(encoder)
        t.losses.record_readback(encoder, steps)
        timer.mark(encoder, 2)
        return FrameWork(work, steps, cells, complete, record_seconds, overlapped)

    def _record_training(self, encoder: spy.CommandEncoder, timer: GpuTimer, work: TrainingWork) -> tuple[range, bool]:
        """Marks the frame's start and records its training. Whole steps beyond FRAME_SUBMIT_STEPS
        go in command buffers of their own, submitted at once, so that the GPU runs them while the
        CPU records the rest and the UI; the last ones go in the frame's encoder."""
        t = self.trainer
        if work.kind != "steps" or work.units <= FRAME_SUBMIT_STEPS:
            timer.mark(encoder, 0)
            if not work.kind:
                return range(0), False
            if not t.progress.started:
                self.guard.record_snapshot(encoder)
            return (t.record_steps if work.kind == "steps" else t.record_piece)(encoder, work.units), False
        first, remaining = t.step, work.units
        lead = self.gpu.device.create_command_encoder()
        timer.mark(lead, 0)
        self.guard.record_snapshot(lead)
        while remaining > FRAME_SUBMIT_STEPS:
            t.record_steps(lead, FRAME_SUBMIT_STEPS)
            remaining -= FRAME_SUBMIT_STEPS
            self.gpu.device.submit_command_buffer(lead.finish())
            if remaining > FRAME_SUBMIT_STEPS:
                lead = self.gpu.device.create_command_encoder()
        t.record_steps(encoder, remaining)
        return range(first, t.step), True

    def _step_shape(self) -> StepShape:
        t = self.trainer
        side_by_side = t.plan.gradient_path == "tiles" and not self.gpu.software
        return StepShape(
            t.config.batch_size,
            t.learn_units,
            t.learn_unit_samples,
            t.adjust_units,
            t.launch.gradient_slot_count * ADJUST_PARAMS,
            side_by_side,
        )

    def finish_frame(self, work: FrameWork, gpu_seconds: dict, wait_seconds: float, frame_work_seconds: float) -> None:
        """After the frame's encoder has run: losses, guard, evaluation, what the budget learns."""
        if work.steps:
            self.pending_steps = max(0, self.pending_steps - len(work.steps))
            self._take_losses(work.steps, self.trainer.losses.read())
        if work.eval_complete:
            summary = self.evaluator.read_summary()
            self._take_summary(summary)
            if time.perf_counter() - self._last_eval_time >= EVAL_INTERVAL_S or self.history.current.eval.count == 0:
                self._take_evaluation(summary, self.evaluator.complete.step)
        # Without timestamp queries, charge the whole GPU wait to each part: cautious, not exact.
        train_gpu = gpu_seconds.get("training", wait_seconds) if work.training.kind else 0.0
        eval_gpu = gpu_seconds.get("heatmaps", wait_seconds) if work.cells else 0.0
        training_seconds = work.training_seconds(train_gpu)
        other = frame_work_seconds - training_seconds - eval_gpu
        self.budget.observe(work.training, training_seconds, work.cells, eval_gpu, other)
        now = time.perf_counter()
        self._throughput.append((now, self.trainer.samples_seen))
        while now - self._throughput[0][0] > THROUGHPUT_WINDOW_S and len(self._throughput) > 2:
            self._throughput.popleft()

    def seconds_per_step(self) -> float:
        """What a whole step costs, as the frame budget has measured it."""
        return self.budget.step_seconds(self._step_shape())

    def samples_per_second(self) -> float:
        """Samples trained per second of wall time over the last second (what a user sees)."""
        if len(self._throughput) < 2:
            return 0.0
        (t0, s0), (t1, s1) = self._throughput[0], self._throughput[-1]
        return (s1 - s0) / (t1 - t0) if t1 > t0 else 0.0
