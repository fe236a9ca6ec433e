"""A sweep, live (`visual-trainer sweep SPACE --out DIR --serve PORT`): the sweep window follows a
running sweep's folder, each trial joining as it finishes (read here from folders the tests write,
without Ray: a half-written trials.csv keeps the view), and the sweep serves that window from a
process of its own, whose port closes when the sweep is interrupted (exit 130 and the resume line
as before); these run in this process with Ray left out. A served sweep with Ray, its frames showing
the trials as they finish, is tests/test_sweep.py's grid sweep."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import ROOT, run_coroutine
from served_sweep import URL, drawn_share, frame_pixels, refused, sweep_frames, windows_of
from sweep_folders import SPACE, trial_row, trials_csv, write_sweep

from app.files.atomic import write_atomic
from app.files.sweep_folder import read_sweep
from app.ui.sweep import viewer as viewer_module
from app.ui.sweep.viewer import POLL_S, SweepViewer

GRID = {
    "base": {"hidden": [8], "iterations": 60, "optimizer": "sgd"},
    "search": {"lr": {"choice": [0.01, 0.02, 0.03]}},
    "sampler": "grid",
    "pruner": "none",
    "seed": 5,
}


class _App:
    """What the viewer asks of the window: its notices."""

    def __init__(self):
        self.notices: list[str] = []

    def say(self, text: str, seconds: float = 0.0) -> None:
        self.notices.append(text)


def _rows(count: int) -> list[dict]:
    metrics = [0.02, 0.004, 0.09, 0.001, 0.3]
    return [
        trial_row(n, "complete", metrics[n], {"lr": 0.001 * (n + 1), "hidden": [16] if n % 2 else [32, 32]}, seed=n)
        for n in range(count)
    ]


def _finish(folder: Path, count: int) -> None:
    """The sweep's tables after `count` trials, each file replaced whole as the sweep replaces it."""
    written = write_sweep(folder.parent / "staging", _rows(count))
    for name in ("trials.csv", "best.json"):
        write_atomic(folder / name, (written / name).read_bytes())


def _ids(viewer: SweepViewer) -> list[str]:
    return [viewer.folder.trials[k].id for k in viewer.order]


def test_a_running_sweeps_trials_join_the_view_as_they_finish(tmp_path, monkeypatch):
    folder = write_sweep(tmp_path / "sweep", _rows(2))
    viewer = SweepViewer(_App())
    assert viewer.open_folder(str(folder)) is None
    viewer.select("0000")
    viewer.sort("eval_loss", False)
    reads = []
    monkeypatch.setattr(viewer_module, "read_sweep", lambda path: reads.append(path) or read_sweep(path))

    assert not viewer.poll(now=1e6) and reads == [], "nothing changed: nothing read"
    _finish(folder, 4)
    assert not viewer.poll(now=1e6 + POLL_S / 2) and len(viewer.folder.trials) == 2, "looked at once a second"
    assert viewer.poll(now=1e6 + POLL_S) and len(reads) == 1
    assert _ids(viewer) == ["0003", "0001", "0000", "0002"], "still sorted by the metric"
    assert viewer.selected == "0000" and viewer.folder.best_trial == "0003", "the selection kept, the new best known"
    assert not viewer.poll(now=1e6 + 3 * POLL_S) and len(reads) == 1, "unchanged since: not read again"

    # A writer that does not replace the file whole, caught half-way: the view stays as it was
    whole = trials_csv(_rows(5))
    (folder / "trials.csv").write_text(whole[: whole.rindex("0004,") + 12])
    assert not viewer.poll(now=1e6 + 4 * POLL_S) and len(viewer.folder.trials) == 4
    (folder / "trials.csv").write_text(whole[: whole.index('"[32')])  # inside a parameter's JSON
    assert not viewer.poll(now=1e6 + 5 * POLL_S) and len(viewer.folder.trials) == 4
    _finish(folder, 5)
    assert viewer.poll(now=1e6 + 6 * POLL_S) and len(viewer.folder.trials) == 5
    assert _ids(viewer)[-1] == "0004" and viewer.selected == "0000"


def test_a_sweep_before_its_first_trial_opens_empty_and_fills(tmp_path):
    """File > Open sweep... of a sweep whose first trial is running, and the served window's folder
    before the sweep has made it: both open empty, and show the trials once there are some."""
    folder = tmp_path / "sweep"
    folder.mkdir()
    (folder / "space.json").write_text(json.dumps(SPACE))
    viewer = SweepViewer(_App())
    assert viewer.open_folder(str(folder)) is None
    assert viewer.visible and viewer.path == folder and viewer.shown is None and viewer.waiting == ""
    (folder / "trials.csv").write_text(trials_csv(_rows(1)).splitlines(keepends=True)[0])  # a header only
    assert not viewer.poll(now=1e6) and viewer.shown is None and viewer.waiting == ""
    _finish(folder, 1)
    assert viewer.poll(now=1e6 + POLL_S) and _ids(viewer) == ["0000"] and viewer.selected == "0000"

    later = SweepViewer(_App())
    assert later.open_folder(str(tmp_path / "not yet"), wait=True) is None and later.shown is None
    assert later.open_folder(str(tmp_path / "nothing")) is not None, "not waited for: not a sweep"
    assert later.path == tmp_path / "not yet", "the sweep waited for stays open"


@pytest.mark.parametrize("how", ["Tune's stop", "a second Ctrl+C"])
def test_an_interrupted_sweep_stops_its_window_and_says_how_to_resume(tmp_path, monkeypatch, capsys, how):
    """Ctrl+C as Tune takes it (the sweep's outcome is short of trials) and as a KeyboardInterrupt
    (a second Ctrl+C): the window is stopped before the last line, which is the same as without
    --serve, and the exit is 130. Ray is left out: the sweep runs in this process."""
    from app.entry import cli
    from app.sweep import driver

    (tmp_path / "space.json").write_text(json.dumps(GRID))
    folder = tmp_path / "sweep"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(driver, "quiet_libraries", lambda: None)
    monkeypatch.setattr(driver, "start_ray", lambda address: None)
    served = []

    def run_sweep(folder_, space, options):
        match = URL.match(capsys.readouterr().out.splitlines()[0])
        served.append(int(match.group(2)))
        (frame,) = run_coroutine(sweep_frames(match.group(1), first_only=True))  # the window, waiting for a trial
        assert drawn_share(frame_pixels(frame)) < 0.01
        if how == "a second Ctrl+C":
            raise KeyboardInterrupt
        return driver.SweepOutcome([], None, space.trials)

    monkeypatch.setattr(driver, "run_sweep", run_sweep)
    assert cli.main(["sweep", str(tmp_path / "space.json"), "--out", str(folder), "--serve", "0"]) == 130
    stderr = capsys.readouterr().err
    assert stderr.strip().splitlines()[-1].endswith(f"visual-trainer sweep --resume {folder} runs the rest"), stderr
    assert "closing" not in stderr and "Traceback" not in stderr, stderr
    assert refused(served[0]) and windows_of(folder) == []


def test_serve_options_are_checked_before_anything_starts(tmp_path, capsys):
    from app.entry import cli

    (tmp_path / "space.json").write_text(json.dumps(GRID))
    out = tmp_path / "sweep"
    for options, words in (
        (["--serve", "70000"], "a port from 0 to 65535"),
        (["--token-file", str(tmp_path / "none")], "--token-file is for --serve"),
        (["--serve", "0", "--certfile", str(tmp_path / "cert.pem")], "--certfile and --keyfile go together"),
    ):
        assert cli.main(["sweep", str(tmp_path / "space.json"), "--out", str(out), *options]) == 2
        assert words in capsys.readouterr().err
        assert not out.exists()
    with socket.socket() as taken:  # the window's own refusal, before Ray starts or DIR is made
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert cli.main(["sweep", str(tmp_path / "space.json"), "--out", str(out), "--serve", str(port)]) == 2
    stderr = capsys.readouterr().err
    (line,) = stderr.strip().splitlines()
    assert line.startswith(f"error: --serve: cannot serve on 127.0.0.1:{port}: ") and "in use" in line, stderr
    assert not out.exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl's PR_SET_PDEATHSIG is Linux's")
def test_a_sweep_killed_outright_leaves_no_window_serving():
    """The window's process is started with live._end_with_parent: when the sweep's process dies
    of SIGKILL (no handler runs), the window gets SIGTERM instead of serving on, orphaned."""
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time; from app.sweep import live; "
            "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], "
            "start_new_session=True, preexec_fn=live._end_with_parent); print(child.pid, flush=True); time.sleep(60)",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    child = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and Path(f"/proc/{child}").exists():
        if Path(f"/proc/{child}/stat").read_text().split(")")[-1].split()[0] == "Z":
            break  # ended, not yet reaped by init
        time.sleep(0.05)
    alive = Path(f"/proc/{child}").exists() and Path(f"/proc/{child}/stat").read_text().split(")")[-1].split()[0] != "Z"
    if alive:
        os.kill(child, signal.SIGKILL)
    assert not alive, "the window's process outlived the sweep killed outright"
