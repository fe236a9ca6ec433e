"""Ray Tune driving Optuna: the search algorithm (Ray's OptunaSearch over the sweep's study in
DIR/study.journal), the samplers, the schedulers that stop trials early, and the trainable that
runs app/sweep/trial.py in each Ray worker."""

from __future__ import annotations

import math
import os

import optuna
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.trial import FrozenTrial, TrialState
from ray import cloudpickle
from ray.train._internal.session import get_session
from ray.tune.schedulers import ASHAScheduler, FIFOScheduler, MedianStoppingRule, TrialScheduler
from ray.tune.search.optuna import OptunaSearch
from ray.tune.trainable.function_trainable import wrap_function

from ..errors import first_line
from .space import Space
from .trial import TRIAL_KEY, TrialPlan, run_trial

# A stopped trial writes its files before its actor ends (SweepTrainable.cleanup): at most this long.
STOP_WRITE_TIMEOUT_S = 120
PRUNED_BY = {"median": "the median rule", "asha": "ASHA", "none": "Tune"}


def distributions(space: Space) -> dict[str, optuna.distributions.BaseDistribution]:
    """Each searched field as an Optuna distribution (a choice's values as their JSON text)."""
    made = {}
    for dimension in space.dimensions:
        if dimension.kind == "choice":
            made[dimension.field] = CategoricalDistribution(dimension.choices)
        elif dimension.kind == "int":
            made[dimension.field] = IntDistribution(dimension.low, dimension.high)
        else:
            log = dimension.kind == "loguniform"
            made[dimension.field] = FloatDistribution(float(dimension.low), float(dimension.high), log=log)
    return made


class _GridSampler(optuna.samplers.GridSampler):
    """Optuna's grid, asked and told by Tune: its after_trial calls study.stop() once every
    combination is taken, which only optimize() allows; Tune asks exactly the grid's size."""

    def after_trial(self, study, trial, state, values) -> None:
        return None


def sampler_for(space: Space, seed: int) -> optuna.samplers.BaseSampler:
    if space.sampler == "grid":
        return _GridSampler({d.field: list(d.choices) for d in space.dimensions}, seed=seed)
    if space.sampler == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    return optuna.samplers.TPESampler(seed=seed)


def scheduler_for(space: Space, eval_every: int) -> TrialScheduler:
    """The pruner, as a Tune scheduler over training steps: OptunaSearch never runs Optuna's
    pruners, Tune's schedulers stop trials. The first evaluation is the earliest a trial may stop."""
    if space.pruner == "median":
        # min_time_slice=inf: never pause a trial to let pending ones run while too few others
        # have reached its step (the rule's default): a trial paused without a checkpoint starts
        # again from step 0.
        return MedianStoppingRule(time_attr="step", grace_period=eval_every, min_time_slice=math.inf)
    if space.pruner == "asha":
        return ASHAScheduler(time_attr="step", max_t=space.iterations, grace_period=min(eval_every, space.iterations))
    return FIFOScheduler()


class SweepSearch(OptunaSearch):
    """OptunaSearch, which asks the study for each trial's values and tells it the outcome, plus
    what the sweep folder needs: each trial learns its Optuna number (its folder's name), and each
    outcome goes into its Optuna trial (steps, seconds, adapter, why it was pruned or failed) before
    it is told, so the journal alone holds what trials.csv shows. A trial that stopped early or
    diverged is told PRUNED, not COMPLETE, so the samplers do not take an early value for a final one."""

    def __init__(self, space: Space, study_name: str, storage, seed: int, rerun: list[FrozenTrial] = ()):
        super().__init__(
            space=distributions(space),
            metric=space.metric,
            mode=space.mode,
            sampler=sampler_for(space, seed),
            study_name=study_name,
            storage=storage,
        )
        self.space = space
        self.tune_trials: dict = {}  # Tune's trials by id, for a failed one's error (SweepRecorder)
        self._reported: dict[str, set[int]] = {}  # the steps each trial's intermediate values are at
        self._rerun = list(rerun)  # trials a stopped sweep left running: asked for again first

    def suggest(self, trial_id: str) -> dict | None:
        if self._rerun and trial_id not in self._ot_trials:
            self._reopen(trial_id, self._rerun.pop(0))
        values = super().suggest(trial_id)
        return None if values is None else {**values, TRIAL_KEY: self._ot_trials[trial_id].number}

    def _reopen(self, trial_id: str, left: FrozenTrial) -> None:
        """Tune's new trial runs an interrupted one again: the same Optuna trial (its number, its
        values, so its seed), its curve so far kept: the same steps give the same values again."""
        self._ot_trials[trial_id] = optuna.trial.Trial(self._ot_study, left._trial_id)
        self._reported[trial_id] = set(left.intermediate_values)

    def on_trial_result(self, trial_id: str, result: dict) -> None:
        """Each evaluation as an intermediate value at its training step (Optuna's own view of
        the curve; Tune's scheduler decides)."""
        if trial_id not in self._completed_trials:
            self._report(trial_id, result[self.metric], result["step"])

    def _report(self, trial_id: str, value: float, step: int) -> None:
        steps = self._reported.setdefault(trial_id, set())
        if step not in steps:  # Optuna keeps a step's first value, and warns about any other
            self._ot_trials[trial_id].report(value, step)
            steps.add(step)

    def on_trial_complete(self, trial_id: str, result: dict | None = None, error: bool = False) -> None:
        if trial_id in self._completed_trials or trial_id not in self._ot_trials:
            return
        ot_trial = self._ot_trials[trial_id]
        state, value, attributes = self._outcome(trial_id, result, error)
        for key, item in attributes.items():
            ot_trial.set_user_attr(key, item)
        if value is not None:  # the last value: Tune tells the search nothing of a result that stops a trial
            self._report(trial_id, value, result["step"])
        self._ot_study.tell(ot_trial, value if state == TrialState.COMPLETE else None, state=state)
        self._completed_trials.add(trial_id)

    def _outcome(self, trial_id: str, result: dict | None, error: bool) -> tuple[TrialState, float | None, dict]:
        """The Optuna state, the metric's last value and the attributes the row shows."""
        result = result or {}
        value = result.get(self.metric)
        value = value if isinstance(value, (int, float)) and math.isfinite(value) else None
        attributes = {key: result[key] for key in ("step", "wall_s", "gpu") if key in result}
        attributes["value"] = value
        if error:
            return TrialState.FAIL, None, {**attributes, "note": self._error_line(trial_id)}
        if "diverged_at" in result:
            return TrialState.PRUNED, value, {**attributes, "note": f"diverged at step {result['diverged_at']}"}
        if "step" not in result:
            return TrialState.FAIL, None, {**attributes, "note": "stopped before it reported"}
        if result["step"] < self.space.iterations:
            note = f"stopped by {PRUNED_BY[self.space.pruner]} at step {result['step']}"
            return TrialState.PRUNED, value, {**attributes, "note": note}
        return TrialState.COMPLETE, value, {**attributes, "note": ""}

    def _error_line(self, trial_id: str) -> str:
        """The trial's error, from the copy Tune has just written beside the driver
        (Trial.get_pickled_error reads the one in Tune's storage, synced later)."""
        trial = self.tune_trials.get(trial_id)
        path = trial.pickled_error_file if trial is not None else None
        if path is None or not os.path.isfile(path):
            return "failed (Ray Tune recorded no error)"
        with open(path, "rb") as handle:
            error = cloudpickle.load(handle)  # a RayTaskError around the trial's own, or a RayActorError
        return first_line(getattr(error, "cause", None) or error)


def trainable(plan: TrialPlan) -> type:
    """Tune's trainable for the sweep's trials: run_trial in Tune's function API, whose cleanup
    waits for a stopped trial to write its files. Tune stops a trial (its scheduler's decision,
    the end of the sweep, Ctrl+C) by ending the tune.report the trial waits in with SystemExit,
    then ends the worker without waiting for it; the trial stops there and writes its files, as
    a headless run does on Ctrl+C (app/sweep/trial.py's Reporter)."""

    def sweep_trial(config: dict) -> None:
        run_trial(config, plan)

    class SweepTrainable(wrap_function(sweep_trial)):
        def cleanup(self) -> None:
            try:
                get_session().finish(timeout=STOP_WRITE_TIMEOUT_S)
            except Exception:  # the trial's own error: Tune's cleanup raises it again, as it would
                pass
            super().cleanup()

    return SweepTrainable
