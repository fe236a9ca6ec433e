"""Issue 16, autosave in the real window under Xvfb: Ctrl+C (SIGINT), Ctrl+Q and a crash that
escapes a frame each leave a checkpoint in the cache folder and say where; the next launch offers
it and, closed before the offer is answered, keeps it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_ui_window import window_id

from app.files import checkpoint

ROOT = Path(__file__).resolve().parent.parent


def _launch(display: str, cache: Path, shot: Path, *options: str, code: str | None = None) -> subprocess.Popen:
    """The app in a window, up once its first screenshot (after 10 frames) exists; `code` runs
    before the app's main, in the same process (to make the window crash)."""
    env = dict(os.environ, DISPLAY=display, XDG_CACHE_HOME=str(cache))
    argv = ["--width", "900", "--height", "650", "--screenshot-after", "10", "--screenshot", str(shot), *options]
    command = [sys.executable, "-m", "app", *argv]
    if code is not None:
        command = [
            sys.executable,
            "-c",
            f"{code}\nimport sys\nfrom app.entry.cli import main\nsys.exit(main({argv!r}))",
        ]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 90
    while not shot.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    if not shot.exists() and process.poll() is None:
        process.kill()
        pytest.fail(f"no first frame within 90 s: {process.communicate()[1][-2000:]}")
    return process


def _quit(display: str, process: subprocess.Popen) -> tuple[int, str]:
    """Ctrl+Q typed into the window of `process`, and its exit code and stderr once it ends."""
    if shutil.which("xdotool") is None:
        pytest.skip("xdotool is not installed (apt-get install xdotool)")
    env = dict(os.environ, DISPLAY=display)
    subprocess.run(["xdotool", "key", "--window", window_id(process, env), "ctrl+q"], env=env, check=True, timeout=10)
    try:
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    return process.returncode, err


def _stop(process: subprocess.Popen) -> tuple[int, str]:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    return process.returncode, err


def test_sigint_autosaves_the_next_launch_offers_it_and_ctrl_q_keeps_a_session_too(display, tmp_path):
    cache = tmp_path / "cache"
    sessions = cache / "slang-visual-trainer" / "sessions"
    window = _launch(display, cache, tmp_path / "first.png", "--fresh")  # 10 frames, each training
    code, err = _stop(window)
    assert code == 0, err[-2000:]
    [autosaved] = sessions.glob("*-4-16-4-formulas.ckpt")
    assert f"autosaved: {autosaved} (step " in err, err[-2000:]
    saved = checkpoint.load(autosaved)
    assert saved.step > 0, "the trained network, not a fresh one"

    later = _launch(display, cache, tmp_path / "second.png")  # the offer comes before the first frame
    code, err = _stop(later)
    assert code == 0, err[-2000:]
    assert f"the last session was autosaved (4-16-4 network at step {saved.step:,}, formulas" in err, err[-2000:]
    assert "autosave is kept" in err, "closed before answering: what was offered stays"
    assert checkpoint.load(autosaved).step == saved.step

    # Ctrl+Q (File > Quit's shortcut) typed into the real window: exit code 0, the session kept
    # as when the window is closed, the settings saved; --fresh offers nothing and writes its own.
    settings = cache / "slang-visual-trainer" / "settings.json"
    settings.unlink()
    fresh = _launch(display, cache, tmp_path / "third.png", "--fresh")
    code, err = _quit(display, fresh)
    assert code == 0 and "the window offers" not in err, "--fresh does not offer it"
    assert "interrupted" not in err, "it quit, it was not interrupted"
    assert checkpoint.load(autosaved).step == saved.step, "and replaces no session: it writes its own"
    [kept] = set(sessions.glob("*.ckpt")) - {autosaved}
    assert kept.name.endswith("-4-16-4-formulas.ckpt") and f"autosaved: {kept} (step " in err, err[-2000:]
    assert checkpoint.load(kept).step > 0 and settings.is_file()


# Runs the real loop for 20 frames, then raises out of a frame as a bug outside the frame's
# guards would (the frame function itself), in the window's own process.
CRASH = """
import app.ui.window as window
real = window.frame
count = [0]
def crashing(*args, **kwargs):
    count[0] += 1
    if count[0] > 20:
        raise ValueError("a crash outside every guard")
    return real(*args, **kwargs)
window.frame = crashing
"""


def test_a_crash_autosaves(display, tmp_path):
    cache = tmp_path / "cache"
    window = _launch(display, cache, tmp_path / "first.png", "--fresh", code=CRASH)
    try:
        window.wait(60)  # it ends by itself
    except subprocess.TimeoutExpired:
        pass
    code, err = _stop(window)
    assert code != 0 and "ValueError: a crash outside every guard" in err, err[-2000:]
    assert "autosaved: " in err, err[-2000:]
    [kept] = (cache / "slang-visual-trainer" / "sessions").glob("*.ckpt")
    assert checkpoint.load(kept).step > 0
