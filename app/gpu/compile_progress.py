"""How far the compile of a new network has got, for a rebuild's progress bar. On a CPU driver the
child process that compiles first (app/loop/rebuild.py) names each stage on its standard output;
within a stage the bar moves by the time spent against the stage's expected time, never past its
end, so it always moves and reaches a stage's end only when the child says it is done."""

from __future__ import annotations

import threading
import time
from typing import IO

# The child's stages, in order, each weighted by its rough share of a wide network's compile with
# empty caches on a CPU driver (4 -> 256 x 8 -> 4): the bar's parts.
STAGES = (
    ("compiling Slang", 2.0),
    ("compiling the training kernels", 8.0),
    ("compiling the evaluation kernel", 4.0),
    ("compiling the heatmap kernels", 2.0),
)


def announce(stage: int) -> None:
    """In the child: stage `stage` of STAGES begins (one line on standard output)."""
    print(stage, flush=True)


class CompileProgress:
    """Reads the child's stage lines from `stream` (its standard output) on a thread of its own."""

    def __init__(self, stream: IO[str]):
        self.stage, self.since = -1, time.perf_counter()
        self._lock = threading.Lock()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            if line.strip().isdigit():
                with self._lock:
                    self.stage, self.since = int(line), time.perf_counter()

    def fraction(self) -> float:
        """Of the whole compile: the stages done and the expected part of the current one."""
        with self._lock:
            stage, since = self.stage, self.since
        weights = [seconds for _, seconds in STAGES]
        if stage < 0:
            return 0.0
        elapsed, expected = time.perf_counter() - since, weights[stage]
        within = elapsed / (elapsed + expected)  # 1/2 at the expected time, approaching 1
        return (sum(weights[:stage]) + within * expected) / sum(weights)

    @property
    def label(self) -> str:
        with self._lock:
            stage = self.stage
        if stage < 0:
            return "starting the compile"
        return f"{STAGES[stage][0]} ({stage + 1}/{len(STAGES)})"
