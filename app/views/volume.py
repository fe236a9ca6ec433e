"""A function of (x, y, z) on a lattice of side³ points spanning the box corner to corner
(shaders/views/volume.slang's evaluateVolume): the learned first output and the truth's, with their
gradients where asked, on a copy of the weights, in slabs read back one at a time or in ranges
over frames. The mesh export marches it; the surface metrics compare learned and truth on it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import slangpy as spy

from ..gpu.gpu import HostCopy
from ..train.trainer import Trainer
from .slices import box

SLOPES, TRUTH = 1, 2  # evaluateVolume's parts: VOLUME_SLOPES, VOLUME_TRUTH
SLAB_BYTES = 1 << 25  # a slab's device buffers, at most (and as much host-visible memory)
MAX_DISPATCH_POINTS = 1 << 21  # 32,768 workgroups of 64 (the limit is 65,535)


@dataclass
class Volume:
    """Values on the lattice, [i, j, k] along x, y and z; None where not asked for."""

    box: np.ndarray  # (3, 2): each axis's low and high end
    learned: np.ndarray  # (side, side, side) float32: the first output
    learned_slopes: np.ndarray | None = None  # (side, side, side, 3): its gradient
    truth: np.ndarray | None = None
    truth_slopes: np.ndarray | None = None
    step: int = -1  # the network evaluated had taken this many steps

    @property
    def side(self) -> int:
        return self.learned.shape[0]

    @property
    def spacing(self) -> np.ndarray:
        """The lattice's step along x, y and z."""
        return (self.box[:, 1] - self.box[:, 0]) / (self.side - 1)


def _floats_per_point(parts: int) -> tuple[int, int, int, int]:
    """Floats a point of learned values, learned slopes, truth values and truth slopes."""
    slopes, truth = bool(parts & SLOPES), bool(parts & TRUTH)
    return 1, 3 * slopes, truth, 3 * (slopes and truth)


class VolumeEvaluator:
    """Evaluates the lattice of `side` points an axis with `parts` (SLOPES, TRUTH): whole now
    (`evaluate`), or over frames (`record` ranges of one slab, then `take`)."""

    def __init__(self, trainer: Trainer, side: int, parts: int = 0):
        if trainer.kernels.evaluate_volume is None:
            raise ValueError("the lattice evaluation is for functions of (x, y, z)")
        self.trainer, self.side, self.parts = trainer, side, parts
        self.widths = _floats_per_point(parts)
        self.points = side**3
        self.slab = min(self.points, SLAB_BYTES // (4 * sum(self.widths)))
        gpu = trainer.gpu
        self.buffers = [gpu.buffer(self.slab * width * 4) if width else None for width in self.widths]
        self.weights = gpu.buffer(trainer.weights.size)
        self._out = HostCopy(gpu.device, self.slab * sum(self.widths) * 4)
        self.progress = 0  # points of the pass in progress recorded (`record`)
        self._step = -1
        self.version = -1  # the trainer's weight version the last pass began with

    def warm(self) -> None:
        """Builds the kernel's pipeline now, evaluating no point (a first pass would pay for it)."""
        with self.trainer.gpu.submit() as encoder:
            self._dispatch(encoder, 0, 0, 0)

    def _begin(self, encoder: spy.CommandEncoder) -> None:
        """The pass's copy of the weights (kernels wrote them through pointers: barriers)."""
        t = self.trainer
        encoder.global_barrier()
        encoder.copy_buffer(self.weights, 0, t.weights, 0, t.weights.size)
        encoder.global_barrier()
        self._step, self.version = t.step, t.version

    def _dispatch(self, encoder: spy.CommandEncoder, slab_start: int, first: int, count: int) -> None:
        t = self.trainer
        dummy = self.buffers[0].device_address
        addresses = [buffer.device_address if buffer is not None else dummy for buffer in self.buffers]
        for start in range(first, first + max(count, 1), MAX_DISPATCH_POINTS):
            size = min(MAX_DISPATCH_POINTS, first + count - start)
            t.kernels.evaluate_volume.dispatch(
                [max(size, 1), 1, 1],
                command_encoder=encoder,
                weights=self.weights.device_address,
                truthPixels=t.truth_pixels.device_address,
                learnedValues=addresses[0],
                learnedSlopes=addresses[1],
                truthValues=addresses[2],
                truthSlopes=addresses[3],
                domain=spy.float4(*t.config.domain),
                depthRange=spy.float2(*t.config.z_range),
                side=self.side,
                parts=self.parts,
                slabStart=slab_start,
                cellOffset=start,
                cellEnd=start + size,
            )
        encoder.global_barrier()

    def _record_copy(self, encoder: spy.CommandEncoder, count: int) -> None:
        """The slab's first `count` points of each part to the host, part after part."""
        offset = 0
        for buffer, width in zip(self.buffers, self.widths):
            if buffer is not None:
                self._out.record(encoder, buffer, 0, count * width * 4, offset)
                offset += count * width * 4

    def _read_slab(self, arrays: list[np.ndarray | None], slab_start: int, count: int) -> None:
        offset = 0
        for array, width in zip(arrays, self.widths):
            if array is not None:
                array[slab_start * width : (slab_start + count) * width] = self._out.read(count * width, offset=offset)
                offset += count * width * 4

    def _empty(self) -> list[np.ndarray | None]:
        return [np.empty(self.points * width, np.float32) if width else None for width in self.widths]

    def box(self) -> np.ndarray:
        """The box the lattice spans: the trainer's, now."""
        return box(self.trainer.config.domain, self.trainer.config.z_range)

    def _volume(self, arrays: list[np.ndarray | None]) -> Volume:
        n = self.side
        shaped = [
            None if array is None else array.reshape((n, n, n) if width == 1 else (n, n, n, width))
            for array, width in zip(arrays, self.widths)
        ]
        return Volume(self.box(), *shaped, step=self._step)

    def evaluate(self) -> Volume:
        """The whole lattice of the current network, now: a submit and a wait a slab."""
        arrays = self._empty()
        for slab_start in range(0, self.points, self.slab):
            count = min(self.slab, self.points - slab_start)
            with self.trainer.gpu.submit() as encoder:
                if slab_start == 0:
                    self._begin(encoder)
                self._dispatch(encoder, slab_start, slab_start, count)
                self._record_copy(encoder, count)
            self._read_slab(arrays, slab_start, count)
        return self._volume(arrays)

    def record(self, encoder: spy.CommandEncoder, count: int) -> bool:
        """Records the next `count` points of a pass over frames (a lattice of one slab); True when
        this completes it, its copy to the host recorded: `take` it once `encoder` has run."""
        if self.slab < self.points:
            raise ValueError("a pass over frames is for a lattice of one slab")
        if self.progress == 0:
            self._begin(encoder)
        count = max(1, min(count, self.points - self.progress))
        self._dispatch(encoder, 0, self.progress, count)
        self.progress += count
        if self.progress < self.points:
            return False
        self._record_copy(encoder, self.points)
        self.progress = 0
        return True

    def take(self) -> Volume:
        """The pass `record` completed, once its encoder has run."""
        arrays = self._empty()
        self._read_slab(arrays, 0, self.points)
        return self._volume(arrays)
