"""The window's side of training: a FrameDriver, created by the UI (app/ui/state.py) for one
Session, decides each frame how much training and evaluation fit (the frame budget,
app/budget.py), records that work into the frame's encoder and takes the results back once the
frame's GPU work has run. Headless runs never make one: they call Session.advance.

It owns what only the window needs: the frame budget, the GPU timer it learns from, the single
steps asked for while paused, the samples/s shown and when the loss curve last got an eval
point. It reaches the session through a small interface: it reads the session's `trainer`,
`evaluator`, `image` (an image target's evaluator, which takes turns with the grid's, a pass
each), `heatmaps`, `guard`, `gpu`, `divergence` and `history.current`, and hands results back
through `take_losses`, `take_summary` and `take_evaluation`. A new network (the session's
trainer replaced) makes the budget guess its costs afresh; a new run (a reset, a rebuild, a
checkpoint loaded) clears the steps asked for and the samples/s."""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass

import slangpy as spy

from .budget import FrameBudget, StepShape, TrainingWork
from .history import Run
from .loss_ring import LOSS_HISTORY
from .plan import ADJUST_PARAMS
from .session import Session
from .timing import GpuTimer
from .trainer import Trainer

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
    image: bool = False  # `cells` are an image target's pixels (app/image_eval.py), not grid cells

    def training_seconds(self, gpu_seconds: float) -> float:
        """What the training cost the frame: recording then running, or the longer of the two
        where they overlapped."""
        if self.overlapped:
            return max(self.record_seconds, gpu_seconds)
        return self.record_seconds + gpu_seconds


class FrameDriver:
    def __init__(self, session: Session):
        self.session = session
        self.budget = FrameBudget()
        self.timer = GpuTimer(session.gpu.device)
        self.pending_steps = 0  # single steps asked for while paused
        self._throughput: collections.deque[tuple[float, int]] = collections.deque()
        self._last_eval_time = -1.0
        self._image_turn = False  # an image target's evaluation goes next (app/image_eval.py)
        self._trainer: Trainer | None = None  # the network the budget has learned the costs of
        self._run: Run | None = None  # the run the bookkeeping below belongs to
        self._follow_session()

    def _follow_session(self) -> None:
        """Catches up with a network or run the session started since the last call."""
        session = self.session
        if session.trainer is not self._trainer:
            self._trainer = session.trainer
            plan = session.trainer.plan  # a grid's cost per sample: its levels' corners, not its tables
            self.budget.forget_network(
                plan.mlp_param_count + 8 * plan.input_dim * bool(plan.grid), session.gpu.software
            )
        if session.history.current is not self._run:
            self._run = session.history.current
            self.pending_steps = 0
            self._throughput.clear()
            self._last_eval_time = -1.0

    def step_once(self) -> None:
        """One more step while paused (the S key)."""
        self._follow_session()
        self.pending_steps += 1

    def record_frame(self, encoder: spy.CommandEncoder, running: bool) -> FrameWork:
        """Records this frame's training and evaluation, as much as the budget allows."""
        self._follow_session()
        start = time.perf_counter()
        session, timer = self.session, self.timer
        t = session.trainer
        train = session.divergence is None and (running or self.pending_steps > 0)
        evaluator, kind = self._evaluator_now()
        cells, eval_seconds = 0, 0.0
        if evaluator is not None:
            cells, eval_seconds = self.budget.plan_eval(evaluator.cells - evaluator.progress, evaluator.cells, kind)
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
        steps, overlapped = self._record_training(encoder, work)
        record_seconds = time.perf_counter() - start
        timer.mark(encoder, 1)
        complete = evaluator.record(encoder, cells) if cells else False
        grid = session.evaluator
        if session.heatmaps is not None and 0 < grid.passes != session.heatmaps.drawn:
            session.heatmaps.record_draw(encoder)
        if complete and kind == "cells":
            grid.record_summary(encoder)
        t.losses.record_readback(encoder, steps)
        timer.mark(encoder, 2)
        return FrameWork(work, steps, cells, complete, record_seconds, overlapped, image=kind == "pixels")

    def _evaluator_now(self):
        """(the evaluator whose pass this frame advances, its budget kind), or (None, ""): the
        grid evaluation, and an image target's evaluation in turns, a pass each."""
        grid, image = self.session.evaluator, self.session.image
        ready = [e for e in (grid, image) if e is not None and e.stale() and e.can_start()]
        in_progress = [e for e in ready if e.progress > 0]
        if in_progress:
            chosen = in_progress[0]
        elif len(ready) == 2:
            chosen = image if self._image_turn else grid
        else:
            chosen = ready[0] if ready else None
        if chosen is None:
            return None, ""
        return chosen, "pixels" if chosen is image else "cells"

    def _record_training(self, encoder: spy.CommandEncoder, work: TrainingWork) -> tuple[range, bool]:
        """Marks the frame's start and records its training. Whole steps beyond FRAME_SUBMIT_STEPS
        go in command buffers of their own, submitted at once, so that the GPU runs them while the
        CPU records the rest and the UI; the last ones go in the frame's encoder."""
        t, guard, gpu = self.session.trainer, self.session.guard, self.session.gpu
        if work.kind != "steps" or work.units <= FRAME_SUBMIT_STEPS:
            self.timer.mark(encoder, 0)
            if not work.kind:
                return range(0), False
            if not t.progress.started:
                guard.record_snapshot(encoder)
            return (t.record_steps if work.kind == "steps" else t.record_piece)(encoder, work.units), False
        first, remaining = t.step, work.units
        lead = gpu.device.create_command_encoder()
        self.timer.mark(lead, 0)
        guard.record_snapshot(lead)
        while remaining > FRAME_SUBMIT_STEPS:
            t.record_steps(lead, FRAME_SUBMIT_STEPS)
            remaining -= FRAME_SUBMIT_STEPS
            gpu.submit_buffer(lead.finish())  # at most MAX_IN_FLIGHT: the CPU waits for the GPU
            if remaining > FRAME_SUBMIT_STEPS:
                lead = gpu.device.create_command_encoder()
        t.record_steps(encoder, remaining)
        return range(first, t.step), True

    def _step_shape(self) -> StepShape:
        t = self.session.trainer
        side_by_side = t.plan.gradient_path == "tiles" and not self.session.gpu.software
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
        session = self.session
        if work.steps:
            self.pending_steps = max(0, self.pending_steps - len(work.steps))
            session.take_losses(work.steps, session.trainer.losses.read())
        if work.eval_complete:
            self._image_turn = not work.image
        if work.eval_complete and work.image:
            session.image.take_pass()
        elif work.eval_complete:
            summary = session.evaluator.read_summary()
            session.take_summary(summary)
            now = time.perf_counter()
            if now - self._last_eval_time >= EVAL_INTERVAL_S or session.history.current.eval.count == 0:
                if session.take_evaluation(summary, session.evaluator.complete.step):
                    self._last_eval_time = now
        # Without timestamp queries, charge the whole GPU wait to each part: cautious, not exact.
        train_gpu = gpu_seconds.get("training", wait_seconds) if work.training.kind else 0.0
        eval_gpu = gpu_seconds.get("heatmaps", wait_seconds) if work.cells else 0.0
        training_seconds = work.training_seconds(train_gpu)
        other = frame_work_seconds - training_seconds - eval_gpu
        self.budget.observe(
            work.training, training_seconds, work.cells, eval_gpu, other, "pixels" if work.image else "cells"
        )
        now = time.perf_counter()
        self._throughput.append((now, session.trainer.samples_seen))
        while now - self._throughput[0][0] > THROUGHPUT_WINDOW_S and len(self._throughput) > 2:
            self._throughput.popleft()

    def seconds_per_step(self) -> float:
        """What a whole step costs, as the frame budget has measured it."""
        return self.budget.step_seconds(self._step_shape())

    def samples_per_second(self) -> float:
        """Samples trained per second of wall time over the last second (what a user sees)."""
        self._follow_session()
        if len(self._throughput) < 2:
            return 0.0
        (t0, s0), (t1, s1) = self._throughput[0], self._throughput[-1]
        return (s1 - s0) / (t1 - t0) if t1 > t0 else 0.0
