"""A sweep's run: Ray started (or joined), the study opened, and a Ray Tune Tuner that runs the
trials the sweep still lacks (those a stopped sweep left running first), with SweepSearch asking
Optuna for their values and a scheduler stopping the poor ones early. trials.csv and best.json
are rewritten from the journal as each trial finishes, and at the end with the interrupted rows.
Ray's logs stay in its session folder, Tune prints nothing, a progress bar counts the trials."""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import optuna
import ray
from ray import tune
from tqdm import tqdm

from ..errors import UserError, first_line
from ..files.tensorboard_events import TensorboardOptions
from ..interrupts import ctrl_c_deferred
from . import journal
from .search import SweepSearch, scheduler_for, trainable
from .sharing import mps_running, sharing_note
from .space import Space
from .table import TrialRecord, best_of, trial_name, write_tables
from .trial import TrialPlan

# Without GPUs (a CPU driver such as lavapipe) a trial takes this many of Ray's CPUs: most of a
# small trial is its Session's set-up and its files, single-threaded work that runs beside another
# trial's, so trials side by side finish sooner (docs/benchmarks.md, 'Sweeps').
CPUS_PER_TRIAL = 1
# Ray starts a worker a CPU for the driver's tasks; Tune runs each trial in an actor with a runtime
# environment of its own (env_vars), which those never serve: they would only idle, so none start.
NO_IDLE_WORKERS = {"prestart_worker_first_driver": False}


@dataclass(frozen=True)
class SweepOptions:
    trials_per_gpu: int = 1
    eval_every: int = 100
    quiet: bool = False
    device: str = "auto"  # each trial's GPU API (--device)
    tensorboard: TensorboardOptions | None = None  # --tensorboard: the trials' event files


@dataclass(frozen=True)
class SweepOutcome:
    records: list[TrialRecord]  # every trial asked for, this run's and earlier ones', interrupted ones too
    best: TrialRecord | None
    trials: int  # how many the sweep is asked for

    @property
    def finished(self) -> list[TrialRecord]:
        return [record for record in self.records if record.state != journal.INTERRUPTED]

    @property
    def interrupted(self) -> bool:
        """Stopped (Ctrl+C) before all its trials finished: --resume runs the rest."""
        return len(self.finished) < self.trials


def outcome_in(folder: Path, space: Space) -> SweepOutcome:
    """The sweep in `folder` as it stands while no sweep runs it, its tables rewritten: trials a
    stopped sweep left running are its interrupted rows. The study is made where there is none."""
    study = journal.open_study(journal.storage_in(folder), space)
    records = journal.records(study, space, interrupted=True)
    write_tables(folder, records, space)
    return SweepOutcome(records, best_of(records, space), space.trials)


class SweepRecorder(tune.Callback):
    """Tune's callback: each trial's Tune object for its error (SweepSearch), and the tables and
    the progress bar after each trial is told (Tune tells the search first)."""

    def __init__(self, search: SweepSearch, study: optuna.Study, folder: Path, space: Space, bar: tqdm):
        self.search, self.study, self.folder, self.space, self.bar = search, study, folder, space, bar

    def on_trial_start(self, iteration, trials, trial, **info) -> None:
        self.search.tune_trials[trial.trial_id] = trial

    def on_trial_complete(self, iteration, trials, trial, **info) -> None:
        self.record()

    def on_trial_error(self, iteration, trials, trial, **info) -> None:
        self.record()

    def record(self) -> list[TrialRecord]:
        records = journal.records(self.study, self.space)
        write_tables(self.folder, records, self.space)
        self.bar.update(len(records) - self.bar.n)
        best = best_of(records, self.space)
        if best is not None:
            self.bar.set_postfix_str(f"best {self.space.metric} {best.value:.6g} (trial {trial_name(best.number)})")
        return records


def _concurrent_trials(trials_per_gpu: int) -> int:
    """How many trials Ray's resources run at once, each taking _trial_resources."""
    resources = ray.cluster_resources()
    cpus = int(resources.get("CPU", 1))
    if resources.get("GPU", 0) > 0:
        return max(1, min(int(resources["GPU"]) * trials_per_gpu, cpus))
    return max(1, cpus // CPUS_PER_TRIAL)


def start_ray(address: str | None) -> None:
    """Ray on this machine (started here, no dashboard), or the cluster at `address`. Its
    workers' logs stay in its session folder (log_to_driver=False). A cluster that can't be
    joined is a UserError."""
    quiet = {"log_to_driver": False, "logging_level": logging.ERROR}
    try:
        with ctrl_c_deferred():
            if address is None:  # "local": a Ray of its own, even where RAY_ADDRESS names another
                ray.init(address="local", include_dashboard=False, _system_config=NO_IDLE_WORKERS, **quiet)
            else:
                ray.init(address=address, **quiet)
    except KeyboardInterrupt:  # pressed while Ray started: taken now that it has
        stop_ray()
        raise
    except (ConnectionError, RuntimeError, ValueError) as error:
        if address is None:
            raise UserError(f"cannot start Ray on this machine: {first_line(error)}") from None
        hint = " (a cluster with token authentication needs RAY_AUTH_MODE=token)"
        hint = "" if os.environ.get("RAY_AUTH_MODE") else hint
        raise UserError(f"cannot join the Ray cluster at {address}: {first_line(error)}{hint}") from None


def stop_ray() -> None:
    with ctrl_c_deferred():
        ray.shutdown()


def run_sweep(folder: Path, space: Space, options: SweepOptions) -> SweepOutcome:
    """Runs the trials `folder`'s study still lacks, up to space.trials, on the Ray that
    start_ray started or joined (shut down at the end): first those a stopped sweep left running,
    each under its own number and values. A second Ctrl+C (KeyboardInterrupt) propagates once the
    tables are written."""
    storage = journal.storage_in(folder)
    study = journal.open_study(storage, space)
    done = len(journal.records(study, space))
    rerun = journal.unfinished(study)
    note = sharing_note(options.trials_per_gpu, ray.cluster_resources().get("GPU", 0), options.device, mps_running())
    if note is not None and not options.quiet:
        print(note, file=sys.stderr)
    bar = tqdm(total=space.trials, initial=done, unit="trial", file=sys.stderr, disable=options.quiet or None)
    tune_folder = tempfile.mkdtemp(prefix="visual-trainer-tune-")  # Tune's own records: the journal is ours
    try:
        seed = space.seed + len(study.trials)  # a resumed sweep does not draw its first points again
        search = SweepSearch(space, journal.STUDY_NAME, storage, seed, rerun)
        recorder = SweepRecorder(search, study, folder, space, bar)
        _tuner(folder, space, options, search, recorder, space.trials - done, tune_folder).fit()
    finally:
        bar.close()
        try:
            stop_ray()  # before the tables: no trial is running any more
        finally:
            shutil.rmtree(tune_folder, ignore_errors=True)
            outcome = outcome_in(folder, space)
    return outcome


def _tuner(folder, space, options, search, recorder, remaining: int, tune_folder: str) -> tune.Tuner:
    plan = TrialPlan(space, str(folder.resolve()), options.eval_every, os.getcwd(), options.device, options.tensorboard)
    return tune.Tuner(
        tune.with_resources(trainable(plan), _trial_resources(options.trials_per_gpu)),
        tune_config=tune.TuneConfig(
            search_alg=search,
            scheduler=scheduler_for(space, options.eval_every),
            num_samples=remaining,
            # Optuna is asked for a trial only when one can start (a trial asked ahead would be
            # sampled without the results of those running, and left "interrupted" by Ctrl+C).
            max_concurrent_trials=_concurrent_trials(options.trials_per_gpu),
            # The next trial in the same worker, its device and kernels kept; but not on CUDA,
            # where a worker's second trial died (SlangPy's CUDA device).
            reuse_actors=options.device != "cuda",
            metric=space.metric,
            mode=space.mode,
        ),
        run_config=tune.RunConfig(
            name="sweep",
            storage_path=tune_folder,
            verbose=0,
            callbacks=[recorder],
            failure_config=tune.FailureConfig(max_failures=0),
        ),
    )


def _trial_resources(trials_per_gpu: int) -> dict[str, float]:
    """One trial a GPU, or --trials-per-gpu K sharing one; without GPUs, CPUS_PER_TRIAL CPUs.
    Ray sets CUDA_VISIBLE_DEVICES in each trial's worker to the GPU it was given."""
    if ray.cluster_resources().get("GPU", 0) > 0:
        return {"cpu": 1, "gpu": 1 / trials_per_gpu}
    return {"cpu": CPUS_PER_TRIAL}


def quiet_libraries() -> None:
    """Ray Tune's and Optuna's console output (a table at the start, a line a trial, a way to
    resume through Tune's own state) is not this command's: its progress bar and last line are."""
    os.environ["RAY_AIR_NEW_OUTPUT"] = "0"  # Tune's older output, which verbose=0 silences
    for name in ("ray", "ray.tune", "ray.train", "ray.air"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", module="ray")
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
