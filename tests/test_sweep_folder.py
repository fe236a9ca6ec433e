"""The sweep folder's reader (app/files/sweep_folder.py) against folders written here to the sweep
command's format (docs/formats.md): each trial's values and parsed parameters, the metric's mode,
the best trial, what space.json says; a folder that is not a sweep, or holds junk, is one line of
UserError."""

from __future__ import annotations

import json

import pytest
from sweep_folders import screenshot_rows, trial_row, trials_csv, write_sweep

from app.errors import UserError
from app.files.sweep_folder import SearchedField, read_sweep


def test_the_reader_gives_each_trial_its_values_and_parsed_parameters(tmp_path):
    rows = screenshot_rows()
    folder = read_sweep(write_sweep(tmp_path / "sweep", rows))
    assert folder.metric == "eval_loss" and folder.mode == "min"
    assert [t.id for t in folder.trials] == [f"{k:04d}" for k in range(8)]
    for trial, row in zip(folder.trials, rows):
        assert (trial.state, trial.metric, trial.seed, trial.error) == (
            row["state"],
            row["metric"],
            row["seed"],
            row["error"],
        )
        assert (trial.steps, trial.wall_s, trial.gpu) == (row["steps"], row["wall_s"], row["gpu"])
        assert trial.parameters == row["parameters"], "JSON text read back: a float, a list"
    assert isinstance(folder.trials[1].parameters["hidden"], list) and folder.trials[1].parameters["hidden"] == [32, 32]
    assert folder.trials[4].metric is None, "a failed trial's empty metric"
    assert folder.searched == (
        SearchedField("lr", "loguniform", None),
        SearchedField("hidden", "choice", ([16], [32, 32])),
    )
    assert (folder.best.trial, folder.best.value, folder.best.seed, folder.best.iterations) == ("0003", 0.0012, 3, 300)
    assert folder.network_path("0003") == tmp_path / "sweep" / "trials" / "0003" / "network.json"


def test_a_trials_config_is_its_summarys(tmp_path):
    rows = screenshot_rows()
    run = tmp_path / "sweep" / "trials" / "0003"
    run.mkdir(parents=True)
    summary = {"steps": 300, "config": {"hidden": [32, 32], "lr": 0.0035, "seed": 3}}
    (run / "summary.json").write_text(json.dumps(summary))
    folder = read_sweep(write_sweep(tmp_path / "sweep", rows))
    config = folder.trial_config("0003")
    assert (config.hidden, config.lr, config.seed) == ([32, 32], 0.0035, 3)
    with pytest.raises(UserError, match="no summary.json in .*0004"):
        folder.trial_config("0004")


@pytest.mark.parametrize("metric, mode", [("eval_loss", "min"), ("psnr", "max"), ("test_accuracy", "max")])
def test_a_sweep_with_no_complete_trial_yet_has_no_best_and_opens(tmp_path, metric, mode):
    """The sweep writes best.json with its first complete trial: a sweep still running whose
    trials so far were pruned or failed has none, and still opens, its mode by its metric."""
    folder_path = write_sweep(tmp_path / "sweep", screenshot_rows())
    (folder_path / "best.json").unlink()
    text = (folder_path / "trials.csv").read_text().replace("eval_loss", metric, 1)
    (folder_path / "trials.csv").write_text(text)
    folder = read_sweep(folder_path)
    assert (folder.best, folder.best_trial, folder.mode, folder.metric) == (None, None, mode, metric)
    assert len(folder.trials) == 8


def test_a_folder_without_space_json_has_no_distributions(tmp_path):
    folder = read_sweep(write_sweep(tmp_path / "sweep", screenshot_rows(), space=None))
    assert [(f.name, f.distribution, f.choices) for f in folder.searched] == [("lr", "", None), ("hidden", "", None)]


def _with(tmp_path, name: str, text: str | bytes):
    folder = write_sweep(tmp_path / "sweep", screenshot_rows())
    path = folder / name
    path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text)
    return folder


def _header() -> str:
    return "trial,state,eval_loss,steps,wall_s,gpu,seed,lr,error\n"


def _rows(row: str, times: int = 1):
    """A trials.csv of the right header and `row` (`times` over)."""
    return lambda folder: (folder / "trials.csv").write_text(_header() + row * times)


JUNK = {
    "no trials.csv": (lambda p: (p / "trials.csv").unlink(), "no trials.csv"),
    "empty trials.csv": (lambda p: (p / "trials.csv").write_text(""), "trials.csv is empty"),
    "header only": (lambda p: (p / "trials.csv").write_text(_header()), "lists no trial yet"),
    "not UTF-8": (lambda p: (p / "trials.csv").write_bytes(b"\xff\xfe\x00junk"), "not UTF-8"),
    "no error column": (
        lambda p: (p / "trials.csv").write_text(
            "trial,state,eval_loss,steps,wall_s,gpu,seed,lr\n0000,complete,1,2,3,a,0,0.1\n"
        ),
        "header must be",
    ),
    "a column renamed": (
        lambda p: (p / "trials.csv").write_text(_header().replace("wall_s", "wall") + "0000,complete,1,2,3,a,0,0.1,\n"),
        "found 'wall' for 'wall_s'",
    ),
    "a short row": (_rows("0000,complete,1\n"), "line 2 has 3 values for 9 columns"),
    "a row of one value": (_rows("0000\n"), "line 2 has 1 value for 9 columns"),
    "an unknown state": (_rows("0000,running,1,2,3,a,0,0.1,\n"), "state must be one of"),
    "a trial id that is a path": (_rows("../x,complete,1,2,3,a,0,0.1,\n"), "zero-padded number"),
    "a parameter not JSON": (_rows("0000,complete,1,2,3,a,0,fast,\n"), "lr is not JSON text"),
    "a metric not a number": (_rows("0000,complete,low,2,3,a,0,0.1,\n"), "eval_loss must be a number"),
    "a seed not whole": (_rows("0000,complete,1,2,3,a,0.5,0.1,\n"), "seed must be a whole number"),
    "a trial twice": (_rows("0000,complete,1,2,3,a,0,0.1,\n", times=2), "trial 0000 twice"),
    "best.json not JSON": (lambda p: (p / "best.json").write_text("{trial: 3"), "best.json is not valid JSON"),
    "best.json a list": (lambda p: (p / "best.json").write_text("[]"), "best.json must be a JSON object"),
    "best.json of another metric": (lambda p: _edit_best(p, metric="psnr"), "metric must be trials.csv's"),
    "best.json's mode": (lambda p: _edit_best(p, mode="lowest"), "mode must be min or max"),
    "best.json's trial not listed": (lambda p: _edit_best(p, trial="0042"), "trial must be one of"),
    "best.json's value a string": (lambda p: _edit_best(p, value="0.1"), "value must be a number"),
    "space.json not JSON": (lambda p: (p / "space.json").write_text("search = {}"), "space.json is not valid JSON"),
}


def _edit_best(folder, **changes) -> None:
    best = json.loads((folder / "best.json").read_text())
    (folder / "best.json").write_text(json.dumps(best | changes))


@pytest.mark.parametrize("spoil, words", JUNK.values(), ids=JUNK.keys())
def test_junk_is_one_line_naming_what_is_wrong(tmp_path, spoil, words):
    folder = write_sweep(tmp_path / "sweep", screenshot_rows())
    spoil(folder)
    with pytest.raises(UserError) as caught:
        read_sweep(folder)
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_a_missing_folder_or_a_file_is_one_line(tmp_path):
    (tmp_path / "a.txt").write_text("x")
    for path, words in ((tmp_path / "missing", "is not a folder"), (tmp_path / "a.txt", "is not a folder")):
        with pytest.raises(UserError, match=words):
            read_sweep(path)


def test_csv_written_here_reads_back_as_the_sweep_command_writes_it():
    """The helper's trials.csv: the columns in the documented order, parameters as JSON text."""
    text = trials_csv([trial_row(3, "pruned", 0.5, {"lr": 0.001, "hidden": [8, 8]}, error="diverged at step 12")])
    assert text.splitlines() == [
        "trial,state,eval_loss,steps,wall_s,gpu,seed,lr,hidden,error",
        '0003,pruned,0.5,300,1.5,llvmpipe,0,0.001,"[8, 8]",diverged at step 12',
    ]
