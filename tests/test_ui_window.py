"""The real window under Xvfb: launch, run frames, the window's own screenshot shows the UI,
Ctrl+C (SIGINT) exits with code 0 and saves the session's settings."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def display():
    if os.environ.get("DISPLAY"):
        yield os.environ["DISPLAY"]
        return
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        pytest.skip("no DISPLAY and Xvfb is not installed (apt-get install xvfb)")
    name = f":{90 + os.getpid() % 9}"
    server = subprocess.Popen([xvfb, name, "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    if server.poll() is not None:
        pytest.skip(f"Xvfb could not start on {name}")
    yield name
    server.terminate()
    server.wait()


def test_window_renders_and_exits_on_sigint(display, tmp_path):
    shot = tmp_path / "window.png"
    settings = tmp_path / "cache"
    env = dict(os.environ, DISPLAY=display, XDG_CACHE_HOME=str(settings))
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "--width", "1000", "--height", "700", "--fresh",
         "--screenshot-after", "20", "--screenshot", str(shot)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not shot.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert process.poll() is None, f"window exited early: {process.communicate()[1][-2000:]}"
        assert shot.exists(), "no screenshot after 20 frames within 60 s"
        time.sleep(0.5)  # a few more frames: the loop must survive after the screenshot
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err[-2000:]
    import slangpy as spy

    pixels = np.asarray(spy.Bitmap(str(shot))).astype(np.float32)
    assert pixels.shape[:2] == (700, 1000)
    assert pixels.std() > 10, "the screenshot is blank"
    assert len(np.unique(pixels.reshape(-1, pixels.shape[-1])[::97], axis=0)) > 50, "UI, heatmaps, plot"
    assert (settings / "slang-visual-trainer" / "settings.json").is_file(), "settings saved on exit"
