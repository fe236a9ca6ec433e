"""The StepArgs records of shaders/train.slang: what one step's (or one piece's) learnGradient and
adjustParameters dispatches read (the trainer fills them), uploaded once per submit. Each dispatch then sets a single
pointer instead of ~25 uniforms: setting a uniform costs ~5 us of CPU, which at small batches
was most of a step's time."""

from __future__ import annotations

import numpy as np
import slangpy as spy

from .gpu import Gpu
from .optimizers import HYPER_SLOTS

REDUCE_GROUPS_PER_ROW = 32768  # adjustParameters' dispatch rows keep each dimension in bounds

STEP_ARGS = np.dtype(
    [
        ("weights", "<u8"),
        ("master", "<u8"),
        ("optimizer_state", "<u8"),
        ("gradient_slots", "<u8"),
        ("loss_slots", "<u8"),
        ("loss_history", "<u8"),
        ("grid_gradients", "<u8"),
        ("truth_data", "<u8"),
        ("domain", "<f4", (4,)),
        ("batch_size", "<u4"),
        ("thread_count", "<u4"),
        ("seed", "<u4"),
        ("step", "<u4"),
        ("group_offset", "<u4"),
        ("sample_begin", "<u4"),
        ("sample_end", "<u4"),
        ("gradient_slot_count", "<u4"),
        ("loss_slot_count", "<u4"),
        ("history_index", "<u4"),
        ("groups_per_row", "<u4"),
        ("param_offset", "<u4"),
        ("param_end", "<u4"),
        ("grid_offset", "<u4"),
        ("grid_end", "<u4"),
        ("optimizer", "<u4"),
        ("learning_rate", "<f4"),
        ("step_number", "<u4"),
        ("hyper", "<f4", (HYPER_SLOTS,)),
    ]
)
# 8 pointers, 4 floats, 15 uints, the optimizer's 3 fields and its hyper-parameters: a multiple of
# the pointers' 8 bytes, so that Slang's struct has no tail padding that this one lacks.
assert STEP_ARGS.itemsize % 8 == 0


class StepArgsRing:
    """A GPU buffer the records are uploaded into, in a ring, so that a record is not written over
    while a dispatch recorded earlier may still read it."""

    def __init__(self, gpu: Gpu):
        self.gpu = gpu
        self.buffer: spy.Buffer | None = None
        self._retired: list[spy.Buffer] = []  # outgrown, kept: a dispatch in flight may read one
        self.capacity = 0
        self.head = 0

    def upload(self, encoder: spy.CommandEncoder, records: np.ndarray) -> int:
        """Records an upload of `records`; returns the device address of the first."""
        count = len(records)
        if count > self.capacity - self.head:
            if 2 * count > self.capacity:
                if self.buffer is not None:
                    self._retired.append(self.buffer)
                self.capacity = max(2 * count, 64)
                self.buffer = self.gpu.buffer(self.capacity * STEP_ARGS.itemsize)
            self.head = 0
        offset = self.head * STEP_ARGS.itemsize
        # Dispatches read the records through a pointer the driver cannot track: barriers order
        # the upload after earlier readers and before the new ones.
        encoder.global_barrier()
        encoder.upload_buffer_data(self.buffer, offset, records.view(np.uint8))
        encoder.global_barrier()
        self.head += count
        return self.buffer.device_address + offset
