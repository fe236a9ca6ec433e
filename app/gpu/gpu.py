"""The one SlangPy device and what belongs to it: the kernels compiled for it, its wave width,
and the one way work is submitted and results come back to the host."""

from __future__ import annotations

import collections
import contextlib
import functools
import os
from collections.abc import Iterator

import numpy as np
import slangpy as spy

from ..config.config import Config
from ..kernels.paths.fused.fragments import FRAGMENT_PROBE, fragment_slot, operand_slot
from ..kernels.plan import NetworkPlan
from ..kernels.planning import plan_for
from ..resources import shader_dir
from .adapters import Adapter
from .device import open_device
from .kernel_cache import KernelCache

STORAGE = (
    spy.BufferUsage.unordered_access
    | spy.BufferUsage.shader_resource
    | spy.BufferUsage.copy_source
    | spy.BufferUsage.copy_destination
)


class HostCopy:
    """Host-visible memory that results are copied into by the encoder that computed them, and
    read once that work has finished. Every result reaches the host this way: a to_numpy() on
    device memory is a GPU round trip of its own, a millisecond and more a call."""

    def __init__(self, device: spy.Device, nbytes: int):
        self.buffer = device.create_buffer(
            size=max(nbytes, 4), usage=spy.BufferUsage.copy_destination, memory_type=spy.MemoryType.read_back
        )

    def record(
        self, encoder: spy.CommandEncoder, source: spy.Buffer, source_offset: int, nbytes: int, offset: int = 0
    ) -> None:
        if nbytes:
            encoder.copy_buffer(self.buffer, offset, source, source_offset, nbytes)

    def read(self, count: int, dtype=np.float32, offset: int = 0) -> np.ndarray:
        """`count` values from byte `offset` (only after the recording encoder has run)."""
        data = self.buffer.to_numpy().view(np.uint8)[offset : offset + count * np.dtype(dtype).itemsize]
        return data.view(dtype).copy()


# Command buffers submitted and not yet finished, at most. slang-rhi keeps, for the life of the
# device, one pooled command buffer for each buffer that was ever in flight at once, and each
# keeps what its largest recording needed: megabytes once it held dispatches
# (docs/slangpy-command-buffer-memory.md). Three keep the GPU fed while the CPU records the next;
# more only grow the pool (docs/benchmarks.md, 'Soak').
MAX_IN_FLIGHT = 3


class Gpu:
    def __init__(self, device: spy.Device, tensor_cores: bool | None = None, adapter: Adapter | None = None):
        self.device = device
        self.adapter = adapter  # the GPU it runs on, as summary.json and Help > About name it
        self._tensor_cores = tensor_cores  # None: as the device and the environment say
        self.kernels = KernelCache(device)
        self._in_flight: collections.deque[int] = collections.deque()  # submit ids, oldest first
        self.peak_in_flight = 0

    @functools.cached_property
    def tensor_cores(self) -> bool:
        """Cooperative matrices (fp16 tensor cores) for half-precision workgroup tiles: where
        Vulkan reports them. SlangPy's CUDA backend reports none, yet runs them through WMMA;
        VISUAL_TRAINER_TENSOR_CORES=1 or 0 decides there (and overrides elsewhere); =emulated
        runs the tensor-core kernels with their products in plain loops (emulated_tensor_cores)."""
        if self._tensor_cores is not None:
            return self._tensor_cores
        forced = os.environ.get("VISUAL_TRAINER_TENSOR_CORES")
        if forced in ("0", "1"):
            return forced == "1"
        return self.emulated_tensor_cores or self.device.has_feature(spy.Feature.cooperative_matrix)

    @functools.cached_property
    def emulated_tensor_cores(self) -> bool:
        """VISUAL_TRAINER_TENSOR_CORES=emulated: the fused trainer and the tensor-core workgroup
        tiles, with every cooperative-matrix product, load and store in plain loops
        (shaders/common/mma_emulated.slang), on any device. So CI's lavapipe runs those kernels' layout,
        shared memory and barriers against numpy; slow, for tests (tests set the attribute)."""
        return os.environ.get("VISUAL_TRAINER_TENSOR_CORES") == "emulated"

    @functools.cached_property
    def fused_fragments(self) -> bool:
        """Whether this device's cooperative matrices hold B operands as the fused trainer's
        fragment-native weight copies assume (app/kernels/paths/fused/fragments.py: fragment_slot),
        and on CUDA A operands and accumulators where that path's fused_registers.slang reads and
        writes them (operand_slot): checked once with a probe kernel; where they don't, plans keep
        the other tensor-core path. On CUDA (tensor cores forced on) the fused trainer runs where the
        probe agrees (app/kernels/paths/fused/layout.py: CUDA_OVERREAD_COLUMNS)."""
        if not self.tensor_cores:
            return False
        if self.emulated_tensor_cores:  # the emulation reads the copies as fragment_slot lays them out
            return True
        try:
            held = self._fragment_probe()
        except Exception:  # a driver that builds no such kernel: the other path
            return False
        r, c = np.divmod(held, 16)
        expected = [fragment_slot(r[0], c[0])]
        if self.device.info.type == spy.DeviceType.cuda:
            expected += [operand_slot(r[tile], c[tile]) for tile in (1, 2, 3)]
        return all(
            np.all(held[tile] >= 0) and np.array_equal(slots, np.arange(256)) for tile, slots in enumerate(expected)
        )

    def _fragment_probe(self) -> np.ndarray:
        """The fragment probe's four tiles (FRAGMENT_PROBE): for each (B, A, float and half
        accumulator) and each lane's component, the element (row * 16 + column) it held."""
        program = self.device.load_program(str(FRAGMENT_PROBE), ["fragmentLayout"])
        halves = self.device.create_buffer(data=np.arange(256, dtype=np.float16), usage=spy.BufferUsage.shader_resource)
        floats = self.device.create_buffer(data=np.arange(256, dtype=np.float32), usage=spy.BufferUsage.shader_resource)
        out = self.buffer(4 * 256 * 4)
        self.device.create_compute_kernel(program).dispatch(
            [32, 1, 1], matrix=halves.device_address, floats=floats.device_address, out=out.device_address
        )
        return self.read(out, 4 * 256).astype(np.int64).reshape(4, 256)

    @functools.cached_property
    def lane_tiles(self) -> bool:
        """Lane tiles for wide float networks (app/kernels/paths/lanes/): on a CPU driver, where they
        train wide layers many times faster than the GPU paths. VISUAL_TRAINER_LANE_TILES=1 or 0
        decides elsewhere (tests set the attribute to train the other paths on lavapipe)."""
        forced = os.environ.get("VISUAL_TRAINER_LANE_TILES")
        if forced in ("0", "1"):
            return forced == "1"
        return self.software

    def plan(self, config: Config) -> NetworkPlan:
        """`config`'s plan on this device."""
        return plan_for(config, self.tensor_cores, self.fused_fragments, self.lane_tiles, self.emulated_tensor_cores)

    @property
    def software(self) -> bool:
        """A CPU driver (lavapipe): compiles are slow and a second process is cheap."""
        return self.device.has_feature(spy.Feature.software_device)

    @functools.cached_property
    def wave_width(self) -> int:
        """The device's wave (subgroup) width: 8 on lavapipe, 32 on NVIDIA. Never assume 32."""
        program = self.device.load_program(str(shader_dir() / "common" / "probe.slang"), ["waveWidth"])
        result = self.buffer(4)
        self.device.create_compute_kernel(program).dispatch([64, 1, 1], result=result.device_address)
        return int(self.read(result, 1, np.uint32)[0])

    def buffer(self, nbytes: int) -> spy.Buffer:
        """Device memory that kernels reach by pointer and copies can read and write."""
        return self.device.create_buffer(size=max(nbytes, 4), usage=STORAGE)

    @contextlib.contextmanager
    def submit(self, wait: bool = True) -> Iterator[spy.CommandEncoder]:
        """`with gpu.submit() as encoder:` records into a new encoder, then submits it (and waits
        for it, unless wait=False). Nothing is submitted if the block raises."""
        encoder = self.device.create_command_encoder()
        yield encoder
        self.submit_buffer(encoder.finish())
        if wait:
            self.device.wait()

    def submit_buffer(self, command_buffer: spy.CommandBuffer) -> None:
        """Submits a finished command buffer; first waits for the oldest unfinished one while
        MAX_IN_FLIGHT are unfinished (every submit goes through here, so the bound holds)."""
        in_flight = self._in_flight
        while in_flight and self.device.is_submit_finished(in_flight[0]):
            in_flight.popleft()
        while len(in_flight) >= MAX_IN_FLIGHT:
            self.device.wait_for_submit(in_flight.popleft())
        in_flight.append(self.device.submit_command_buffer(command_buffer))
        self.peak_in_flight = max(self.peak_in_flight, len(in_flight))

    def read(self, buffer: spy.Buffer, count: int, dtype=np.float32, offset: int = 0) -> np.ndarray:
        """`count` values of `buffer` from byte `offset`, now."""
        nbytes = count * np.dtype(dtype).itemsize
        out = HostCopy(self.device, nbytes)
        with self.submit() as encoder:
            encoder.global_barrier()  # kernels wrote through pointers the driver cannot track
            out.record(encoder, buffer, offset, nbytes)
        return out.read(count, dtype)

    def write(self, buffer: spy.Buffer, values: np.ndarray) -> None:
        """`values` into `buffer` once the GPU has finished what was submitted before: the
        window's training runs while the UI is built, and a UI action (a reset, a checkpoint)
        writes then. Nothing orders a host write after work in flight otherwise."""
        self.device.wait()
        buffer.copy_from_numpy(np.ascontiguousarray(values))


def create_gpu(kind: str = "auto", tensor_cores: bool | None = None, gpu: str | None = None) -> Gpu:
    """A device of `kind` on the adapter `gpu` names (app/gpu/device.py: open_device);
    `tensor_cores` decides whether plans take them (None: Gpu.tensor_cores)."""
    device, adapter = open_device(kind, gpu)
    return Gpu(device, tensor_cores, adapter)
