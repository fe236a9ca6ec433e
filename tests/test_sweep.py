"""`visual-trainer sweep` through Ray Tune and Optuna on this machine, run as a user runs it.

One grid sweep (module fixture) is checked several ways: each trial's files are those a plain
headless run of its summary.json writes (network.json byte for byte), trials.csv and best.json
agree with the trials' summary.json files, a diverging trial is pruned with its step while the
others complete, and a trial whose config fails is recorded failed with its error. A second
sweep, the space of the issue (TOML, loguniform, TPE, the median rule), is stopped with Ctrl+C
once its first trial is in trials.csv and then resumed. Each sweep starts Ray (3-7 s here)."""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import ROOT, made_once, run_coroutine, run_headless_here
from served_sweep import URL, drawn_share, frame_pixels, refused, sweep_frames, windows_of
from tensorboard_reader import read_events

ITERATIONS = 60
# 2 x 3 trials: sgd at lr 1000 diverges within a few steps; 1/x is refused by the run (a target
# must be finite over the domain), which only a trial's Session checks.
GRID = {
    "base": {"hidden": [8], "iterations": ITERATIONS, "optimizer": "sgd"},
    "search": {"lr": {"choice": [0.01, 1000]}, "targets": {"choice": [["x*y"], ["x+y*y"], ["1/x"]]}},
    "sampler": "grid",
    "pruner": "none",
    "seed": 5,
}
TOML_SPACE = """# the issue's example, shortened
metric = "eval_loss"
trials = 6

[base]
hidden = [8]
iterations = 60

[search]
lr = { loguniform = [1e-4, 0.1] }
hidden = { choice = [[8], [8, 8]] }
"""
COLUMNS = ["trial", "state", "eval_loss", "steps", "wall_s", "gpu", "seed"]


def _environment(cache: Path) -> dict:
    environment = dict(os.environ, XDG_CACHE_HOME=str(cache))
    environment.pop("RAY_ADDRESS", None)
    return environment


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "app", *args]


def _rows(folder: Path) -> list[dict]:
    try:
        with open(folder / "trials.csv", newline="") as handle:
            return list(csv.DictReader(handle))
    except FileNotFoundError:
        return []


def _summary(folder: Path, trial: str) -> dict:
    return json.loads((folder / "trials" / trial / "summary.json").read_text())


@dataclass
class Served:
    """What a viewer of the grid sweep's window saw: the URL line, the frames until the socket
    closed, and how many window processes served the folder while it waited for the first."""

    url: re.Match | None
    frames: list[bytes]
    windows: int


def _grid_sweep(root: Path) -> None:
    """The grid sweep, its window served to a scripted viewer; what it said and what the viewer saw
    are kept in `root` (made_once: each worker reads them)."""
    (root / "space.json").write_text(json.dumps(GRID))
    command = _command("sweep", str(root / "space.json"), "--out", str(root / "sweep"), "--eval-every", "20")
    command += ["--tensorboard", str(root / "tensorboard"), "--serve", "0"]
    sweep = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_environment(root)
    )
    said = {"url": sweep.stdout.readline().rstrip("\n"), "windows": 0, "frames": 0}
    try:
        if match := URL.match(said["url"]):
            said["windows"] = len(windows_of(root / "sweep"))
            frames = run_coroutine(sweep_frames(match.group(1), first_only=False))
            for k, frame in enumerate(frames):
                (root / f"frame-{k}.jpg").write_bytes(frame)
            said["frames"] = len(frames)
        said["stdout"], said["stderr"] = sweep.communicate(timeout=240)
    finally:
        sweep.kill()
    said["returncode"] = sweep.returncode
    (root / "said.json").write_text(json.dumps(said))


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    """The grid sweep, finished, its window served: its folder, its exit and output (stdout without
    the URL line), the folder of its cache, and what the viewer saw."""
    root = made_once(tmp_path_factory, "grid", _grid_sweep)
    said = json.loads((root / "said.json").read_text())
    result = subprocess.CompletedProcess("sweep", said["returncode"], said.get("stdout", ""), said.get("stderr", ""))
    frames = [(root / f"frame-{k}.jpg").read_bytes() for k in range(said["frames"])]
    return root / "sweep", result, root, Served(URL.match(said["url"]), frames, said["windows"])


def test_the_grid_runs_every_combination_once_in_trial_order(grid):
    folder, result, _, _ = grid
    assert result.returncode == 0, result.stderr
    rows = _rows(folder)
    with open(folder / "trials.csv", newline="") as handle:
        assert next(csv.reader(handle)) == [*COLUMNS, "lr", "targets", "error"]
    assert [row["trial"] for row in rows] == [f"{n:04d}" for n in range(6)]
    combinations = {(json.loads(row["lr"]), tuple(json.loads(row["targets"]))) for row in rows}
    assert combinations == {(lr, (t,)) for lr in (0.01, 1000) for t in ("x*y", "x+y*y", "1/x")}
    assert json.loads((folder / "space.json").read_text()) == GRID
    best = json.loads((folder / "best.json").read_text())
    assert result.stdout.strip().splitlines()[-1] == (
        f"done: 6 trials (2 complete, 2 pruned, 2 failed); best: trial {best['trial']}, "
        f"eval_loss {best['value']:.6g} -> {folder / 'best.json'}"
    )


def test_the_served_window_shows_the_trials_as_they_finish_and_ends_with_the_sweep(grid):
    """`--serve 0`: the URL line first, one window process for the folder, its first frame the window
    waiting for the first trial, its last (the socket closes when the sweep ends) the trials drawn;
    then its port is closed and no process serves the folder."""
    folder, result, root, served = grid
    assert served.url, result.stderr
    assert served.windows == 1 and result.stdout.strip().splitlines() == [result.stdout.strip().splitlines()[-1]]
    assert all(word not in result.stderr for word in ("interrupted", "autosaved", "Traceback")), result.stderr
    assert refused(int(served.url.group(2))) and windows_of(folder) == [], "the window ended with the sweep"
    assert not list((root / "slang-visual-trainer" / "sessions").glob("*")), "an untouched window keeps no session"
    waiting, done = drawn_share(frame_pixels(served.frames[0])), drawn_share(frame_pixels(served.frames[-1]))
    assert waiting < 0.01 and done > 0.03, (waiting, done, len(served.frames))


def test_a_diverging_trial_is_pruned_with_its_step_a_failing_one_failed(grid):
    folder, _, _, _ = grid
    for row in _rows(folder):
        target = json.loads(row["targets"])[0]
        if target == "1/x":
            assert row["state"] == "failed" and row["eval_loss"] == row["steps"] == ""
            assert row["error"].startswith("target f1 = '1/x' is inf at x = 0"), row["error"]
            assert not (folder / "trials" / row["trial"]).exists()
        elif json.loads(row["lr"]) == 1000:
            diverged = _summary(folder, row["trial"])["diverged_at_step"]
            assert row["state"] == "pruned" and diverged is not None
            assert row["error"] == f"diverged at step {diverged}"
        else:
            assert row["state"] == "complete" and row["error"] == "" and int(row["steps"]) == ITERATIONS


def test_tensorboard_shows_each_trial_by_number_with_its_searched_fields_and_the_metric(grid):
    """Each trial that ran, side by side in DIR/<trial>/ as TensorBoard reads it: the searched
    fields as hparams (trials.csv's values), the sweep's metric, its eval loss at each evaluation
    up to trials.csv's, and its end: a complete trial a success, a diverged one a failure."""
    folder, _, root, _ = grid
    ran = [row for row in _rows(folder) if row["state"] != "failed"]
    assert sorted(p.name for p in (root / "tensorboard").iterdir()) == sorted(row["trial"] for row in ran)
    for row in ran:
        events = read_events(root / "tensorboard" / row["trial"])
        assert {name: json.loads(value) if name == "targets" else value for name, value in events.hparams.items()} == {
            "lr": json.loads(row["lr"]),
            "targets": json.loads(row["targets"]),
        }
        assert events.metrics == ["eval_loss"]
        assert events.last("eval_loss") == pytest.approx(float(row["eval_loss"]), rel=1e-6)
        assert events.scalars["eval_loss"][-1][0] == int(row["steps"])
        if row["state"] == "complete":
            assert [step for step, _ in events.scalars["eval_loss"]] == [20, 40, 60]
            assert events.status == "STATUS_SUCCESS"
        else:
            assert events.status == "STATUS_FAILURE"  # pruned: it diverged


def test_tables_agree_with_each_trials_summary(grid):
    folder, _, _, _ = grid
    ran = [row for row in _rows(folder) if row["state"] != "failed"]
    for row in ran:
        summary = _summary(folder, row["trial"])
        assert float(row["eval_loss"]) == summary["eval_loss"]
        assert int(row["steps"]) == summary["steps"]
        assert float(row["wall_s"]) == summary["wall_seconds"]
        # which GPU ran it: its name (lavapipe has no UUID; a GPU's follows its name)
        assert row["gpu"] == summary["adapter"]["name"] and row["gpu"].startswith("llvmpipe")
        assert int(row["seed"]) == summary["config"]["seed"] == 0  # the base's (the space's 5 seeds the sampler)
        assert json.loads(row["lr"]) == summary["config"]["lr"]
        assert json.loads(row["targets"]) == summary["config"]["targets"]
    complete = {row["trial"]: _summary(folder, row["trial"]) for row in ran if row["state"] == "complete"}
    winner = min(complete, key=lambda trial: complete[trial]["eval_loss"])
    best = json.loads((folder / "best.json").read_text())
    assert best == {
        "trial": winner,
        "metric": "eval_loss",
        "mode": "min",
        "value": complete[winner]["eval_loss"],
        "iterations": ITERATIONS,
        "seed": 0,
        "config": complete[winner]["config"],
    }


def test_trial_networks_are_those_of_plain_headless_runs(grid, gpu):
    """A complete trial and a diverged one, against `--headless --config summary.json` (run in
    this process, on its device)."""
    folder, _, root, _ = grid
    rows = _rows(folder)
    for state in ("complete", "pruned"):
        trial = next(row["trial"] for row in rows if row["state"] == state)
        out = root / f"plain-{trial}"
        config = folder / "trials" / trial / "summary.json"
        options = ("--config", str(config), "--iterations", str(ITERATIONS), "--out", str(out))
        result = run_headless_here(gpu, root / f"cache-{trial}", *options)
        assert result.returncode == (0 if state == "complete" else 3), result.stderr
        assert (out / "network.json").read_bytes() == (folder / "trials" / trial / "network.json").read_bytes()


def _wait_for(condition, what: str, process: subprocess.Popen, timeout: float) -> None:
    """Polls `condition` until it holds, the process ends or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert process.poll() is None, f"the sweep ended (exit {process.returncode}) before {what}"
        assert time.monotonic() < deadline, f"no {what} within {timeout} s"
        time.sleep(0.05)


def _running_with_a_report(folder: Path) -> bool:
    """A trial of the sweep in `folder` is running and has reported (read from its journal)."""
    from app.sweep import journal
    from app.sweep.space import read_space

    if not (folder / "study.journal").exists():
        return False
    study = journal.open_study(journal.storage_in(folder), read_space(folder / "space.json"))
    return any(trial.intermediate_values for trial in journal.unfinished(study))


def test_ctrl_c_keeps_every_trial_and_resume_runs_the_interrupted_again(tmp_path):
    """Ctrl+C with a trial finished and another running: exit 130 and the line that resumes; the
    running one is an "interrupted" row with its step, and --resume runs it again under its number
    and values, so the sweep ends with exactly its 3 trials, none failed."""
    (tmp_path / "space.toml").write_text(
        TOML_SPACE.replace("iterations = 60", "iterations = 300").replace("trials = 6", "trials = 3")
    )
    folder = tmp_path / "sweep"
    environment = _environment(tmp_path)
    sweep = subprocess.Popen(
        _command("sweep", str(tmp_path / "space.toml"), "--out", str(folder), "--eval-every", "20"),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )
    try:
        _wait_for(lambda: (folder / "space.json").exists(), "space.json", sweep, timeout=180)
        second = subprocess.run(  # the folder is the running sweep's until it ends
            _command("sweep", "--resume", str(folder)), cwd=ROOT, capture_output=True, text=True, env=environment
        )
        assert second.returncode == 2 and "in use by another sweep" in second.stderr, second.stderr
        _wait_for(lambda: len(_rows(folder)) >= 1, "first trial in trials.csv", sweep, timeout=180)
        _wait_for(lambda: _running_with_a_report(folder), "a running trial's report", sweep, timeout=60)
        finished = _rows(folder)
        sweep.send_signal(signal.SIGINT)
        _, stderr = sweep.communicate(timeout=120)
    finally:
        sweep.kill()
    assert sweep.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1].endswith(f"visual-trainer sweep --resume {folder} runs the rest")
    stopped = _rows(folder)
    assert all(row in stopped for row in finished)  # nothing finished before Ctrl+C is lost
    interrupted = [row for row in stopped if row["state"] == "interrupted"]
    assert interrupted and "failed" not in {row["state"] for row in stopped}
    assert any(row["steps"] for row in interrupted)  # the one that had reported
    for row in interrupted:  # where its curve got to (if it reported), and what happens next
        if row["steps"]:
            assert int(row["steps"]) >= 20 and float(row["eval_loss"]) > 0, row
            assert row["error"] == f"interrupted at step {row['steps']}: --resume runs it again"
        else:
            assert row["error"] == "interrupted before its first report: --resume runs it again"

    command = _command("sweep", "--resume", str(folder), "--eval-every", "20")
    resumed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=240, env=environment)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip().splitlines()[-1].startswith("done: 3 trials (")
    rows = _rows(folder)
    assert [row["trial"] for row in rows] == [f"{n:04d}" for n in range(3)]
    assert {row["state"] for row in rows} <= {"complete", "pruned"} and (folder / "best.json").is_file()
    assert all(row in rows for row in finished)
    again = {row["trial"]: row for row in rows}
    for row in interrupted:  # the same trial, values and seed, run to its end
        assert [again[row["trial"]][key] for key in ("lr", "hidden", "seed")] == [row["lr"], row["hidden"], row["seed"]]
        assert _summary(folder, row["trial"])["interrupted_at_step"] is None
    for row in rows:
        assert _summary(folder, row["trial"])["config"]["hidden"] == json.loads(row["hidden"])


def test_trials_take_a_gpu_or_a_share_of_one_where_ray_has_gpus(monkeypatch):
    """The resources a trial asks of Ray, and so how many run at once (no GPU here: Ray's view
    of a machine with two, then of this one)."""
    from app.sweep import driver

    monkeypatch.setattr(driver.ray, "cluster_resources", lambda: {"CPU": 16.0, "GPU": 2.0})
    assert driver._trial_resources(1) == {"cpu": 1, "gpu": 1.0} and driver._concurrent_trials(1) == 2
    assert driver._trial_resources(4) == {"cpu": 1, "gpu": 0.25} and driver._concurrent_trials(4) == 8
    assert driver._concurrent_trials(32) == 16  # a CPU each, as well
    monkeypatch.setattr(driver.ray, "cluster_resources", lambda: {"CPU": 2.0})
    assert driver._trial_resources(4) == {"cpu": 1} and driver._concurrent_trials(4) == 2


@pytest.mark.parametrize(("device", "reused"), [("auto", True), ("vulkan", True), ("cuda", False)])
def test_a_trial_opens_its_device_on_the_sweeps_api(monkeypatch, tmp_path, device, reused):
    """--device reaches each trial's device, and CUDA trials each get a new worker (on 4 H100s a
    reused CUDA worker died in its second trial). The device is refused here, so the trial fails
    with that one line and nothing runs."""
    from app.sweep import driver, trial
    from app.sweep.space import space_from

    asked = []

    def refuse_device(kind="auto"):
        asked.append(kind)
        raise RuntimeError(f"no {kind} device here")

    monkeypatch.setattr(trial, "worker_gpu", refuse_device)
    space = space_from(GRID, "space.json")
    plan = trial.TrialPlan(space, str(tmp_path), 20, str(tmp_path), device)
    with pytest.raises(trial.TrialFailed, match=f"^no {device} device here$"):
        trial.run_trial({trial.TRIAL_KEY: 0, "lr": "0.01", "targets": '["x*y"]'}, plan)
    assert asked == [device]
    monkeypatch.setattr(driver.ray, "cluster_resources", lambda: {"CPU": 2.0})
    monkeypatch.setattr(driver.tune, "Tuner", lambda trainable, tune_config, run_config: tune_config)
    tune_config = driver._tuner(tmp_path, space, driver.SweepOptions(device=device), None, None, 1, str(tmp_path))
    assert tune_config.reuse_actors is reused


def test_a_sweep_sharing_gpus_without_mps_says_its_trials_take_turns(tmp_path):
    """--trials-per-gpu K above 1 runs trials side by side only on CUDA under MPS (docs/guide/sweeps.md): the
    sweep says so where they would take turns, and nothing where they do not share a GPU."""
    from app.sweep.sharing import mps_running, sharing_note

    pipe = {"CUDA_MPS_PIPE_DIRECTORY": str(tmp_path)}
    assert not mps_running(pipe)
    (tmp_path / "control").touch()  # the daemon's pipe
    assert mps_running(pipe)
    assert sharing_note(1, 4, "auto", False) is None and sharing_note(3, 0, "auto", False) is None
    assert sharing_note(3, 4, "cuda", True) is None
    vulkan = sharing_note(3, 4, "vulkan", True)
    assert "--device vulkan" in vulkan and "take turns" in vulkan and "--device cuda" in vulkan
    cuda = sharing_note(3, 4, "cuda", False)
    assert "no MPS daemon" in cuda and "nvidia-cuda-mps-control -d" in cuda
