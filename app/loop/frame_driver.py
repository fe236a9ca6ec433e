"""The window's side of training: a FrameDriver, made by the UI for one Session, decides each frame how
much training and evaluation fit (budget.py), submits the training before the UI is built, and takes
the results back once the frame's GPU work has run; headless runs never make one
(docs/architecture.md, 'The window's frame loop')."""

from __future__ import annotations

import collections
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import slangpy as spy

from ..gpu.timing import GpuTimer
from ..kernels.launch_shape import ADJUST_PARAMS
from ..train.loss_ring import LOSS_HISTORY
from ..train.trainer import Trainer
from .budget import FRAME_SECONDS, FrameBudget, StepShape, TrainingWork
from .history import Run
from .session import Session
from .step_cost import StepCost

EVAL_INTERVAL_S = 0.5  # the window plots an eval point at most this often
FRAME_SUBMIT_STEPS = 64  # whole steps per command buffer (the most a buffer takes: app/train/trainer.py SUBMIT_STEPS): the GPU starts on one while the CPU records more
# A frame's first buffer holds few steps: the GPU has been idle since the previous frame's wait,
# and gets to work sooner (docs/benchmarks.md, 'Frame time').
FRAME_FIRST_SUBMIT_STEPS = 4
THROUGHPUT_WINDOW_S = 1.0  # samples/s shown: over the last second
SOFTWARE_FRAME_SECONDS = 1 / 36  # with the frames that draw the UI (~12 a second), ~30 on average


@dataclass
class FrameWork:
    """What one frame does: planned and its training submitted before the UI is built, its
    evaluation recorded after, its results taken once its GPU work has run."""

    cells: int  # the evaluation planned with the training (none if the UI made it moot)
    eval_seconds: float
    training: TrainingWork = field(default_factory=lambda: TrainingWork("", 0, 0))
    steps: range = range(0)
    record_seconds: float = 0.0
    run: Run | None = None  # the run the steps belong to: one the UI ended meanwhile takes none of them
    trainer: Trainer | None = None
    eval_complete: bool = False
    image: bool = False  # `cells` are an image target's pixels (app/views/image_eval.py), not grid cells

    def training_seconds(self, gpu_seconds: float) -> float:
        """What the training cost the frame: the GPU runs it while the CPU records the rest and
        builds the UI, so the longer of recording and running."""
        return max(self.record_seconds, gpu_seconds)


class FrameDriver:
    """What only the window needs: the frame budget, the GPU timer it learns from, the single steps
    asked for while paused, the samples/s shown and when the loss curve last got an eval point. It
    reads the session's trainer, evaluator, image, heatmaps, guard, gpu, divergence and
    history.current. A new network makes the budget guess its costs afresh; a new run (a reset, a
    rebuild, a checkpoint loaded) clears the steps asked for and the samples/s."""

    def __init__(self, session: Session):
        self.session = session
        # A CPU driver aims at 30 frames a second: at 60 its UI alone would fill them.
        self.budget = FrameBudget(SOFTWARE_FRAME_SECONDS if session.gpu.software else FRAME_SECONDS)
        self.timer = GpuTimer(session.gpu.device)
        self.step_cost = StepCost(session.gpu.software)  # estimates for networks not built yet
        self.pending_steps = 0  # single steps asked for while paused
        self._throughput: collections.deque[tuple[float, int]] = collections.deque()
        self._last_eval_time = -1.0
        self._image_turn = False  # an image target's evaluation goes next (app/views/image_eval.py)
        self._trainer: Trainer | None = None  # the network the budget has learned the costs of
        self._run: Run | None = None  # the run the bookkeeping below belongs to
        # Whether input waits to act (a served window's page: app/serve/served_window.py): a frame
        # then records only its first buffer of steps, so the input's frame comes sooner.
        self.input_waiting: Callable[[], bool] = lambda: False
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

    def submit_training(self, running: bool) -> FrameWork:
        """Plans this frame's evaluation and training, as much as the budget allows, and submits
        the training at once, before the UI is built: the GPU trains while the CPU builds it."""
        self._follow_session()
        work = FrameWork(0, 0.0)
        evaluator, kind = self._evaluator_now()
        if evaluator is not None:
            work.cells, work.eval_seconds = self.budget.plan_eval(
                evaluator.cells - evaluator.progress, evaluator.cells, kind
            )
            work.image = kind == "pixels"
        self._train(work, running)
        return work

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

    def _train(self, work: FrameWork, running: bool) -> None:
        """The frame's training, if any is wanted, planned and submitted into `work`."""
        start = time.perf_counter()
        session, t = self.session, self.session.trainer
        # A step whose parameter updates have begun is finished, paused or not: a half-updated
        # network is no state to check, save or show.
        if session.divergence is not None or not (running or self.pending_steps > 0 or t.progress.updating):
            return
        training = self.budget.plan_training(
            max(self.budget.compute_seconds() - work.eval_seconds, 1e-4),
            self._step_shape(),
            t.progress.phase,
            t.progress.started,
        )
        if training.kind == "steps":  # at most the loss ring's length, and the steps asked for while paused
            units = min(training.units, LOSS_HISTORY if running else min(LOSS_HISTORY, self.pending_steps))
            training = TrainingWork("steps", units, units * t.batch_size)
        work.training, work.run, work.trainer = training, session.history.current, t
        work.steps = self._submit_training(training)
        if training.kind == "steps" and len(work.steps) < training.units:  # cut short for input
            work.training = TrainingWork("steps", len(work.steps), len(work.steps) * t.batch_size)
        work.record_seconds = time.perf_counter() - start

    def _submit_training(self, work: TrainingWork) -> range:
        """Records the frame's training into command buffers of its own and submits them. Whole
        steps go in several, each submitted once recorded, so that the GPU runs the first while
        the CPU records the rest: FRAME_FIRST_SUBMIT_STEPS in the first, FRAME_SUBMIT_STEPS after,
        none after the first while input waits."""
        t, guard, gpu = self.session.trainer, self.session.guard, self.session.gpu
        device = gpu.device
        encoder = device.create_command_encoder()
        self.timer.mark(encoder, 0)
        if not t.progress.started:
            guard.record_snapshot(encoder)
        if work.kind != "steps":
            steps = t.record_piece(encoder, work.units)
        else:
            first, remaining = t.step, work.units
            chunk = min(FRAME_FIRST_SUBMIT_STEPS, FRAME_SUBMIT_STEPS)
            while remaining > chunk:
                t.record_steps(encoder, chunk)
                remaining -= chunk
                gpu.submit_buffer(encoder.finish())  # at most MAX_IN_FLIGHT: the CPU waits for the GPU
                encoder = device.create_command_encoder()
                chunk = FRAME_SUBMIT_STEPS
                if self.input_waiting():
                    remaining = 0
                    break
            if remaining:
                t.record_steps(encoder, remaining)
            steps = range(first, t.step)
        self.timer.mark(encoder, 1)
        gpu.submit_buffer(encoder.finish())
        return steps

    def _current(self, work: FrameWork) -> bool:
        """Whether the frame's steps still belong to the session's run and network (the UI may
        have reset, loaded or replaced them while they trained)."""
        return work.run is self.session.history.current and work.trainer is self.session.trainer

    def record_frame(self, encoder: spy.CommandEncoder, work: FrameWork, running: bool) -> None:
        """After the UI was built: the training the UI asked for, if none was submitted (a click
        on run, a single step: they train in the frame of the click), then into the frame's
        encoder the evaluation planned with the training (if there is still one to do), the
        heatmaps and the losses' read-back."""
        session, timer = self.session, self.timer
        if not work.training.kind:
            self._follow_session()
            self._train(work, running)
        if not work.training.kind:
            timer.mark(encoder, 0)
            timer.mark(encoder, 1)
        timer.mark(encoder, 2)
        grid = session.evaluator
        evaluator = session.image if work.image else grid
        if evaluator is None or not (evaluator.stale() and evaluator.can_start()):
            work.cells = 0
        work.eval_complete = evaluator.record(encoder, work.cells) if work.cells else False
        images = session.heatmaps
        if images is not None and (0 < grid.passes != images.drawn or images.dirty):
            images.record_draw(encoder)
        if work.eval_complete and not work.image:
            grid.record_summary(encoder)
        if work.steps and self._current(work):
            work.trainer.losses.record_readback(encoder, work.steps)
        timer.mark(encoder, 3)

    def _step_shape(self) -> StepShape:
        t = self.session.trainer
        side_by_side = t.path.side_by_side and not self.session.gpu.software
        units = t.launch.units
        return StepShape(
            t.batch_size,
            units.learn_units,
            units.learn_unit_samples,
            units.adjust_units,
            t.launch.shape.gradient_slot_count * ADJUST_PARAMS,
            side_by_side,
        )

    def finish_frame(self, work: FrameWork, gpu_seconds: dict, wait_seconds: float, frame_work_seconds: float) -> None:
        """After the frame's encoder has run: losses, guard, evaluation, what the budget learns."""
        session = self.session
        if work.steps and self._current(work):
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
        if work.training.kind and self.budget.step_measured():
            t = session.trainer
            self.step_cost.observe(t.plan, t.config.batch_size, self.seconds_per_step())
        self._note_throughput(work, session.trainer.samples_seen)

    def _note_throughput(self, work: FrameWork, samples: int) -> None:
        """Points (time, samples seen) for samples/s: one where training began, then one each time
        a step completes; over the last second, or the last two completions where steps take
        longer (a wide network on a CPU driver: one step in many frames). A frame that trained
        nothing (paused) ends the series: the pause is no part of any rate."""
        now, points = time.perf_counter(), self._throughput
        if not work.training.kind:
            points.clear()
            return
        if not points or samples != points[-1][1]:
            points.append((now, samples))
        while len(points) > 2 and now - points[1][0] >= THROUGHPUT_WINDOW_S:
            points.popleft()

    def seconds_per_step(self) -> float:
        """What a whole step costs, as the frame budget has measured it."""
        return self.budget.step_seconds(self._step_shape())

    def samples_per_second(self) -> float:
        """Samples trained per second of wall time over the last second, or over the last step
        where a step takes longer (what a user sees); 0 until a step has completed."""
        self._follow_session()
        if len(self._throughput) < 2:
            return 0.0
        (t0, s0), (t1, s1) = self._throughput[0], self._throughput[-1]
        return (s1 - s0) / (t1 - t0) if t1 > t0 else 0.0
