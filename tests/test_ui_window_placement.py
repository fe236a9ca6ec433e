"""Issue 25, item 11: the real window under Xvfb opens where it last closed. It is moved and
resized with xdotool, closed with Ctrl+C, and opened again; its size and position are read from
the X server (xdotool getwindowgeometry), not from the app. Before, every launch opened at
1280 x 800 wherever the window system put it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_ui_window import ROOT, RunningWindow, _bitmap, _wait_for, window_id

SCREEN = (1600, 1000)  # the display fixture's Xvfb screen (tests/conftest.py)


class Launched(RunningWindow):
    """The app in a window with the cache folder `cache` and these `options` (no --fresh, no
    size unless given), up once its first screenshot (after 10 frames) exists."""

    def __init__(self, display: str, cache: Path, shot: Path, *options: str):
        if shutil.which("xdotool") is None:
            pytest.skip("xdotool is not installed (apt-get install xdotool)")
        self.cache, self.first = cache, shot
        self.env = dict(os.environ, DISPLAY=display, XDG_CACHE_HOME=str(cache))
        command = [sys.executable, "-m", "app", "--screenshot-after", "10", "--screenshot", str(shot), *options]
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        if not _wait_for(shot.exists, 90, self.process):
            self.process.kill()
            pytest.fail(f"no first frame within 90 s: {self.process.communicate()[1][-2000:]}")

    def geometry(self) -> tuple[int, int, int, int]:
        """(x, y, width, height) of the window, as the X server has it."""
        shell = subprocess.run(
            ["xdotool", "getwindowgeometry", "--shell", window_id(self.process, self.env)],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
        values = dict(line.split("=", 1) for line in shell.split())
        return int(values["X"]), int(values["Y"]), int(values["WIDTH"]), int(values["HEIGHT"])


def _closed(window: Launched) -> dict:
    code, _, err = window.stop()
    assert code == 0, err[-2000:]
    settings = window.cache / "slang-visual-trainer" / "settings.json"
    return json.loads(settings.read_text())


def test_the_window_opens_where_it_last_closed(display, tmp_path):
    cache = tmp_path / "cache"
    first = Launched(display, cache, tmp_path / "first.png")
    try:
        assert first.geometry()[2:] == (1280, 800), "no saved window: the default size"
        first.xdotool("windowmove", "150", "90")
        first.xdotool("windowsize", "1000", "700")
        first.screenshot_at(1000, 700)  # the app has seen the new size
        assert first.geometry() == (150, 90, 1000, 700)
    finally:
        saved = _closed(first)
    assert saved["view"]["window"] == {"x": 150, "y": 90, "width": 1000, "height": 700}

    second = Launched(display, cache, tmp_path / "second.png")
    try:
        assert second.geometry() == (150, 90, 1000, 700), "the size and position it closed at"
        assert _bitmap(second.first).shape[:2] == (700, 1000), "and it draws at that size"
    finally:
        saved = _closed(second)

    # Saved on a larger screen, or a monitor since unplugged: 3000 x 1200 at (5000, 3000)
    saved["view"]["window"] = {"x": 5000, "y": 3000, "width": 3000, "height": 1200}
    (cache / "slang-visual-trainer" / "settings.json").write_text(json.dumps(saved))
    clamped = Launched(display, cache, tmp_path / "third.png", "--width", "900")
    try:
        x, y, width, height = clamped.geometry()
        assert (width, height) == (900, SCREEN[1]), "--width wins; the saved height, no taller than the screen"
        assert (x, y) == (SCREEN[0] - 900, 0), "moved on, its far corner at the screen's"
    finally:
        _closed(clamped)


@pytest.mark.parametrize(
    "window",
    [None, "big", {"x": 1, "y": 2, "width": 1000}, {"x": 1.5, "y": 2, "width": 1000, "height": 700}]
    + [{"x": True, "y": 2, "width": 1000, "height": 700}, {"x": 1, "y": 2, "width": 100, "height": 700}],
)
def test_a_saved_window_that_is_no_window_is_ignored(window):
    """settings.json may have been edited by hand: no window of this, the default at launch."""
    from app.ui.placement import Placement, launch_placement, saved_placement

    assert saved_placement({"window": window}) is None
    assert launch_placement(None, None, None, SCREEN) == Placement(1280, 800)


def test_a_saved_window_comes_back_on_the_screen():
    from app.ui.placement import Placement, launch_placement

    inside = Placement(1000, 700, 150, 90)
    assert launch_placement(inside, None, None, SCREEN) == inside
    assert launch_placement(Placement(1000, 700, -300, -20), None, None, SCREEN) == Placement(1000, 700, 0, 0)
    assert launch_placement(Placement(1000, 700, 900, 500), None, None, SCREEN) == Placement(1000, 700, 600, 300)
    assert launch_placement(inside, 1200, 900, SCREEN) == Placement(1200, 900, 150, 90), "the size given wins"
    assert launch_placement(inside, None, None, None) == Placement(1000, 700), "no screen to read: placed by X"
