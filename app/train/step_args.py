"""The StepArgs records of shaders/common/step_args.slang: what one step's (or one piece's) learnGradient
and adjustParameters dispatches read (the trainer fills them), uploaded once per submit. Each
dispatch then sets a single pointer instead of ~25 uniforms: setting a uniform costs ~5 us of CPU,
which at small batches was most of a step's time. Their numpy layout is the Slang struct's, read
from the compiled module (NetworkKernels.step_args, app/gpu/struct_layout.py): the struct is the
one definition, its fields snake_case here (sampleEnd: sample_end; optimizer: a nested record)."""

from __future__ import annotations

import numpy as np
import slangpy as spy

from ..gpu.gpu import Gpu

REGULARIZATION_IDS = {"none": 0, "l1": 1, "l2": 2}  # StepArgs' regularization (shaders/common/step_args.slang)

REDUCE_GROUPS_PER_ROW = 32768  # adjustParameters' dispatch rows keep each dimension in bounds
MAX_ROOTS = 4096  # root shader objects kept for binding again (StepArgsRing._root)


class StepArgsRing:
    """A GPU buffer the records are uploaded into, in a ring, so that a record is not written over
    while a dispatch recorded earlier may still read it; and the dispatches that read them."""

    def __init__(self, gpu: Gpu, dtype: np.dtype):
        self.gpu, self.dtype = gpu, dtype  # the records' layout: NetworkKernels.step_args
        self.buffer: spy.Buffer | None = None
        self._retired: list[spy.Buffer] = []  # outgrown, kept: a dispatch in flight may read one
        self.capacity = 0
        self.head = 0
        self._roots: dict[tuple[int, int], tuple[spy.ComputeKernel, spy.ShaderObject]] = {}

    def upload(self, encoder: spy.CommandEncoder, records: np.ndarray) -> int:
        """Records an upload of `records`; returns the device address of the first."""
        count = len(records)
        if count > self.capacity - self.head:
            if 2 * count > self.capacity:
                if self.buffer is not None:
                    self._retired.append(self.buffer)
                self.capacity = max(2 * count, 64)
                self.buffer = self.gpu.buffer(self.capacity * self.dtype.itemsize)
                self._roots.clear()  # their records' addresses are in the old buffer
            self.head = 0
        offset = self.head * self.dtype.itemsize
        # Dispatches read the records through a pointer the driver cannot track: barriers order
        # the upload after earlier readers and before the new ones.
        encoder.global_barrier()
        encoder.upload_buffer_data(self.buffer, offset, records.view(np.uint8))
        encoder.global_barrier()
        self.head += count
        return self.buffer.device_address + offset

    def dispatch(
        self, encoder: spy.CommandEncoder, kernel: spy.ComputeKernel, pipeline, size: spy.uint3, address: int
    ) -> None:
        """One dispatch of `kernel` (its `pipeline`) over `size` threads reading the record at
        `address`. Through the compute-pass API (~13 us of CPU against ~20 us for
        ComputeKernel.dispatch, at a few hundred dispatches a frame)."""
        compute = encoder.begin_compute_pass()
        compute.bind_pipeline(pipeline, self._root(kernel, address))
        compute.dispatch(size)
        compute.end()
        # Pointer accesses are invisible to the driver's hazard tracking: order them by hand.
        encoder.global_barrier()

    def _root(self, kernel: spy.ComputeKernel, address: int) -> spy.ShaderObject:
        """A root shader object of `kernel` reading the record at `address`, made once and bound
        again by every later dispatch of that kernel and ring slot. Writing the pointer into the
        fresh root that each bind makes cost 16 of a dispatch's 39 us of CPU on lavapipe."""
        key = (id(kernel), address)
        kept = self._roots.get(key)
        if kept is None:
            if len(self._roots) >= MAX_ROOTS:
                self._roots.clear()
            root = self.gpu.device.create_root_shader_object(kernel.program)
            spy.ShaderCursor(root).find_entry_point(0).find_field("args").write(address)
            kept = self._roots[key] = (kernel, root)  # the kernel kept alive: its id stays its own
        return kept[1]
