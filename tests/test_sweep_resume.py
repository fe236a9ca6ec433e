"""A sweep stopped at any moment and resumed, on the sweep's own study and search without Ray
running: trials a stopped sweep left running stay open in the journal as "interrupted" rows with
their curve so far, and each resume asks them again first, under the same number and values,
however often it is stopped; Ctrl+C while Ray starts is taken once it has started; Ctrl+C before
any command's own handling is one line and exit 130."""

from __future__ import annotations

import os
import signal

import pytest

pytest.importorskip("ray")
pytest.importorskip("optuna")

from app.sweep import journal
from app.sweep.search import SweepSearch
from app.sweep.space import space_from
from app.sweep.trial import TRIAL_KEY

ITERATIONS = 60
SPACE = {
    "base": {"hidden": [8], "iterations": ITERATIONS},
    "search": {"lr": {"loguniform": [1e-4, 0.1]}, "hidden": {"choice": [[8], [8, 8]]}},
    "trials": 4,
    "sampler": "tpe",
    "pruner": "none",
    "seed": 3,
}


def _sweep(folder, rerun=()):
    """What a sweep's run opens on the folder: its study and the search over it (a new storage
    object each time, as a new process would)."""
    space = space_from(SPACE, "space.json")
    storage = journal.storage_in(folder)
    study = journal.open_study(storage, space)
    return space, study, SweepSearch(space, journal.STUDY_NAME, storage, space.seed + len(study.trials), rerun)


def _run(search, trial_id, steps, final=None):
    """A trial that reports at `steps`, then finishes with `final` (None: stopped by Ctrl+C)."""
    values = search.suggest(trial_id)
    for step in steps:
        search.on_trial_result(trial_id, {"eval_loss": 1.0 / step, "step": step})
    if final is not None:
        search.on_trial_complete(trial_id, {"eval_loss": final, "step": ITERATIONS, "wall_s": 0.5, "gpu": "llvmpipe"})
    return values


def test_interrupted_trials_run_again_under_their_numbers_however_often_the_sweep_stops(tmp_path):
    space, study, search = _sweep(tmp_path)
    first = _run(search, "a", [20, 40], final=0.01)
    stopped = {"b": _run(search, "b", [20]), "c": _run(search, "c", [])}  # Ctrl+C: b reported once, c never

    space, study, _ = _sweep(tmp_path)
    rows = journal.records(study, space, interrupted=True)
    assert [(r.number, r.state, r.steps, r.value) for r in rows] == [
        (0, "complete", ITERATIONS, 0.01),
        (1, "interrupted", 20, 1.0 / 20),
        (2, "interrupted", None, None),
    ]
    assert rows[1].note == "interrupted at step 20: --resume runs it again"
    assert rows[2].note == "interrupted before its first report: --resume runs it again"
    assert [r.number for r in journal.records(study, space)] == [0]  # finished ones alone: what is counted

    # The first resume: both asked again first, under their numbers and with their values; stopped again.
    _, study, search = _sweep(tmp_path, journal.unfinished(study))
    again = {"x": _run(search, "x", [20, 40]), "y": _run(search, "y", [])}
    assert again["x"] == stopped["b"] and again["y"] == stopped["c"]
    assert [again["x"][TRIAL_KEY], again["y"][TRIAL_KEY]] == [1, 2]

    # The second resume finishes them, then asks the one trial the sweep still lacks.
    _, study, search = _sweep(tmp_path, journal.unfinished(study))
    assert _run(search, "p", [20, 40], final=0.02) == stopped["b"]
    assert _run(search, "q", [20], final=0.03) == stopped["c"]
    last = _run(search, "r", [20], final=0.04)
    assert last[TRIAL_KEY] == 3 and last != first

    _, study, _ = _sweep(tmp_path)
    rows = journal.records(study, space, interrupted=True)
    assert [(r.number, r.state, r.value) for r in rows] == [
        (n, "complete", v) for n, v in enumerate([0.01, 0.02, 0.03, 0.04])
    ]
    assert len(study.trials) == 4  # no trial was asked for twice
    assert study.trials[1].intermediate_values == {20: 1.0 / 20, 40: 1.0 / 40, ITERATIONS: 0.02}  # kept, carried on


def test_ctrl_c_while_ray_starts_is_taken_once_it_has_started(monkeypatch):
    """A KeyboardInterrupt inside ray.init left its core worker half made, and the exit crashed
    (SIGSEGV, 1 run in 8): Ctrl+C is held until ray.init returns, then Ray is shut down whole."""
    from app.sweep import driver

    calls = []

    def init(**options):
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl+C, in the middle of Ray's start
        calls.append("started")

    monkeypatch.setattr(driver.ray, "init", init)
    monkeypatch.setattr(driver.ray, "shutdown", lambda: calls.append("shut down"))
    with pytest.raises(KeyboardInterrupt):
        driver.start_ray(None)
    assert calls == ["started", "shut down"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the usual Ctrl+C again


def test_ctrl_c_before_a_commands_own_handling_is_one_line(monkeypatch, capsys):
    import app.__main__ as entry
    from app.entry import cli

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "main", interrupted)
    assert entry.main() == 130
    assert capsys.readouterr().err == "interrupted\n"


def test_the_last_line_counts_one_trial_as_one(tmp_path, capsys):
    from app.sweep import command, driver
    from app.sweep.table import TrialRecord

    space = space_from({**SPACE, "trials": 1}, "space.json")
    record = TrialRecord(0, "complete", 0.5, ITERATIONS, 1.0, "llvmpipe", 0, {"lr": 0.01, "hidden": [8]}, "")
    assert command._report(tmp_path, space, driver.SweepOutcome([record], record, 1)) == 0
    assert capsys.readouterr().out.startswith("done: 1 trial (1 complete, 0 pruned, 0 failed); best: trial 0000")
    interrupted = TrialRecord(0, "interrupted", None, None, None, "", 0, {"lr": 0.01, "hidden": [8]}, "")
    assert command._report(tmp_path, space, driver.SweepOutcome([interrupted], None, 1)) == 130
    assert capsys.readouterr().err.startswith("interrupted: 0 of 1 trial finished (0 complete, 0 pruned, 0 failed; 1")
