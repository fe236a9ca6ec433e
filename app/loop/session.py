"""THE training loop, for the window and headless runs alike: a Session owns the trainer and a run's
steps, losses and history, its evaluations, the divergence guard and the swap to a rebuilt network.
Headless runs call `advance` (headless_steps.py); the window's FrameDriver records each frame's work
and hands results back through `take_losses`, `take_summary` and `take_evaluation`."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import slangpy as spy

from ..config.config import Config, fields_of
from ..config.spec import STRUCTURE
from ..config.truths import truth_name
from ..errors import first_line
from ..gpu.gpu import Gpu
from ..train.trainer import Trainer
from ..truth.finite import check_finite, check_truth_finite
from ..truth.space import depth_range
from ..views.evaluation import VIEWS, GridEvaluator, Summary
from ..views.heatmaps import Contours, HeatmapImages
from ..views.image_eval import ImageEvaluator
from .budget import Rate
from .carry import carry_trainer, default_rows, problem_name, problem_of
from .guard import Divergence, DivergenceGuard
from .headless_steps import HeadlessSteps
from .history import LossRecord, Run, RunHistory
from .rebuild import Rebuild
from .stable_network import StableNetwork


class Session(HeadlessSteps):
    def __init__(self, gpu: Gpu, config: Config, grid: int | None = None, heatmaps: bool = False):
        self.gpu = gpu
        self.grid = grid or config.eval_grid
        check_finite(config.targets, config.domain, self.grid, depth_range(config.truth_settings))
        self.eval_every = 100
        self.history = RunHistory()
        self.rebuild: Rebuild | None = None
        self._after_rebuild: Callable[[Session], None] | None = None
        self._kept_rows: list[int | None] | None = None  # a rebuild's outputs from the old ones
        self.rebuild_error: str | None = None
        self.divergence: Divergence | None = None
        self._step_rate = Rate()  # headless chunk sizing
        self._wants_heatmaps = heatmaps
        self.heatmaps: HeatmapImages | None = None
        self._plan_sdf = None  # the installed network's distance-field truth, if any
        self._install(Trainer(gpu, config))
        if config.slang_target:  # no numpy twin: its truth is checked as the GPU evaluates it
            check_truth_finite(
                (self.evaluator.read() if self.evaluator.passes else self.evaluator.evaluate()).truths,
                config.slang_target,
                config.domain,
            )

    def _install(
        self, trainer: Trainer, evaluator: GridEvaluator | None = None, heatmaps: HeatmapImages | None = None
    ) -> None:
        self.trainer = trainer
        self.evaluator = evaluator or GridEvaluator(trainer, self.grid)
        earlier = self.heatmaps
        self.heatmaps = heatmaps or (HeatmapImages(self.evaluator) if self._wants_heatmaps else None)
        if earlier is not None and self.heatmaps is not None:
            self.heatmaps.contours = earlier.contours  # a view setting: a new network keeps it
        distance_field = trainer.plan.sdf or trainer.plan.mesh  # a shape's, or a mesh's
        if self.heatmaps is not None and distance_field and self._plan_sdf is None:
            self.heatmaps.contours = Contours(shown=True)  # a distance field's look: its zero level
        self._plan_sdf = distance_field
        self.image = ImageEvaluator(trainer) if trainer.plan.image is not None else None  # its PSNR
        self.guard = DivergenceGuard(trainer)
        self.stable = StableNetwork(trainer)
        self._start_run()

    def _start_run(self) -> None:
        plan = self.trainer.plan
        label = f"{truth_name(self.config)}, {'-'.join(map(str, plan.sizes))} seed {self.config.seed}"
        self.history.start(label, plan.loss_name, problem_name(plan))
        self.divergence = None
        self.eval_loss = self.eval_grad_loss = float("nan")
        self.metrics: dict | None = None  # points: the last evaluation's train/test loss and accuracy
        outputs = self.trainer.plan.output_dim
        self.error_max = np.ones((VIEWS, outputs), np.float32)  # per view (values, d/dx, d/dy, |gradient|)
        self.invalid_cells = np.zeros((VIEWS, outputs), np.uint32)  # NaN or inf, per view and output
        self.stable.settings_changed()
        self.evaluator.progress = 0
        if self.image is not None:
            self.image.start_run()

    @property
    def config(self) -> Config:
        return self.trainer.config

    @property
    def building(self) -> Config:
        """The config a change builds on: the rebuild's, if one is under way (not to drop it)."""
        return self.rebuild.config if self.rebuild is not None else self.config

    @property
    def train_loss(self) -> float:
        return self.history.current.train.last

    # ---- changes ------------------------------------------------------------------------
    def apply(self, config: Config) -> None:
        """A change of hot fields, from the next piece of work on (structure: start_rebuild). The
        first change after a stable stretch keeps that network to go back to (app/loop/stable_network.py).
        One that picks another compiled step (a derivative weight from 0 to above or back) starts
        a rebuild instead, which goes on from this network's weights and step."""
        if self.gpu.plan(config) != self.trainer.plan:
            self.start_rebuild(config)
            return
        self.stable.before_change(self.divergence is not None)
        self.trainer.apply(config)
        self.stable.settings_changed()

    def reset(self, seed: int | None = None) -> None:
        """Fresh weights (from `seed`, or the config's), a new run on the loss plot."""
        self.trainer.reset(seed)
        self._restart()

    def continue_history(self, runs: list[Run]) -> None:
        """After the trainer's whole state was replaced (a checkpoint): the saved loss history,
        whose last run goes on (with this network's loss and problem, where it was saved
        without them), a fresh guard and no earlier network to go back to."""
        self._restart()
        runs[-1].loss = runs[-1].loss or self.trainer.plan.loss_name
        runs[-1].problem = runs[-1].problem or problem_name(self.trainer.plan)
        self.history.runs = runs

    def _restart(self) -> None:
        self.guard = DivergenceGuard(self.trainer)
        self.stable.forget()
        self._start_run()

    def resume(self, lr_factor: float = 1.0, lr: float | None = None) -> None:
        """Trains again after a divergence, with the learning rate scaled by `lr_factor`, or at
        `lr`. With a new rate the optimizer's moments start afresh: what they gathered on the
        way to the divergence (a huge SGD velocity, say) would throw the network out again."""
        lr = self.config.lr * lr_factor if lr is None else lr
        if lr != self.config.lr:
            self.apply(self.config.replace(lr=lr))
            self.trainer.reset_optimizer()
        self.divergence = None

    @property
    def stable_step(self) -> int | None:
        """The step of the last stable network kept (app/loop/stable_network.py), if one was."""
        return self.stable.kept.step if self.stable.kept is not None else None

    def go_back_to_stable(self) -> None:
        """After a divergence: back to the last stable network, with the settings it had."""
        self.stable.put_back()
        self.divergence = None
        run = self.history.current  # the curve goes back with the network
        run.train.drop_after(self.trainer.step)
        run.eval.drop_after(self.trainer.step)
        self.evaluator.progress = 0  # a pass under way evaluates a network that is gone

    def restorable_config(self) -> Config | None:
        """The config worth starting the next session with: never one that just diverged (then
        the last stable one, or None)."""
        if self.divergence is None:
            return self.config
        return self.stable.kept.config if self.stable.kept is not None else None

    def change(self, config: Config) -> None:
        """A change made on `building` (the window's data and loss weights): live where the current
        network's compiled step takes it (the trainer makes new points), a rebuild under way then
        dropped, since `config` no longer needs it; else a rebuild, started again if one was under
        way. A UserError changes nothing."""
        if self.gpu.plan(config) == self.trainer.plan:
            self.cancel_rebuild()
            self.apply(config)
        else:
            self.start_rebuild(config)

    # ---- rebuilds -----------------------------------------------------------------------
    def start_rebuild(
        self, config: Config, then: Callable[[Session], None] | None = None, rows: list[int | None] | None = None
    ) -> None:
        """Starts building `config`'s network; a target that is not finite on the grid is a
        UserError, and the current network goes on. When only the truth changes within one
        problem, the new network goes on from the current weights and step: output j continues
        old output rows[j] (by default the one of the same index), and an output with none
        starts fresh; another problem starts at step 0 (app/loop/carry.py). `then(session)` runs
        once the new network is in (a checkpoint of another architecture puts its state in)."""
        check_finite(config.targets, config.domain, self.grid, depth_range(config.truth_settings))
        self.cancel_rebuild()
        self.rebuild_error = None
        keep = (
            then is None
            and all(getattr(config, f) == getattr(self.config, f) for f in fields_of(STRUCTURE))
            and problem_of(self.gpu.plan(config)) == problem_of(self.trainer.plan)
        )
        self.rebuild = Rebuild(self.gpu, config, self.grid, self._wants_heatmaps, keep_weights=keep)
        rows = rows or default_rows(self.config.output_dim, config.output_dim)
        self._kept_rows = [r if r is not None and r < self.config.output_dim else None for r in rows]
        self._after_rebuild = then

    def poll_rebuild(self) -> bool:
        """Advances a rebuild by one stage; swaps the new network in once it is ready."""
        job = self.rebuild
        if job is None or not job.ready():
            return False
        self.rebuild = None
        try:
            trainer, evaluator, heatmaps = job.finish()
            if job.keep_weights:
                carry_trainer(self.trainer, trainer, self._kept_rows)
        except Exception as error:  # a compile failure: keep training the old network
            self.rebuild_error = f"rebuild failed: {first_line(error)}"
            return False
        self._install(trainer, evaluator, heatmaps)
        then, self._after_rebuild = self._after_rebuild, None
        if then is not None:
            then(self)
        return True

    def cancel_rebuild(self) -> None:
        if self.rebuild is not None:
            self.rebuild.cancel()
            self.rebuild = None
        self._after_rebuild = None

    def complete_step(self) -> None:
        """Finishes now a step the window was recording in pieces, so that the state is at a
        step boundary (a checkpoint is taken only there); its loss is taken as usual."""
        t = self.trainer
        if not t.progress.started:
            return
        with self.gpu.submit() as encoder:
            steps = range(0)
            while not steps:
                steps = t.record_piece(encoder, t.launch.units.learn_units + t.launch.units.adjust_units)
            t.losses.record_readback(encoder, steps)
        self.take_losses(steps, t.losses.read())

    # ---- losses and evaluations ---------------------------------------------------------
    def evaluate(self) -> float:
        """A whole evaluation pass now, recorded as a point of the eval curve (and an image
        target's PSNR on its curve). Its figures come back alone, in one submit and one wait: the
        maps stay on the GPU, where the heatmaps draw them and a run's files read them."""
        with self.gpu.submit() as encoder:
            self.record_evaluation(encoder)
        return self.take_recorded_evaluation()

    def record_evaluation(self, encoder: spy.CommandEncoder) -> None:
        """Records a whole pass of the current network (an image target's too) and the copy of its
        figures; once `encoder` has run, take_recorded_evaluation or drop_recorded_evaluation."""
        if self.image is not None:
            self.image.progress = 0
            self.image.record(encoder)
        self.evaluator.record_figures(encoder)

    def take_recorded_evaluation(self) -> float:
        """The recorded pass's figures, as a point of the eval curve; its loss."""
        if self.image is not None:
            self.image.take_pass()
        summary = self.evaluator.read_summary()
        self.take_evaluation(summary, self.evaluator.complete.step)
        return summary.loss

    def drop_recorded_evaluation(self) -> None:
        """Forgets the recorded pass (it evaluated a network since put back): the pass before it
        is the complete one again, and the eval curve has no point for it."""
        if self.image is not None:
            self.image.drop_pass()
        self.evaluator.drop_pass()

    def take_losses(self, steps: range, losses: np.ndarray) -> np.ndarray:
        losses, divergence = self.guard.check(steps, losses)
        self.divergence = divergence or self.divergence
        run = self.history.current
        # The point at step t is the loss of the network after t - 1 updates: after a divergence the
        # curve ends on the loss of the network put back, which the step trained again replaces.
        run.train.drop_after(steps.start)
        run.train.extend(np.arange(steps.start + 1, steps.start + 1 + len(losses)), losses)
        if divergence is not None:  # an evaluation at step t is of the network after t updates
            run.eval.drop_after(self.trainer.step)
        return losses

    def take_summary(self, summary: Summary) -> None:
        self.eval_loss, self.eval_grad_loss = summary.loss, summary.grad_loss
        self.error_max, self.invalid_cells = summary.error_max, summary.invalid
        self.metrics = summary.metrics

    def take_evaluation(self, summary: Summary, step: int) -> bool:
        """The summary, and a point on the eval curve unless `step` has one already (True)."""
        self.take_summary(summary)
        run = self.history.current
        if run.eval.count and run.eval.last_x == step:
            return False
        run.eval.extend(step, summary.loss)
        for name, value in (summary.metrics or {}).items():
            if name != "test_loss" and value is not None:
                run.metrics.setdefault(name, LossRecord()).extend(step, value)
        return True
