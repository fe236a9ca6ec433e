"""The sweep's Optuna study, in DIR/study.journal (a JournalStorage over a journal file): opened
or made, its trials as the rows of trials.csv, and trials left unfinished by a sweep that
stopped (Ctrl+C, a crash) closed as failed, "interrupted". The journal is the sweep's state:
--resume goes on from it, and trials.csv and best.json are rewritten from it."""

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
INTERRUPTED = "interrupted"
_STATES = {TrialState.COMPLETE: "complete", TrialState.PRUNED: "pruned", TrialState.FAIL: "failed"}


def storage_in(folder: Path) -> JournalStorage:
    return JournalStorage(JournalFileBackend(str(folder / JOURNAL_FILE)))


def open_study(storage: JournalStorage, space: Space) -> optuna.Study:
    """The sweep's study in `storage`, made on the first call."""
    direction = "minimize" if space.mode == "min" else "maximize"
    return optuna.create_study(storage=storage, study_name=STUDY_NAME, direction=direction, load_if_exists=True)


def close_unfinished(study: optuna.Study) -> None:
    """Trials asked for and never told (running when the sweep stopped) become failed,
    "interrupted", and count among the sweep's trials."""
    unfinished = [t for t in study.get_trials(deepcopy=False) if not t.state.is_finished()]
    for trial in unfinished:  # _trial_id: the storage's key, which a FrozenTrial keeps under that name
        study._storage.set_trial_user_attr(trial._trial_id, "note", INTERRUPTED)
        study.tell(trial.number, state=TrialState.FAIL)


def records(study: optuna.Study, space: Space) -> list[TrialRecord]:
    """The finished trials, in trial order."""
    finished = [t for t in study.get_trials(deepcopy=False) if t.state in _STATES]
    return [_record(trial, space) for trial in sorted(finished, key=lambda t: t.number)]


def _record(trial: FrozenTrial, space: Space) -> TrialRecord:
    attributes = trial.user_attrs
    values = space.values_of(trial.params) if set(space.fields) <= set(trial.params) else {}
    try:
        seed = space.config_for(values).seed
    except UserError:  # values the config refuses: the trial failed on them, its row says so
        seed = None
    return TrialRecord(
        number=trial.number,
        state=_STATES[trial.state],
        value=attributes.get("value"),
        steps=attributes.get("step"),
        wall_s=attributes.get("wall_s"),
        gpu=attributes.get("gpu", ""),
        seed=seed,
        values=values,
        note=attributes.get("note", ""),
    )
