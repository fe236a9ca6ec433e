"""File > Open sweep... in the offscreen window, clicked as a user would: a sweep folder written
here (two trials by real headless runs, one of the window's own architecture and one of another,
a pruned and a failed one as rows) opens in the sweep window; a click on a header sorts the table,
a click on a row, a point or a line selects that trial; Load network puts the trial's network.json
weights in, Train again trains its summary.json config from its seed at step 0 as a new run; a
folder that is not a sweep, and a trial without a network, are messages that change nothing."""

from __future__ import annotations

import csv
import json
import shutil

import imgui_bundle  # noqa: F401 (a dependency: a broken install fails here, never skips)
import numpy as np
import pytest
from helpers import paused_at_a_step_boundary
from sweep_folders import run_trial, screenshot_rows, trial_row, write_sweep
from test_ui_files import install_fake_dialogs
from test_ui_offscreen import _centre

from app.config.records import from_dict
from app.loop.session import Session
from app.ui.offscreen import OffscreenApp
from app.ui.sweep import marks

SAME_ARCHITECTURE = (
    "--hidden",
    "16",
    "--lr",
    "0.02",
    "--seed",
    "5",
    "--iterations",
    "30",
)  # the window's default network
OTHER_ARCHITECTURE = ("--hidden", "8,8", "--activation", "tanh", "--lr", "0.005", "--seed", "7", "--iterations", "30")


@pytest.fixture(scope="module")
def sweep(tmp_path_factory, gpu):
    """trials 0000 and 0001 ran (headless), 0002 was pruned and 0003 failed (no folders)."""
    tmp = tmp_path_factory.mktemp("sweep")
    folder = tmp / "sweep"
    same = run_trial(gpu, tmp, folder, 0, *SAME_ARCHITECTURE)
    other = run_trial(gpu, tmp, folder, 1, *OTHER_ARCHITECTURE)
    rows = [
        trial_row(0, "complete", same["eval_loss"], {"lr": 0.02, "hidden": [16]}, seed=5, steps=30),
        trial_row(1, "complete", other["eval_loss"], {"lr": 0.005, "hidden": [8, 8]}, seed=7, steps=30),
        trial_row(2, "pruned", 9.5, {"lr": 0.09, "hidden": [8, 8]}, seed=9, steps=10, error="diverged at step 10"),
        trial_row(
            3, "failed", None, {"lr": 0.0002, "hidden": [16]}, seed=11, steps=0, error="RuntimeError: device lost"
        ),
    ]
    space = {"search": {"lr": {"loguniform": [1e-4, 0.1]}, "hidden": {"choice": [[16], [8, 8]]}}, "metric": "eval_loss"}
    return write_sweep(folder, rows, space=space)


@pytest.fixture
def dialogs(monkeypatch):
    return install_fake_dialogs(monkeypatch)


@pytest.fixture
def ui(make_session):
    app = OffscreenApp(make_session(), 1280, 800)
    app.frame(3)
    yield app
    app.close()


def _open(ui, dialogs, folder) -> None:
    """File > Open sweep..., the dialog answering `folder`, and frames for the window to lay out."""
    dialogs.answers.append(str(folder))
    ui.click(*_centre(ui, "menu file"))
    ui.click(*_centre(ui, "file sweep"))
    ui.frame(4)


def _weights(network_json) -> np.ndarray:
    """A network.json's parameters in the trainer's layout, read here: each layer's weights (a
    row an output) then its biases."""
    layers = json.loads(network_json.read_text())["layers"]
    parts = [np.ravel(np.asarray(layer[key], np.float32)) for layer in layers for key in ("weights", "biases")]
    return np.concatenate(parts)


def _csv_rows(folder) -> list[dict]:
    with open(folder / "trials.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def test_a_sweep_opens_and_its_table_sorts_by_the_metric(ui, dialogs, sweep):
    _open(ui, dialogs, sweep)
    viewer = ui.app.sweep
    assert viewer.visible and viewer.folder.path == sweep
    best = json.loads((sweep / "best.json").read_text())["trial"]
    assert viewer.selected == best, "the best trial is selected as the sweep opens"
    assert [viewer.folder.trials[k].id for k in viewer.order] == ["0000", "0001", "0002", "0003"]
    rows = _csv_rows(sweep)
    by_metric = sorted((r for r in rows if r["eval_loss"]), key=lambda r: float(r["eval_loss"]))
    expected = [r["trial"] for r in by_metric] + [r["trial"] for r in rows if not r["eval_loss"]]
    ui.click(*_centre(ui, "sweep header eval_loss"))
    ui.frame()
    assert [viewer.folder.trials[k].id for k in viewer.order] == expected
    ui.click(*_centre(ui, "sweep header eval_loss"))
    ui.frame()
    assert [viewer.folder.trials[k].id for k in viewer.order] == expected[-2::-1] + expected[-1:], "descending"
    assert viewer.sorted_by == ("eval_loss", True)


def test_a_click_on_a_row_a_point_or_a_line_selects_its_trial(ui, dialogs, sweep):
    _open(ui, dialogs, sweep)
    viewer = ui.app.sweep
    ui.click(*_centre(ui, "sweep row 0002"))
    assert viewer.selected == "0002"
    ui.frame()
    ui.click(*_centre(ui, "sweep point 0000"))
    assert viewer.selected == "0000"
    ui.frame()
    ui.click(*_centre(ui, "sweep line 0003"))
    assert viewer.selected == "0003", "a failed trial's line, to its last parameter"
    assert "sweep point 0003" not in ui.app.rects, "a failed trial has no metric to plot"


def test_the_combo_picks_the_scatters_parameter(ui, dialogs, sweep):
    _open(ui, dialogs, sweep)
    viewer = ui.app.sweep
    assert viewer.shown.parameters[viewer.scatter_parameter].name == "lr"
    ui.click(*_centre(ui, "sweep parameter combo"))
    ui.frame()  # the list lays out in the frame after it opens
    ui.click(*_centre(ui, "sweep parameter hidden"))
    ui.frame()
    assert viewer.shown.parameters[viewer.scatter_parameter].name == "hidden"
    x = {trial: _centre(ui, f"sweep point {trial}")[0] for trial in ("0000", "0001", "0002")}
    assert x["0000"] < x["0001"] and x["0000"] < x["0002"], "[16] left of [8, 8], the space's order"


@pytest.mark.parametrize("trial", ["0000", "0001"], ids=["same architecture", "another architecture"])
def test_load_network_puts_the_trials_weights_in(ui, dialogs, sweep, trial):
    _open(ui, dialogs, sweep)
    ui.app.running = False
    runs = len(ui.session.history.runs)
    ui.click(*_centre(ui, f"sweep row {trial}"))
    ui.click(*_centre(ui, "sweep load"))
    expected = _weights(sweep / "trials" / trial / "network.json")
    loaded = ui.frames_until(
        lambda: ui.session.rebuild is None and np.array_equal(ui.session.trainer.parameters(), expected), seconds=120
    )
    assert loaded, f"trial {trial}'s weights in the session ({ui.app.notice[0]})"
    summary = json.loads((sweep / "trials" / trial / "summary.json").read_text())["config"]
    assert ui.session.config.hidden == summary["hidden"] and ui.session.config.activation == summary["activation"]
    assert ui.session.trainer.step == 0 and len(ui.session.history.runs) == runs + 1, "a new run, the old one kept"
    assert not ui.app.sweep.visible, "the window makes way for the panels"
    ui.click(*_centre(ui, "menu view"))
    ui.click(*_centre(ui, "view sweep"))
    assert ui.app.sweep.visible and ui.app.sweep.selected == trial, "View > Sweep window: the sweep as it was"


@pytest.mark.parametrize("trial", ["0000", "0001"], ids=["same architecture", "another architecture"])
def test_train_again_trains_the_trials_config_from_its_seed(ui, dialogs, gpu, sweep, trial):
    _open(ui, dialogs, sweep)
    assert ui.frames_until(lambda: ui.session.trainer.step > 0)
    before = ui.session.history.current
    ui.click(*_centre(ui, f"sweep row {trial}"))
    ui.click(*_centre(ui, "sweep train"))
    ui.app.running = False  # paused on a step boundary, to compare with a run of its own
    summary = json.loads((sweep / "trials" / trial / "summary.json").read_text())
    expected = from_dict(summary["config"])
    assert ui.frames_until(lambda: ui.session.config == expected and ui.session.rebuild is None, seconds=120)
    ui.app.running = True
    assert ui.frames_until(lambda: ui.session.trainer.step >= 3, seconds=120), "it trains"
    paused_at_a_step_boundary(ui)
    assert ui.session.config.seed == summary["config"]["seed"] and ui.session.config.lr == summary["config"]["lr"]
    current = ui.session.history.current
    assert current is not before and before in ui.session.history.runs, "the run before stays on the loss plot"
    assert current.train.rows()[0][0] == 1, "the new run's curve starts at step 1"
    alone = Session(gpu, expected, grid=64)
    alone.advance(ui.session.trainer.step)
    assert np.array_equal(ui.session.trainer.parameters(), alone.trainer.parameters()), "from step 0 and its seed"


def test_a_folder_that_is_not_a_sweep_says_why_and_changes_nothing(ui, dialogs, sweep, tmp_path):
    _open(ui, dialogs, sweep)
    paused_at_a_step_boundary(ui)
    before = ui.session.trainer.parameters(), ui.session.trainer.step
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "trials.csv").write_bytes(b"\x89PNG\r\n")
    for folder, words in ((tmp_path, "not a sweep folder: it has no trials.csv"), (tmp_path / "junk", "not UTF-8")):
        _open(ui, dialogs, folder)
        assert "sweep not opened" in ui.app.notice[0] and words in ui.app.notice[0], ui.app.notice[0]
        assert ui.app.sweep.folder.path == sweep, "the sweep shown is kept"
    assert np.array_equal(ui.session.trainer.parameters(), before[0]) and ui.session.trainer.step == before[1]


def test_a_sweep_without_a_complete_trial_yet_opens_with_no_best(ui, dialogs, sweep, tmp_path):
    """A sweep still running whose trials so far were pruned or failed has no best.json yet."""
    running = tmp_path / "running"
    shutil.copytree(sweep, running)
    (running / "best.json").unlink()
    _open(ui, dialogs, running)
    viewer = ui.app.sweep
    assert viewer.visible and viewer.folder.path == running and viewer.folder.best is None
    assert viewer.selected is None and "best none complete yet" in ui.app.notice[0]
    ui.click(*_centre(ui, "sweep row 0001"))
    assert viewer.selected == "0001"  # its trials still select, load and train again


def test_a_failed_trial_has_no_network_to_load_and_the_network_stays(ui, dialogs, sweep):
    _open(ui, dialogs, sweep)
    paused_at_a_step_boundary(ui)
    before = ui.session.trainer.parameters(), ui.session.config, len(ui.session.history.runs)
    ui.click(*_centre(ui, "sweep row 0003"))
    ui.click(*_centre(ui, "sweep load"))
    assert "trial 0003 has no network.json" in ui.app.notice[0]
    ui.click(*_centre(ui, "sweep train"))
    assert "trial 0003 not trained again" in ui.app.notice[0] and "no summary.json" in ui.app.notice[0]
    ui.frame(2)
    assert np.array_equal(ui.session.trainer.parameters(), before[0])
    assert ui.session.config == before[1] and len(ui.session.history.runs) == before[2] and ui.session.rebuild is None


def test_the_viewer_of_eight_trials_marks_them_by_state_and_metric(ui, tmp_path):
    """The screenshot (eight trials: five complete, two pruned, one failed) and the colours in it:
    the best point in the colour scale's brightest colour, a pruned one grey, the failed one only
    in the table and the parallel coordinates."""
    folder = write_sweep(tmp_path / "sweep", screenshot_rows())
    assert ui.app.sweep.open_folder(str(folder)) is None
    ui.app.running = False
    ui.frame(3, force=True)
    ui.save(str(tmp_path / "sweep.png"))
    assert not ui.app.failures.line, ui.app.failures.line
    pixels = ui.target.to_numpy()[..., :3].astype(int)

    def colour_at(name: str) -> np.ndarray:
        x, y = (int(v) for v in _centre(ui, name))
        return pixels[y, x]

    brightest = np.array([round(255 * c) for c in (0.993248, 0.906157, 0.143936)])  # viridis at 1 (matplotlib's table)
    assert np.abs(colour_at("sweep point 0001") - colour_at("sweep point 0003")).max() > 40, (
        "other metric, other colour"
    )
    assert np.abs(colour_at("sweep point 0003") - brightest).max() <= 12, "the best trial, the brightest"
    grey = np.array([round(255 * c) for c in (marks.PRUNED.x, marks.PRUNED.y, marks.PRUNED.z)])
    assert np.abs(colour_at("sweep point 0002") - grey).max() <= 40, "pruned: grey"
    assert "sweep point 0004" not in ui.app.rects and "sweep line 0004" in ui.app.rects


def test_the_colour_scales_labels_are_whole_inside_the_window(ui, tmp_path):
    """Issue 42: the scale beside the parallel coordinates was 5 em wide whatever its labels, and
    the window's edge cut a label of the metric's 4 digits ("0.0002153") or the last of 3."""
    from imgui_bundle.imgui import internal as imgui_internal

    rows = screenshot_rows()
    for row, metric in zip(rows, (0.000315, 0.00131, None, 0.00021534, None, 0.00052, None, 0.0123)):
        row["metric"] = metric if row["state"] == "complete" else row["metric"]
    assert ui.app.sweep.open_folder(str(write_sweep(tmp_path / "sweep", rows))) is None
    ui.frame(3)
    labels = {
        name[len("sweep scale ") :]: rect for name, rect in ui.app.rects.items() if name.startswith("sweep scale")
    }
    assert {"0.0002153", "0.51"} <= set(labels), labels
    ui.renderer.make_current()
    inside = imgui_internal.find_window_by_name("###sweep").inner_clip_rect.max.x
    for text, rect in labels.items():
        assert rect[2] <= inside, f"{text!r} ends at x = {rect[2]}, past the window's {inside}"
