"""The StepArgs records of shaders/common/step_args.slang: what one step's (or piece's) learnGradient
and adjustParameters dispatches read, uploaded once per submit, so each dispatch sets one pointer
instead of many uniforms (docs/architecture.md, 'StepArgs records and command buffers'). Their numpy
layout is read from the compiled struct, the one definition, its fields snake_case here."""

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
        `address`, through the compute-pass API, which costs less CPU than ComputeKernel.dispatch."""
        compute = encoder.begin_compute_pass()
        compute.bind_pipeline(pipeline, self._root(kernel, address))
        compute.dispatch(size)
        compute.end()
        # Pointer accesses are invisible to the driver's hazard tracking: order them by hand.
        encoder.global_barrier()

    def _root(self, kernel: spy.ComputeKernel, address: int) -> spy.ShaderObject:
        """A root shader object of `kernel` reading the record at `address`, made once and bound
        again by every later dispatch of that kernel and ring slot: writing the pointer into the
        fresh root that each bind makes was much of a dispatch's CPU time (docs/benchmarks.md)."""
        key = (id(kernel), address)
        kept = self._roots.get(key)
        if kept is None:
            if len(self._roots) >= MAX_ROOTS:
                self._roots.clear()
            root = self.gpu.device.create_root_shader_object(kernel.program)
            spy.ShaderCursor(root).find_entry_point(0).find_field("args").write(address)
            kept = self._roots[key] = (kernel, root)  # the kernel kept alive: its id stays its own
        return kept[1]
