"""A frame never takes the app down: an exception inside a frame is caught at the boundary of the part
that raised it (a panel, the UI around the panels, the frame's updates, its training work, what it
reads back), logged with its traceback in the cache folder, and shown as one line naming the file.
The training state is kept and the next frame runs as usual."""

from __future__ import annotations

import datetime
import os
import traceback
from collections.abc import Callable
from pathlib import Path

from imgui_bundle import imgui

from ..errors import first_line
from ..gpu.device import cache_dir

LOG_NAME = "errors.log"
MAX_LOGGED = 50  # distinct failures written per session: one failing every frame writes once
MAX_LOG_BYTES = 1 << 20  # then the log starts again, the one before kept as errors.log.1


def log_path() -> Path:
    return cache_dir() / LOG_NAME


def _shown_path(path: Path) -> str:
    home = os.path.expanduser("~")
    text = str(path)
    return "~" + text[len(home) :] if home not in ("", "/") and text.startswith(home + os.sep) else text


class Failures:
    """What failed this session: each distinct failure logged once, the latest shown."""

    def __init__(self) -> None:
        self.line = ""  # the latest failure, one line, with where its details are
        self.count = 0  # failures caught, repeats included
        self.by_part: dict[str, str] = {}  # part -> its message, while that part keeps failing
        self._logged: dict[tuple[str, str, str], str] = {}  # a failure -> where its details went

    def record(self, part: str, error: Exception) -> str:
        """Logs `error` (once per distinct part, type and text) and returns the line shown."""
        self.count += 1
        message = f"{part} failed: {type(error).__name__}: {first_line(error)}"
        key = (part, type(error).__name__, str(error))
        if key not in self._logged:
            self._logged[key] = self._log(part, error)
        self.line = f"{message} (details: {self._logged[key]})"
        self.by_part[part] = message
        return self.line

    def _log(self, part: str, error: Exception) -> str:
        path = log_path()
        if len(self._logged) >= MAX_LOGGED:
            return f"not logged: {MAX_LOGGED} others are in {_shown_path(path)}"
        text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.is_file() and path.stat().st_size > MAX_LOG_BYTES:  # one earlier log is kept
                os.replace(path, path.with_name(LOG_NAME + ".1"))
            with open(path, "a", encoding="utf-8") as log:
                log.write(f"---- {datetime.datetime.now():%Y-%m-%d %H:%M:%S} pid {os.getpid()}: {part}\n{text}\n")
        except OSError as problem:
            return f"not logged, {path}: {problem.strerror or problem}"
        return _shown_path(path)

    def dismiss(self) -> None:
        self.line = ""


def guarded(app, part: str, work: Callable[[], None]) -> bool:
    """Runs `work`; an exception is recorded and the frame goes on. True when it ran through."""
    try:
        work()
    except Exception as error:
        app.failures.record(part, error)
        return False
    app.failures.by_part.pop(part, None)
    return True


def guarded_ui(app, part: str, draw: Callable[[], None]) -> bool:
    """As guarded(), for widgets: what `draw` left open in ImGui (IDs, tables, children,
    disabled blocks, windows begun) is closed, as ImGui's error recovery does."""
    state = imgui.internal.ErrorRecoveryState()
    imgui.internal.error_recovery_store_state(state)
    try:
        draw()
    except Exception as error:
        _recover(state)
        app.failures.record(part, error)
        return False
    app.failures.by_part.pop(part, None)
    return True


def _recover(state) -> None:
    io = imgui.get_io()
    saved = (
        io.config_error_recovery_enable_assert,
        io.config_error_recovery_enable_debug_log,
        io.config_error_recovery_enable_tooltip,
    )
    # Quietly: the failure is logged by Failures, and ImGui would otherwise assert (raise) on
    # each thing it closes and print a line per item to stdout.
    io.config_error_recovery_enable_assert = False
    io.config_error_recovery_enable_debug_log = False
    io.config_error_recovery_enable_tooltip = False
    try:
        imgui.internal.error_recovery_try_to_recover_state(state)
    finally:
        (
            io.config_error_recovery_enable_assert,
            io.config_error_recovery_enable_debug_log,
            io.config_error_recovery_enable_tooltip,
        ) = saved
