"""One trial of a sweep in a Ray worker: a headless run (app/run/headless.py's `run`) of the base
config with the trial's values, into DIR/trials/<trial>/. Each evaluation's metric goes to Tune,
whose scheduler may stop the trial; the last is reported once the files are written, so a row never
comes before its folder. How a trial stops early: docs/architecture.md, 'app/sweep/'."""

# ruff: noqa: E402 (PyTorch is marked absent before the imports that load SlangPy, then unmarked)
from __future__ import annotations

import functools
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

# A Ray worker is one of the app's processes: SlangPy, imported below, must not load PyTorch, as
# app/entry/fast_start.py keeps it from the others (seconds of a worker's start: docs/benchmarks.md).
# The mark goes once SlangPy is in: Ray's tune.report imports torch wherever sys.modules names it.
_TORCH_MARKED = "slangpy" not in sys.modules and "torch" not in sys.modules
if _TORCH_MARKED:
    sys.modules["torch"] = None

from ray import tune

from ..errors import first_line
from ..files.start import Start
from ..files.tensorboard_events import TensorboardOptions
from ..gpu.device import describe
from ..loop.session import Session
from ..views.point_metrics import finite_or_none
from .space import Space
from .table import trial_name

if _TORCH_MARKED:
    del sys.modules["torch"]

TRIAL_KEY = "sweep_trial"  # a trial's Optuna trial number, beside its values in Tune's config
TRIALS_FOLDER = "trials"


@dataclass(frozen=True)
class TrialPlan:
    """What every trial of a sweep shares (sent to each Ray worker)."""

    space: Space
    folder: str  # the sweep folder, absolute
    eval_every: int
    cwd: str  # where the sweep started: paths in the base config are relative to it
    device: str = "auto"  # the GPU API, as --device takes it
    tensorboard: TensorboardOptions | None = None  # the sweep's --tensorboard: each trial in DIR/<trial>/


class TrialFailed(Exception):
    """A trial's error, as the one line trials.csv shows."""


def metric_value(session: Session, metric: str) -> float | None:
    """The metric as the run's summary.json reports it now; None where it is not finite."""
    if metric == "eval_loss":
        return finite_or_none(session.eval_loss)
    if metric == "train_loss":
        return finite_or_none(session.train_loss)
    if metric == "psnr":
        return finite_or_none(session.image.psnr) if session.image is not None else None
    return finite_or_none((session.metrics or {}).get(metric))  # a dataset's test_loss, test_accuracy


def adapter_of(session: Session) -> str:
    """The adapter that ran a trial: its name, with the UUID that tells GPUs of one model apart
    where it has one (app/gpu/adapters.py), else the device's adapter name."""
    adapter = session.gpu.adapter
    return adapter.label() if adapter is not None else describe(session.gpu.device)["adapter"]


def result_of(session: Session, metric: str, value: float, wall_seconds: float) -> dict:
    """What a trial reports to Tune: the metric, the step (the schedulers' time), and what its
    row shows besides."""
    return {metric: value, "step": session.trainer.step, "wall_s": wall_seconds, "gpu": adapter_of(session)}


# A trial's evaluations go to Tune at most this often: tune.report waits for Tune's driver, and a
# report at every evaluation slowed small trials (docs/benchmarks.md, 'Sweeps'). The schedulers
# compare trials at the steps they report, so fewer reports only delay a stop.
REPORT_INTERVAL_S = 1.0


class Reporter:
    """The run's evaluation callback: each evaluation's metric to Tune, until the last (the run's
    end or a divergence), which run_trial reports after the files are written. Tune stops a trial
    by ending the tune.report it waits in with SystemExit: kept here, the run stops, writes its
    files as an interrupted run, and the exit is raised again after that."""

    def __init__(self, metric: str, iterations: int):
        self.metric = metric
        self.iterations = iterations
        self.stop: SystemExit | None = None
        self._reported_at = -REPORT_INTERVAL_S  # wall seconds of the run at the last report

    def __call__(self, session: Session, wall_seconds: float) -> bool:
        if session.trainer.step >= self.iterations or session.divergence is not None:
            return True
        if wall_seconds - self._reported_at < REPORT_INTERVAL_S:
            return True
        value = metric_value(session, self.metric)
        if value is None:  # nothing a scheduler could compare
            return True
        self._reported_at = wall_seconds
        try:
            tune.report(result_of(session, self.metric, value, wall_seconds))
        except SystemExit as stop:
            self.stop = stop
            return False
        return True


@functools.cache
def worker_gpu(kind: str = "auto"):
    """The worker's one device, kept from trial to trial (reuse_actors) with its compiled kernels.
    Made as a headless run makes it: Ray has set CUDA_VISIBLE_DEVICES to the worker's GPU, which
    the device honours."""
    from ..gpu.gpu import create_gpu

    return create_gpu(kind)


def run_trial(config: dict, plan: TrialPlan) -> None:
    """Tune's trial function: `config` holds the trial's number and its searched values."""
    from ..run import headless  # the app's GPU side: in the worker only

    space = plan.space
    out = Path(plan.folder) / TRIALS_FOLDER / trial_name(config[TRIAL_KEY])
    reporter = Reporter(space.metric, space.iterations)
    try:
        trial_config = space.config_for(space.values_of(config))
        if os.path.isdir(plan.cwd):  # Tune starts each trial in a folder of its own
            os.chdir(plan.cwd)
        shutil.rmtree(out, ignore_errors=True)  # an interrupted attempt's files, replaced by this run's
        tensorboard = plan.tensorboard.within(out.name, space.fields, space.metric) if plan.tensorboard else None
        options = headless.RunOptions(eval_every=plan.eval_every, quiet=True, tensorboard=tensorboard)
        run = headless.run(worker_gpu(plan.device), Start(trial_config), space.iterations, out, reporter, options)
    except Exception as error:
        raise TrialFailed(first_line(error)) from None
    failure = run.written.error_line()
    if failure is not None:
        raise TrialFailed(failure)
    if reporter.stop is not None:
        raise reporter.stop
    result = run.result
    value = metric_value(run.session, space.metric)
    if value is None:
        raise TrialFailed(f"no finite {space.metric} at step {result.steps}")
    final = result_of(run.session, space.metric, value, result.wall_seconds)
    tune.report(final if result.diverged_at is None else {**final, "diverged_at": result.diverged_at})
