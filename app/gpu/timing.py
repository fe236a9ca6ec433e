"""GPU time of a frame's three parts from timestamp queries, where the device has them: what
the frame budget measures the work it schedules by, and what the window shows."""

from __future__ import annotations

import slangpy as spy

# Each part between two of the frame's marks: 0 and 1 around the training (submitted before the
# UI is built), 2 where the frame's own encoder begins (after the UI is built: the GPU may have
# been idle between 1 and 2), 3 after the evaluation and heatmaps, 4 after the UI.
PARTS = {"training": (0, 1), "heatmaps": (2, 3), "ui": (3, 4)}
MARKS = 5


class GpuTimer:
    def __init__(self, device: spy.Device):
        self.pool = None
        self._written = False
        if device.has_feature(spy.Feature.timestamp_query) and device.info.timestamp_frequency > 0:
            self.pool = device.create_query_pool(type=spy.QueryType.timestamp, count=MARKS)

    @property
    def available(self) -> bool:
        return self.pool is not None

    def mark(self, encoder: spy.CommandEncoder, index: int) -> None:
        """Timestamp `index` (see PARTS)."""
        if self.pool is None:
            return
        if index == 0:
            self.pool.reset()  # host-side reset: the previous frame's queries were read already
        encoder.write_timestamp(self.pool, index)
        self._written = index == MARKS - 1

    def read(self) -> dict[str, float]:
        """Seconds per part of the last submitted frame (call after it finished); {} unmeasured."""
        if self.pool is None or not self._written:
            return {}
        stamps = self.pool.get_timestamp_results(0, MARKS)
        return {part: max(0.0, stamps[end] - stamps[begin]) for part, (begin, end) in PARTS.items()}
