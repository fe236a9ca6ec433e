"""X11 protocol errors noted instead of fatal. Xlib's default handler ends the process, and a window
destroyed from outside races the frame loop: a CPU driver's present can get BadDrawable before the
loop sees the swapchain fail, and the run would end without saving. Noted, the loop reads
`window_gone()` and ends as for any lost window: settings saved, exit code 0."""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

BAD_WINDOW, BAD_DRAWABLE = 3, 9  # X.h error codes: the window (or its pixmap) no longer exists


class _XErrorEvent(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("display", ctypes.c_void_p),
        ("resourceid", ctypes.c_ulong),
        ("serial", ctypes.c_ulong),
        ("error_code", ctypes.c_ubyte),
        ("request_code", ctypes.c_ubyte),
        ("minor_code", ctypes.c_ubyte),
    ]


_HANDLER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(_XErrorEvent))
_installed = None  # the ctypes callback: kept alive here, Xlib holds only its address
_errors: list[tuple[int, int]] = []  # (error code, request code), oldest first


def _note(_display, event) -> int:
    # Runs inside an Xlib call: it may not make X requests, only record.
    error = (event.contents.error_code, event.contents.request_code)
    if not _errors:
        print(f"X error {error[0]} on request {error[1]}: noted, not fatal", file=sys.stderr, flush=True)
    _errors.append(error)
    return 0


def install() -> bool:
    """Makes X errors non-fatal for this process; False where there is no Xlib (not X11). Xlib keeps
    one handler a process, so this covers GLFW's connection (which the Vulkan driver shares); GLFW
    swaps in its own only around a few of its calls, then puts this one back."""
    global _installed
    if _installed is not None:
        return True
    if not sys.platform.startswith("linux"):
        return False
    name = ctypes.util.find_library("X11") or "libX11.so.6"
    try:
        xlib = ctypes.CDLL(name)
    except OSError:
        return False
    xlib.XSetErrorHandler.restype = ctypes.c_void_p
    xlib.XSetErrorHandler.argtypes = [_HANDLER]
    _installed = _HANDLER(_note)
    xlib.XSetErrorHandler(_installed)
    return True


def window_gone() -> bool:
    """True once X has said a window or drawable of ours no longer exists."""
    return any(code in (BAD_WINDOW, BAD_DRAWABLE) for code, _ in _errors)


def noted() -> list[tuple[int, int]]:
    return list(_errors)
