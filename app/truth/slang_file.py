"""A user's own Slang file as the ground truth, as text (`target(float2 p, int k)` and TARGET_COUNT):
reading it, the block the generated module holds it in, the compiler's messages, and a watch for
changes on disk (app/gpu/target_probe.py compiles it). Its text is compiled as written; what this
module guarantees is that a broken file is an error message, never a crash or a lost network."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from ..errors import UserError, read_user_text

# Characters of a Slang target file: ample for a few functions, and small enough for the config
# to travel as one command-line argument (at most 128 KiB on Linux) to app/loop/rebuild.py's child.
MAX_TARGET_SOURCE = 16 * 1024

# The name a user's Slang file has in the compiler's messages (#line), whatever its path:
# compiler_messages puts the file's own name back. A path could hold a quote or a newline.
TARGET_SOURCE_NAME = "user-target-file.slang"
TARGET_NAMESPACE = "user_target"


WATCH_INTERVAL_S = 0.5  # how often the watch looks at the file
MAX_MESSAGES = 6  # compiler messages kept for the UI
REQUIREMENT = "static const int TARGET_COUNT and [Differentiable] float target(float2 p, int k)"
REQUIREMENT_3D = REQUIREMENT.replace("float2 p", "float3 p")  # a function of (x, y, z) (--dims 3)
# One diagnostic of Slang's: "error[E30015]: title", "  --> file:line:column", the source line
# and a caret line with the message; diagnostics start at column 0.
_DIAGNOSTIC_START = re.compile(r"^(?=(?:error|warning|note)\[\w+\]: )", re.MULTILINE)
_HEAD = re.compile(
    r"^(?P<kind>error|warning|note)\[\w+\]: (?P<title>[^\n]*)\n\s*--> (?P<file>[^\n]*?):(?P<line>\d+):"
    r"(?P<column>\d+)"
)
_CARET = re.compile(r"^\s*\|\s*\^+ (?P<message>[^\n]*)$", re.MULTILINE)


class SlangTargetError(UserError):
    """A Slang target file that can't be used; `messages` are the compiler's, one a line, each
    with the file's line and column."""

    def __init__(self, summary: str, messages: list[str]):
        super().__init__(summary)
        self.messages = messages


def slang_target_block(source: str) -> str:
    """A user's Slang file as the generated module holds it: in a namespace of its own, so that
    its names can't collide with the library's, with the compiler's messages naming its lines."""
    return f'namespace {TARGET_NAMESPACE}\n{{\n#line 1 "{TARGET_SOURCE_NAME}"\n{source}\n}}\n'


def read_source(path: str | Path) -> str:
    """The file's text, or a UserError saying why not."""
    text = read_user_text(path, "target file", MAX_TARGET_SOURCE)
    if "\0" in text:
        raise UserError(f"target file {str(path)!r} contains a NUL character")
    return text


def compiler_messages(report: str, name: str, dims: int = 2) -> list[str]:
    """The errors in a Slang compile report, as 'name:line:column: message' lines; errors in the
    probe's own lines mean the file lacks what it must define (of a float2 point, or in 3D a float3)."""
    requirement = REQUIREMENT if dims == 2 else REQUIREMENT_3D
    messages = []
    for block in _DIAGNOSTIC_START.split(report):
        head = _HEAD.match(block)
        if head is None or head.group("kind") != "error":
            continue
        caret = _CARET.search(block)
        text = (caret.group("message") if caret else head.group("title")).strip()
        if head.group("file") == TARGET_SOURCE_NAME:
            messages.append(f"{name}:{head.group('line')}:{head.group('column')}: {text}")
        else:
            messages.append(f"{name} must define {requirement}: {text}")
    if not messages:  # a report in a shape this parser does not know: its first line that says something
        lines = [line for line in report.splitlines() if line.strip() and not line.startswith("Failed to load")]
        messages.append(f"{name}: {lines[0].strip() if lines else 'does not compile'}")
    return messages[:MAX_MESSAGES]


class FileWatch:
    """Notices when a file changes on disk (its modification time, size or existence), looking
    at most every WATCH_INTERVAL_S."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        self._seen = self._stamp()
        self._next = time.monotonic() + WATCH_INTERVAL_S

    def _stamp(self) -> tuple | None:
        try:
            status = os.stat(self.path)
        except OSError:
            return None
        return status.st_mtime_ns, status.st_size

    def changed(self, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        if now < self._next:
            return False
        self._next = now + WATCH_INTERVAL_S
        stamp = self._stamp()
        if stamp == self._seen:
            return False
        self._seen = stamp
        return True
