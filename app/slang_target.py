"""A user's own Slang file as the ground truth: it defines
`[Differentiable] float target(float2 p, int k)` and `static const int TARGET_COUNT`.

Loading reads the file and compiles it once on its own with a small probe kernel: that finds
compile errors with the compiler's message and line before anything is rebuilt, checks that
`target` is differentiable (the derivative views run fwd_diff through it) and reads
TARGET_COUNT. A watch notices when the file changes on disk. The file is the user's own, on
their own machine, so its text is compiled as written; what this module guarantees is that a
broken file is an error message, never a crash or a lost network. There is no numpy twin of a
Slang target: its values are checked for NaN and infinity on the GPU evaluation instead."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import numpy as np

from .config import MAX_TARGET_SOURCE, MAX_TARGETS
from .errors import UserError, read_user_text
from .evaluation import Evaluation
from .gpu import Gpu
from .grid import grid_centres
from .shadergen import TARGET_NAMESPACE, TARGET_SOURCE_NAME, slang_target_block

WATCH_INTERVAL_S = 0.5  # how often the watch looks at the file
MAX_MESSAGES = 6  # compiler messages kept for the UI
REQUIREMENT = "static const int TARGET_COUNT and [Differentiable] float target(float2 p, int k)"
_PROBE = f"""
#line 1 "probe"
[shader("compute")]
[numthreads(1, 1, 1)]
void probeTarget(uniform int* count, uniform float* derivative)
{{
    count[0] = {TARGET_NAMESPACE}::TARGET_COUNT;
    derivative[0] = fwd_diff({TARGET_NAMESPACE}::target)(diffPair(float2(0.0, 0.0), float2(1.0, 0.0)), 0).d;
}}
"""
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


def read_source(path: str | Path) -> str:
    """The file's text, or a UserError saying why not."""
    text = read_user_text(path, "target file", MAX_TARGET_SOURCE)
    if "\0" in text:
        raise UserError(f"target file {str(path)!r} contains a NUL character")
    return text


def compiler_messages(report: str, name: str) -> list[str]:
    """The errors in a Slang compile report, as 'name:line:column: message' lines; errors in the
    probe's own lines mean the file lacks what it must define."""
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
            messages.append(f"{name} must define {REQUIREMENT}: {text}")
    if not messages:  # a report in a shape this parser does not know: its first line that says something
        lines = [line for line in report.splitlines() if line.strip() and not line.startswith("Failed to load")]
        messages.append(f"{name}: {lines[0].strip() if lines else 'does not compile'}")
    return messages[:MAX_MESSAGES]


def probe(gpu: Gpu, source: str, name: str) -> int:
    """Compiles `source` with the probe kernel and returns its TARGET_COUNT; a
    SlangTargetError carries the compiler's messages."""
    device = gpu.device
    module_name = f"target_probe_{abs(hash(source)):x}"
    try:
        module = device.load_module_from_source(module_name, slang_target_block(source) + _PROBE)
        kernel = device.create_compute_kernel(device.link_program([module], [module.entry_point("probeTarget")]))
    except Exception as error:  # SlangCompileError, or a pipeline the driver refused
        messages = compiler_messages(str(error), name)
        more = f" (and {len(messages) - 1} more)" if len(messages) > 1 else ""
        raise SlangTargetError(f"target file {name!r} does not compile: {messages[0]}{more}", messages) from None
    count, derivative = gpu.buffer(4), gpu.buffer(4)
    kernel.dispatch([1, 1, 1], count=count.device_address, derivative=derivative.device_address)
    value = int(gpu.read(count, 1, np.int32)[0])
    if not 1 <= value <= MAX_TARGETS:
        message = f"{name}: TARGET_COUNT must be between 1 and {MAX_TARGETS} (got {value})"
        raise SlangTargetError(message, [message])
    return value


def load(gpu: Gpu, path: str | Path) -> dict:
    """Config.slang_target for the file at `path`: read, compiled and counted."""
    source = read_source(path)
    count = probe(gpu, source, Path(path).name)
    return {"file": str(path), "source": source, "count": count}


def check_truth_finite(evaluation: Evaluation, slang_target: dict, domain) -> None:
    """Raises UserError if the GPU-evaluated truth of a Slang target is NaN or infinite at some
    cell centre (expressions are checked in numpy before compiling, app.finite_truth.check_finite)."""
    truths = evaluation.truths
    bad = np.argwhere(~np.isfinite(truths))
    if bad.size:
        j, i, k = bad[0]
        x, y = grid_centres(domain, truths.shape[0])
        raise UserError(
            f"target f{k + 1} = target(p, {k}) of {Path(slang_target['file']).name} is "
            f"{truths[j, i, k]} at x = {x[j, i]:.4g}, y = {y[j, i]:.4g}: "
            f"a target must be finite over the whole domain"
        )


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
