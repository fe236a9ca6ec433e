"""X errors are noted, not fatal, once the window installs its handler: without it, Xlib ends
the process with exit code 1 (what a window destroyed mid-present did to a run in CI)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Draws on a window id that does not exist (BadWindow, as for a window destroyed from
# outside), then syncs so that the error arrives; prints what the handler noted.
PROBE = """
import ctypes, sys
from app.ui import x_errors
installed = x_errors.install() if sys.argv[1] == "handled" else None
xlib = ctypes.CDLL("libX11.so.6")
xlib.XOpenDisplay.restype = ctypes.c_void_p
xlib.XOpenDisplay.argtypes = [ctypes.c_char_p]
xlib.XMapWindow.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
xlib.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
display = xlib.XOpenDisplay(None)
assert display, "no X display"
xlib.XMapWindow(display, 0x3FFFFF)
xlib.XSync(display, 0)
print("alive", installed, x_errors.window_gone(), x_errors.noted())
"""


def _probe(display: str, mode: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", PROBE, mode],
        cwd=ROOT,
        env=dict(os.environ, DISPLAY=display),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_without_the_handler_an_x_error_ends_the_process(display):
    result = _probe(display, "default")
    assert result.returncode == 1 and "alive" not in result.stdout
    assert "X Error of failed request" in result.stderr


def test_with_the_handler_an_x_error_is_noted_and_the_window_counts_as_gone(display):
    result = _probe(display, "handled")
    assert result.returncode == 0, result.stderr[-2000:]
    # BadWindow (3) on X_MapWindow (8): noted once on stderr, the process goes on.
    assert result.stdout.split(maxsplit=3)[:3] == ["alive", "True", "True"]
    assert "[(3, 8)]" in result.stdout
    assert "X error 3 on request 8: noted, not fatal" in result.stderr
    assert "Traceback" not in result.stderr
