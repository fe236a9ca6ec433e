"""The sweep's Optuna study, in DIR/study.journal: opened or made, and its trials as the rows of
trials.csv. A trial a stopped sweep (Ctrl+C, a crash) left running stays open in the journal,
"interrupted", with its curve so far; --resume runs it again under its own number. The journal is
the sweep's state: trials.csv and best.json are rewritten from it."""

from __future__ import annotations

from pathlib import Path

import optuna
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend
from optuna.trial import FrozenTrial, TrialState

from ..errors import UserError
from .space import Space
from .table import TrialRecord

JOURNAL_FILE = "study.journal"
STUDY_NAME = "sweep"
INTERRUPTED = "interrupted"  # a trial left running by a sweep that stopped: --resume runs it again
_STATES = {TrialState.COMPLETE: "complete", TrialState.PRUNED: "pruned", TrialState.FAIL: "failed"}


def storage_in(folder: Path) -> JournalStorage:
    return JournalStorage(JournalFileBackend(str(folder / JOURNAL_FILE)))


def open_study(storage: JournalStorage, space: Space) -> optuna.Study:
    """The sweep's study in `storage`, made on the first call."""
    direction = "minimize" if space.mode == "min" else "maximize"
    return optuna.create_study(storage=storage, study_name=STUDY_NAME, direction=direction, load_if_exists=True)


def unfinished(study: optuna.Study) -> list[FrozenTrial]:
    """Trials asked for and never told, in trial order: while no sweep runs the folder (its lock),
    those a stopped sweep left running."""
    return sorted((t for t in study.get_trials(deepcopy=False) if not t.state.is_finished()), key=lambda t: t.number)


def records(study: optuna.Study, space: Space, interrupted: bool = False) -> list[TrialRecord]:
    """The finished trials, in trial order; with `interrupted`, the unfinished ones too, as
    "interrupted" rows (only where no sweep is running them)."""
    trials = [
        t for t in study.get_trials(deepcopy=False) if t.state in _STATES or (interrupted and not t.state.is_finished())
    ]
    return [_record(trial, space) for trial in sorted(trials, key=lambda t: t.number)]


def _record(trial: FrozenTrial, space: Space) -> TrialRecord:
    attributes = dict(trial.user_attrs)
    if not trial.state.is_finished():
        attributes |= _interrupted_at(trial)
    values = space.values_of(trial.params) if set(space.fields) <= set(trial.params) else {}
    try:
        seed = space.config_for(values).seed
    except UserError:  # values the config refuses: the trial failed on them, its row says so
        seed = None
    return TrialRecord(
        number=trial.number,
        state=_STATES.get(trial.state, INTERRUPTED),
        value=attributes.get("value"),
        steps=attributes.get("step"),
        wall_s=attributes.get("wall_s"),
        gpu=attributes.get("gpu", ""),
        seed=seed,
        values=values,
        note=attributes.get("note", ""),
    )


def _interrupted_at(trial: FrozenTrial) -> dict:
    """An interrupted trial's row: where its curve got to (its last reported value) and why it has
    no final one."""
    if not trial.intermediate_values:
        return {"note": f"{INTERRUPTED} before its first report: --resume runs it again"}
    step = max(trial.intermediate_values)
    note = f"{INTERRUPTED} at step {step}: --resume runs it again"
    return {"step": step, "value": trial.intermediate_values[step], "note": note}
