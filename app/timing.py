"""GPU time of a frame's three parts from timestamp queries, where the device has them: what
the frame budget measures the work it schedules by, and what the window shows."""

from __future__ import annotations

import slangpy as spy

PARTS = ("training", "heatmaps", "ui")


class GpuTimer:
    def __init__(self, device: spy.Device):
        self.pool = None
        self._written = False
        if device.has_feature(spy.Feature.timestamp_query) and device.info.timestamp_frequency > 0:
            self.pool = device.create_query_pool(type=spy.QueryType.timestamp, count=len(PARTS) + 1)

    @property
    def available(self) -> bool:
        return self.pool is not None

    def mark(self, encoder: spy.CommandEncoder, index: int) -> None:
        """Timestamp `index` (0 = frame start, then one after each part)."""
        if self.pool is None:
            return
        if index == 0:
            self.pool.reset()  # host-side reset: the previous frame's queries were read already
        encoder.write_timestamp(self.pool, index)
        self._written = index == len(PARTS)

    def read(self) -> dict[str, float]:
        """Seconds per part of the last submitted frame (call after it finished); {} unmeasured."""
        if self.pool is None or not self._written:
            return {}
        stamps = self.pool.get_timestamp_results(0, len(PARTS) + 1)
        return {part: max(0.0, stamps[i + 1] - stamps[i]) for i, part in enumerate(PARTS)}
