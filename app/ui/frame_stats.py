"""The frame figures the Training panel shows: a frame's time and its work, as means over the last
FIGURE_FRAMES frames, and what GPU time, recording and training the last frame took (AppState keeps
them, app/ui/state.py)."""

from __future__ import annotations

import collections
from dataclasses import dataclass, field

FIGURE_FRAMES = 30  # the frame figures are means over this many frames


@dataclass
class Stats:
    frame_ms: float = 0.0  # time from one frame to the next (includes waiting for vsync, events)
    work_ms: float = 0.0  # of that, the frame's build, record, run and read back
    gpu_ms: dict = field(default_factory=dict)  # "training"/"heatmaps"/"ui" -> ms, when measured
    training: str = ""  # what the budget gave training in the last frame that trained
    record_ms: float = 0.0  # CPU time recording the last frame's training
    wait_ms: float = 0.0  # CPU time waiting for the last frame's GPU work
    ui_per_second: float = 0.0  # frames that drew the UI, per second
    # Means over the same last FIGURE_FRAMES frames: a frame's time is known only when the next
    # begins, so each is paired with that frame's own work, which it contains. (Separate running
    # averages, one started on a first frame that compiled for seconds, showed work > frame.)
    _pairs: collections.deque = field(default_factory=lambda: collections.deque(maxlen=FIGURE_FRAMES))
    _last_work: float | None = None

    def add_frame(self, since_last: float, work: float) -> None:
        """`since_last`: seconds since the previous frame began; `work`: this frame's work."""
        if self._last_work is not None:
            self._pairs.append((since_last, self._last_work))
            self.frame_ms = 1000 * sum(p[0] for p in self._pairs) / len(self._pairs)
            self.work_ms = 1000 * sum(p[1] for p in self._pairs) / len(self._pairs)
        self._last_work = work
