"""Evaluation of the network on the G x G cell centres of the domain: the eval and derivative losses,
the heatmaps' values and forward-mode derivatives with their |error| scales, and every neuron's value
on a coarser grid. A pass runs whole or in ranges over frames, on a copy of the weights taken when it
began, into one of two buffer sets, so readers only see the last complete pass; on points it ends
with the sets' losses (docs/architecture.md, 'Evaluation, derivative and neuron views')."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import slangpy as spy

from ..gpu.gpu import HostCopy
from ..kernels.view_constants import HEATMAP_VIEWS
from ..train.trainer import Trainer
from .point_metrics import GROUP_UNITS, PointSums, groups
from .slices import Slice

VIEWS = len(HEATMAP_VIEWS)  # values, d/dx, d/dy, |gradient|
NEURON_GRID = 32  # the neuron views' grid side, at most: every k-th cell of the eval grid


def neuron_stride(grid: int) -> int:
    """Every how many eval-grid cells (along x and y) the neuron grid takes one."""
    return -(-grid // NEURON_GRID)


def neuron_side(grid: int) -> int:
    return -(-grid // neuron_stride(grid))


def _slice_arguments(point_dim: int, chosen: Slice, domain, z_range) -> dict:
    """evaluateGrid's slice of a function of (x, y, z), and the z_range a grid encoding spans (none
    in 2D)."""
    if point_dim == 2:
        return {}
    corner, across, up = (spy.float3(*edge) for edge in chosen.frame(domain, z_range))
    return {"sliceCorner": corner, "sliceAcross": across, "sliceUp": up, "depthRange": spy.float2(*z_range)}


@dataclass
class Evaluation:
    predictions: np.ndarray  # (G, G, outputs), [j, i] with j along y
    truths: np.ndarray
    derivatives: np.ndarray  # (G, G, outputs, 4): d prediction/dx, /dy, d truth/dx, /dy
    cell_loss: np.ndarray  # (G, G)
    cell_grad_loss: np.ndarray  # (G, G): the derivatives' squared errors summed over outputs
    error_max: np.ndarray  # (views, outputs): the largest finite |error| of values, d/dx, d/dy
    invalid: np.ndarray  # (views, outputs): cells whose prediction or truth is NaN or infinite
    step: int  # the network evaluated had taken this many steps
    metrics: dict | None = None  # points: train and test loss and accuracy (app/views/point_metrics.py)

    @property
    def loss(self) -> float:
        if self.metrics is not None:
            return self.metrics["test_loss"]
        return float(np.mean(self.cell_loss, dtype=np.float64))

    @property
    def grad_loss(self) -> float:
        return float(np.mean(self.cell_grad_loss, dtype=np.float64))


@dataclass
class Summary:
    """What a frame reads back of a complete pass: the two losses and the per-view statistics."""

    loss: float
    grad_loss: float
    error_max: np.ndarray  # (views, outputs)
    invalid: np.ndarray  # (views, outputs)
    metrics: dict | None = None  # points: as Evaluation.metrics


class _Buffers:
    def __init__(self, trainer: Trainer, grid: int):
        cells, outputs, gpu = grid * grid, trainer.plan.output_dim, trainer.gpu
        self.predictions = gpu.buffer(cells * outputs * 4)
        self.truths = gpu.buffer(cells * outputs * 4)
        self.derivatives = gpu.buffer(cells * outputs * 16)
        self.cell_loss = gpu.buffer(cells * 4)
        self.cell_grad_loss = gpu.buffer(cells * 4)
        self.cell_stats = gpu.buffer(2 * VIEWS * outputs * 4)  # per view: |error| maxima, invalid counts
        neurons = trainer.plan.neuron_count
        self.neuron_values = gpu.buffer(neurons * neuron_side(grid) ** 2 * 4)
        self.neuron_ranges = gpu.buffer(2 * neurons * 4)
        self.points = PointSums(trainer) if trainer.data is not None else None
        self.step = -1
        self.version = -1  # the trainer's weight version evaluated
        self.slice = Slice()  # ...and the slice, of a function of (x, y, z)


class GridEvaluator:
    def __init__(self, trainer: Trainer, grid: int):
        self.trainer, self.grid = trainer, grid
        self.weights = trainer.gpu.buffer(trainer.weights.size)
        self.slice = Slice()  # the slice of a function of (x, y, z) to show (the window's to choose)
        self._sets = [_Buffers(trainer, grid), _Buffers(trainer, grid)]
        self._writing = 0  # the set the pass in progress writes
        self.progress = 0  # cells of the pass in progress done
        self.passes = 0  # complete passes so far
        self._summary_out = self._summary_copy()
        with trainer.gpu.submit() as encoder:  # builds the pipeline now, evaluating no cell
            self._dispatch(encoder, self._sets[0], 0, 0)

    def _summary_copy(self) -> HostCopy:
        outputs = self.trainer.plan.output_dim
        points = self.groups * (4 + outputs)  # PointSums.floats
        return HostCopy(self.trainer.gpu.device, (2 * self.cells + 2 * VIEWS * outputs + points) * 4)

    @property
    def cells(self) -> int:
        return self.grid * self.grid

    @property
    def groups(self) -> int:
        """Groups of points a pass evaluates after the cells."""
        return groups(self.trainer.data)

    @property
    def units(self) -> int:
        """A pass's work in the frame budget's units: the cells, then GROUP_UNITS a point group."""
        return self.cells + GROUP_UNITS * self.groups

    def _follow_data(self) -> None:
        """New points (a different count): buffers for them, at a pass's start."""
        if self.trainer.data is not None and self._sets[0].points.data is not self.trainer.data:
            for buffers in self._sets:
                buffers.points = PointSums(self.trainer)
            self._summary_out = self._summary_copy()

    @property
    def complete(self) -> _Buffers:
        """The last complete pass's buffers (the drawn heatmaps read these)."""
        return self._sets[1 - self._writing]

    def stale(self) -> bool:
        """Whether there is work to do: a pass in progress, or weights (or points) changed since
        the last."""
        complete = self.complete
        return self.progress > 0 or complete.version != self.trainer.version or complete.slice != self.slice

    def can_start(self) -> bool:
        """A pass starts only where the weights are one step's: not mid-way through
        adjustParameters, where some are already updated and others not. (A step paused before
        its updates, in either phase, must not hold the heatmaps back.)"""
        return self.progress > 0 or not self.trainer.progress.updating

    def record(self, encoder: spy.CommandEncoder, cells: int | None = None) -> bool:
        """Records the next `cells` cells of the pass (all the rest when None); True when this
        completes the pass. Then record_summary() and the heatmaps may read it."""
        t = self.trainer
        if self.progress and self._sets[self._writing].points is not None:
            if self._sets[self._writing].points.data is not t.data:  # new points: start again
                self.progress = 0
        if self.progress == 0:
            self._follow_data()
        target = self._sets[self._writing]
        if self.progress == 0:
            encoder.global_barrier()
            encoder.copy_buffer(self.weights, 0, t.weights, 0, t.weights.size)
            encoder.clear_buffer(target.cell_stats)
            encoder.clear_buffer(target.neuron_ranges)
            encoder.global_barrier()
            target.step, target.version, target.slice = t.step, t.version, self.slice
        total = self.units
        count = total - self.progress if cells is None else max(1, min(cells, total - self.progress))
        end = self.progress + count
        if self.progress < self.cells:
            self._dispatch(encoder, target, self.progress, min(end, self.cells) - self.progress)
        if end > self.cells:  # whole groups of points
            first = max(self.progress - self.cells, 0) // GROUP_UNITS
            last = min(-(-(end - self.cells) // GROUP_UNITS), self.groups)
            target.points.dispatch(encoder, t, self.weights, first, last)
            end = min(self.cells + last * GROUP_UNITS, total)
        self.progress = end
        if self.progress < total:
            return False
        self.progress, self._writing, self.passes = 0, 1 - self._writing, self.passes + 1
        return True

    def _dispatch(self, encoder: spy.CommandEncoder, target: _Buffers, first: int, count: int) -> None:
        t = self.trainer
        t.kernels.evaluate_grid.dispatch(
            [max(count, 1), 1, 1],
            command_encoder=encoder,
            weights=self.weights.device_address,
            predictions=target.predictions.device_address,
            truths=target.truths.device_address,
            derivatives=target.derivatives.device_address,
            cellLoss=target.cell_loss.device_address,
            cellGradLoss=target.cell_grad_loss.device_address,
            cellStats=target.cell_stats.device_address,
            neuronValues=target.neuron_values.device_address,
            neuronRanges=target.neuron_ranges.device_address,
            truthPixels=t.truth_pixels.device_address,
            grid=self.grid,
            neuronStride=neuron_stride(self.grid),
            domain=spy.float4(*t.config.domain),
            **_slice_arguments(t.plan.point_dim, target.slice, t.config.domain, t.config.z_range),
            cellOffset=first,
            cellEnd=first + count,
        )
        encoder.global_barrier()

    def record_summary(self, encoder: spy.CommandEncoder) -> None:
        """Records a copy of the complete pass's cell losses, derivative losses, |error| maxima and
        invalid-cell counts to the host."""
        done, cells = self.complete, self.cells
        self._summary_out.record(encoder, done.cell_loss, 0, cells * 4)
        self._summary_out.record(encoder, done.cell_grad_loss, 0, cells * 4, cells * 4)
        stats = 2 * VIEWS * self.trainer.plan.output_dim * 4
        self._summary_out.record(encoder, done.cell_stats, 0, stats, 2 * cells * 4)
        if done.points is not None:
            self._summary_out.record(encoder, done.points.buffer, 0, done.points.floats * 4, 2 * cells * 4 + stats)

    def read_summary(self) -> Summary:
        """What record_summary copied, once it has run."""
        outputs, cells = self.trainer.plan.output_dim, self.cells
        stats = self._summary_out.read(2 * VIEWS * outputs, np.uint32, offset=2 * cells * 4).reshape(VIEWS, 2, outputs)
        metrics = None
        if self.complete.points is not None:
            offset = 2 * cells * 4 + 2 * VIEWS * outputs * 4
            sums = self._summary_out.read(self.complete.points.floats, offset=offset)
            metrics = self.complete.points.metrics(sums, self.trainer.plan.loss.classifies)
        grid_loss = float(np.mean(self._summary_out.read(cells), dtype=np.float64))
        return Summary(
            loss=metrics["test_loss"] if metrics else grid_loss,
            grad_loss=float(np.mean(self._summary_out.read(cells, offset=cells * 4), dtype=np.float64)),
            error_max=np.ascontiguousarray(stats[:, 0]).view(np.float32),
            invalid=np.ascontiguousarray(stats[:, 1]),
            metrics=metrics,
        )

    def read(self) -> Evaluation:
        """Everything the last complete pass computed, read now: the whole maps, in one copy and
        one wait (for what draws or writes them; a run's figures come through read_summary)."""
        done, g, o = self.complete, self.grid, self.trainer.plan.output_dim
        parts = [
            (done.predictions, g * g * o),
            (done.truths, g * g * o),
            (done.derivatives, g * g * o * 4),
            (done.cell_loss, g * g),
            (done.cell_grad_loss, g * g),
            (done.cell_stats, 2 * VIEWS * o),
        ] + ([(done.points.buffer, done.points.floats)] if done.points is not None else [])
        out = HostCopy(self.trainer.gpu.device, 4 * sum(count for _, count in parts))
        offsets = np.cumsum([0] + [4 * count for _, count in parts])
        with self.trainer.gpu.submit() as encoder:
            encoder.global_barrier()  # kernels wrote through pointers the driver cannot track
            for (buffer, count), offset in zip(parts, offsets):
                out.record(encoder, buffer, 0, 4 * count, int(offset))
        maps = [out.read(count, offset=int(offset)) for (_, count), offset in zip(parts, offsets)]
        stats = maps[5].view(np.uint32).reshape(VIEWS, 2, o)
        metrics = done.points.metrics(maps[6], self.trainer.plan.loss.classifies) if done.points is not None else None
        return Evaluation(
            predictions=maps[0].reshape(g, g, o),
            truths=maps[1].reshape(g, g, o),
            derivatives=maps[2].reshape(g, g, o, 4),
            cell_loss=maps[3].reshape(g, g),
            cell_grad_loss=maps[4].reshape(g, g),
            error_max=np.ascontiguousarray(stats[:, 0]).view(np.float32),
            invalid=np.ascontiguousarray(stats[:, 1]),
            step=done.step,
            metrics=metrics,
        )

    def drop_pass(self) -> None:
        """The pass just completed is not taken: the one before it, which it did not overwrite, is
        the complete one again."""
        self._writing, self.passes = 1 - self._writing, self.passes - 1

    def record_figures(self, encoder: spy.CommandEncoder) -> None:
        """Records a whole pass of the current network (a pass in progress is started over) and
        the copy of its figures alone, for read_summary once `encoder` has run: what a headless
        evaluation needs. The maps stay on the GPU for whatever draws or writes them."""
        self.progress = 0
        self.record(encoder)
        self.record_summary(encoder)

    def evaluate(self) -> Evaluation:
        """A whole pass of the current network, now (a pass in progress is started over)."""
        self.progress = 0
        with self.trainer.gpu.submit() as encoder:
            self.record(encoder)
        return self.read()
