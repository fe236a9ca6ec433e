"""The StepArgs records of shaders/train.slang: what one step's (or one piece's) learnGradient and
adjustParameters dispatches read, uploaded once per submit. Each dispatch then sets a single
pointer instead of ~25 uniforms: setting a uniform costs ~5 us of CPU, which at small batches
was most of a step's time."""

from __future__ import annotations

import numpy as np
import slangpy as spy

from .components import OPTIMIZERS
from .gpu import Gpu
from .loss_ring import LOSS_HISTORY

REDUCE_GROUPS_PER_ROW = 32768  # adjustParameters' dispatch rows keep each dimension in bounds

STEP_ARGS = np.dtype(
    [
        ("weights", "<u8"),
        ("master", "<u8"),
        ("moments", "<u8"),
        ("gradient_slots", "<u8"),
        ("loss_slots", "<u8"),
        ("loss_history", "<u8"),
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
        ("optimizer", "<u4"),
        ("learning_rate", "<f4"),
        ("beta1", "<f4"),
        ("beta2", "<f4"),
        ("epsilon", "<f4"),
        ("step_number", "<u4"),
        ("padding", "<u4", (3,)),
    ]
)
assert STEP_ARGS.itemsize == 152  # 6 pointers, 4 floats, 13 uints, the optimizer's 6 fields, 3 pad


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


def step_records(trainer, count: int) -> np.ndarray:
    """`count` records for a trainer's next `count` steps, each covering the whole step (callers
    narrow the ranges for pieces)."""
    c, launch, r = trainer.config, trainer.launch, np.zeros(count, STEP_ARGS)
    r["weights"], r["master"] = trainer.weights.device_address, trainer.master.device_address
    r["moments"], r["gradient_slots"] = trainer.moments.device_address, trainer.gradient_slots.device_address
    r["loss_slots"], r["loss_history"] = trainer.loss_slots.device_address, trainer.losses.buffer.device_address
    r["domain"] = c.domain
    r["batch_size"], r["thread_count"], r["seed"] = c.batch_size, launch.thread_count, c.seed
    ahead = np.arange(count)
    r["step"] = trainer.step + ahead
    r["history_index"] = (trainer.step + ahead) % LOSS_HISTORY
    r["step_number"] = trainer.optimizer_steps + 1 + ahead  # 1-based: Adam's bias correction
    r["sample_end"] = trainer.samples_per_thread
    r["gradient_slot_count"], r["loss_slot_count"] = launch.gradient_slot_count, launch.loss_slot_count
    r["groups_per_row"], r["param_end"] = REDUCE_GROUPS_PER_ROW, trainer.plan.param_count + 1
    r["optimizer"], r["learning_rate"] = OPTIMIZERS[c.optimizer].id, c.lr
    r["beta1"], r["beta2"], r["epsilon"] = c.beta1, c.beta2, c.epsilon
    return r


def learn_ranges(first: int, count: int, groups: int, slices: int, samples_per_thread: int) -> list[tuple]:
    """learnGradient's units [first, first + count), slice-major, as (first group, groups, sample
    begin, sample end) dispatches: whole slices in one, parts of a slice in one each, so that
    every group walks its samples in order."""
    if slices == 1:
        return [(first, count, 0, samples_per_thread)]
    ranges, unit, end = [], first, first + count
    while unit < end:
        k, g = divmod(unit, groups)
        if g == 0 and end - unit >= groups:
            rows = (end - unit) // groups
            ranges.append((0, groups, k, k + rows))
            unit += rows * groups
        else:
            n = min(groups - g, end - unit)
            ranges.append((g, n, k, k + 1))
            unit += n
    return ranges
