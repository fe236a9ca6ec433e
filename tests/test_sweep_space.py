"""`visual-trainer sweep`'s bad input, refused before anything is written or Ray starts: one line
naming the space file and the problem, exit code 2, no sweep folder. And the tables' format read
back as their reader would. No Ray here: these take well under a second each."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import pytest
from helpers import ROOT

from app.entry.cli import main as cli_main
from app.sweep.space import space_from
from app.sweep.table import TrialRecord, best_of, trials_csv

GOOD = {"base": {"hidden": [8], "iterations": 50}, "search": {"lr": {"loguniform": [1e-4, 0.1]}}, "trials": 2}


def _with(**changes) -> dict:
    return {**GOOD, **changes}


# name: (the file's text, what its one line must say)
BAD_FILES = {
    "unknown field": (json.dumps(_with(search={"learning_rate": {"uniform": [0.1, 0.2]}})), ["'learning_rate'"]),
    "empty range": (json.dumps(_with(search={"lr": {"uniform": [0.1, 0.1]}})), ["search.lr", "empty"]),
    "loguniform from 0": (json.dumps(_with(search={"lr": {"loguniform": [0, 0.1]}})), ["search.lr", "above 0"]),
    "choice past its field's limits": (
        json.dumps(_with(search={"hidden": {"choice": [[8], [300]]}})),
        ["search.hidden", "[300]", "between 1 and 256"],
    ),
    "a range on a word": (json.dumps(_with(search={"activation": {"uniform": [0, 1]}})), ["activation", "choice"]),
    "junk": ("{'base': nothing like JSON", ["not valid JSON", "line 1"]),
    "a list, not an object": ("[1, 2]", ["must hold an object"]),
    "trials as text": (json.dumps(_with(trials="6")), ["trials", "whole number"]),
    "grid over a range": (json.dumps(_with(sampler="grid")), ["grid", "lr"]),
    "unknown key": (json.dumps(_with(pruners="asha")), ["unknown key 'pruners'"]),
    "unknown base field": (json.dumps(_with(base={"hiden": [8]})), ["base", "'hiden'"]),
    "a dataset by its name": (json.dumps(_with(base={"dataset": "spiral"})), ["base: dataset", '{"generator"']),
    "psnr without an image": (json.dumps(_with(metric="psnr")), ["psnr", "image"]),
}


def _sweep(tmp_path, capsys, text: str, suffix: str = ".json", *options: str):
    space = tmp_path / f"space{suffix}"
    space.write_text(text)
    out = tmp_path / "sweep"
    code = cli_main(["sweep", str(space), "--out", str(out), *options])
    return code, capsys.readouterr(), out, space


def _assert_refused(code, captured, out, words) -> None:
    lines = captured.err.strip().splitlines()
    assert code == 2, captured.err
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    for word in words:
        assert word in lines[0], lines[0]
    assert not out.exists()
    assert captured.out == ""


@pytest.mark.parametrize("name", BAD_FILES)
def test_a_bad_space_file_is_one_line_and_nothing_written(tmp_path, capsys, name):
    text, words = BAD_FILES[name]
    code, captured, out, space = _sweep(tmp_path, capsys, text)
    _assert_refused(code, captured, out, [f"space file {str(space)!r}", *words])


def test_bad_toml_is_named_as_toml(tmp_path, capsys):
    code, captured, out, space = _sweep(tmp_path, capsys, 'trials = [1,\nbase = "', ".toml")
    _assert_refused(code, captured, out, [f"space file {str(space)!r}", "not valid TOML"])


def test_toml_without_a_reader_says_what_it_needs(tmp_path, capsys, monkeypatch):
    import app.sweep.space as space_module

    monkeypatch.setattr(space_module, "_toml_reader", lambda: None)  # Python 3.10 without tomli
    code, captured, out, _ = _sweep(tmp_path, capsys, "trials = 2\n", ".toml")
    _assert_refused(code, captured, out, ["TOML needs Python 3.11", "JSON"])


def test_without_ray_and_optuna_the_sweep_says_how_to_install_them(tmp_path, capsys, monkeypatch):
    for name in ("ray", "optuna"):
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed
    code, captured, out, _ = _sweep(tmp_path, capsys, json.dumps(GOOD))
    _assert_refused(code, captured, out, ["ray and optuna missing", "pip install", "[sweep]"])


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["--trials-per-gpu", "0"], ["--trials-per-gpu"]),
        (["--device", "opengl"], ["--device", "opengl", "cuda"]),
        (["--address", "ray://head:10001"], ["ray://", "--address auto"]),
        (["--address", "127.0.0.1:1"], ["127.0.0.1:1", "no Ray cluster answers"]),
    ],
)
def test_bad_options_are_refused_before_the_folder_is_made(tmp_path, capsys, options, words):
    code, captured, out, _ = _sweep(tmp_path, capsys, json.dumps(GOOD), ".json", *options)
    _assert_refused(code, captured, out, words)


def test_an_existing_sweep_is_not_overwritten_and_resume_needs_one(tmp_path, capsys):
    (tmp_path / "sweep").mkdir()
    (tmp_path / "sweep" / "space.json").write_text(json.dumps(GOOD))
    code, captured, _, _ = _sweep(tmp_path, capsys, json.dumps(GOOD))
    assert code == 2 and "--resume" in captured.err and len(captured.err.strip().splitlines()) == 1
    assert sorted(p.name for p in (tmp_path / "sweep").iterdir()) == ["space.json"]
    assert cli_main(["sweep", "--resume", str(tmp_path / "elsewhere")]) == 2
    assert "no sweep there" in capsys.readouterr().err


def test_the_command_line_refuses_a_bad_space_without_a_traceback(tmp_path):
    """The real entry point, as a user runs it."""
    space = tmp_path / "space.json"
    space.write_text(json.dumps(_with(search={"lr": {"loguniform": [0.1, 0.01]}})))
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    command = [sys.executable, "-m", "app", "sweep", str(space), "--out", str(tmp_path / "sweep")]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"error: space file {str(space)!r}: search.lr: the range [0.1, 0.01] is empty: lo must be below hi"
    ]
    assert not (tmp_path / "sweep").exists()


def test_trials_csv_reads_back_as_its_reader_would():
    """Header in the contract's order, one row a trial in trial order, the searched values as
    JSON text, empty cells where there is nothing; best.json's trial is the best complete one
    (pruned trials never win, though their early value is lower)."""
    space = space_from(
        _with(search={"lr": {"loguniform": [1e-4, 0.1]}, "hidden": {"choice": [[8], [8, 8]]}}, metric="train_loss"),
        "space",
    )

    def record(number, state, value, hidden, note=""):
        return TrialRecord(number, state, value, 50, 1.5, "gpu-0", 0, {"lr": 0.01, "hidden": hidden}, note)

    records = [
        record(2, "pruned", 0.01, [8], "diverged at step 7"),
        record(0, "complete", 0.5, [8, 8]),
        record(1, "complete", 0.25, [8]),
        record(3, "failed", None, [8], 'a "quoted", comma'),
    ]
    rows = list(csv.reader(io.StringIO(trials_csv(records, space).decode())))
    assert rows[0] == ["trial", "state", "train_loss", "steps", "wall_s", "gpu", "seed", "lr", "hidden", "error"]
    assert [row[0] for row in rows[1:]] == ["0000", "0001", "0002", "0003"]
    assert rows[1] == ["0000", "complete", "0.5", "50", "1.5", "gpu-0", "0", "0.01", "[8, 8]", ""]
    assert json.loads(rows[1][8]) == [8, 8] and json.loads(rows[2][8]) == [8]
    assert rows[3][9] == "diverged at step 7" and rows[4][2] == "" and rows[4][9] == 'a "quoted", comma'
    assert best_of(records, space).number == 1
    maximised = space_from(_with(metric="test_accuracy", base={"dataset": {"generator": "xor"}}), "space")
    assert best_of(records, maximised).number == 0
