"""Where the window opens: the size and position it had when it last closed, but --width and --height
win; and kept on the screen it opens on (its size read from X through ctypes), so that a window
saved on a larger or since unplugged monitor comes back whole and in reach. Without X the size is
kept and the window system places the window."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from dataclasses import dataclass

DEFAULT_SIZE = (1280, 800)
SMALLEST = (320, 240)  # the smallest window the command line takes (app/entry/cli_checks.py)


@dataclass(frozen=True)
class Placement:
    width: int
    height: int
    x: int | None = None  # the window's inside, from the screen's top left; None: the window
    y: int | None = None  # system's choice

    def to_dict(self) -> dict:
        return {"x": self.x, "y": self.y, "width": self.width, "height": self.height}


def saved_placement(view: dict) -> Placement | None:
    """The window as saved in the view settings, or None where there is none, or where it is
    not what a window can be (the file may have been edited by hand)."""
    window = view.get("window") if isinstance(view, dict) else None
    if not isinstance(window, dict):
        return None
    values = [window.get(key) for key in ("width", "height", "x", "y")]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return None
    width, height, x, y = values
    if width < SMALLEST[0] or height < SMALLEST[1]:
        return None
    return Placement(width, height, x, y)


def launch_placement(
    saved: Placement | None, width: int | None, height: int | None, screen: tuple[int, int] | None
) -> Placement:
    """The window to open: each of `width` and `height` as given, else as saved (no larger
    than the screen), else the default; at the saved position moved onto the screen, so that
    the whole window is on it."""
    saved_width, saved_height = (saved.width, saved.height) if saved else DEFAULT_SIZE
    if screen is not None:
        saved_width, saved_height = min(saved_width, screen[0]), min(saved_height, screen[1])
    size = (width or saved_width, height or saved_height)
    if saved is None or screen is None:
        return Placement(*size)
    x = min(max(saved.x, 0), max(screen[0] - size[0], 0))
    y = min(max(saved.y, 0), max(screen[1] - size[1], 0))
    return Placement(*size, x, y)


def screen_size() -> tuple[int, int] | None:
    """The X screen's size in pixels (all its monitors together), or None without X."""
    if not sys.platform.startswith("linux") or not os.environ.get("DISPLAY"):
        return None
    try:
        xlib = ctypes.CDLL(ctypes.util.find_library("X11") or "libX11.so.6")
    except OSError:
        return None
    xlib.XOpenDisplay.restype = ctypes.c_void_p
    xlib.XOpenDisplay.argtypes = [ctypes.c_char_p]
    xlib.XDefaultScreen.argtypes = xlib.XCloseDisplay.argtypes = [ctypes.c_void_p]
    xlib.XDisplayWidth.argtypes = xlib.XDisplayHeight.argtypes = [ctypes.c_void_p, ctypes.c_int]
    display = xlib.XOpenDisplay(None)
    if not display:
        return None
    try:
        screen = xlib.XDefaultScreen(display)
        return xlib.XDisplayWidth(display, screen), xlib.XDisplayHeight(display, screen)
    finally:
        xlib.XCloseDisplay(display)
