"""The per-step mean training losses, in a ring on the GPU: adjustParameters writes step t's loss
at t % LOSS_HISTORY, and copies to the host are recorded in the encoder that computed them."""

from __future__ import annotations

import numpy as np
import slangpy as spy

from ..gpu.gpu import Gpu, HostCopy

LOSS_HISTORY = 8192


class LossRing:
    def __init__(self, gpu: Gpu):
        self.buffer = gpu.buffer(LOSS_HISTORY * 4)
        self._out = HostCopy(gpu.device, LOSS_HISTORY * 4)
        self._count = 0

    def record_readback(self, encoder: spy.CommandEncoder, steps: range) -> None:
        """Records a copy of `steps`' losses to the host; read() returns them once it has run."""
        count = len(steps)
        if count > LOSS_HISTORY:
            raise ValueError(f"at most {LOSS_HISTORY} steps can be read back at once")
        start = steps.start % LOSS_HISTORY if count else 0
        first = min(count, LOSS_HISTORY - start)
        self._out.record(encoder, self.buffer, start * 4, first * 4)
        self._out.record(encoder, self.buffer, 0, (count - first) * 4, first * 4)  # the ring wrapped
        self._count = count

    def read(self) -> np.ndarray:
        return self._out.read(self._count)
