"""Evaluation of the network on the G x G cell centres of the domain: the eval loss and the
derivative loss, the heatmaps' data (values and their derivatives in x and y, by Slang's
forward-mode autodiff) with their |error| scales, and every neuron's value on a coarser grid
for the neuron views. A pass runs whole or in ranges of cells over several frames (a wide
network on a CPU driver takes most of a second); it evaluates a copy of the weights taken when
it began, so it always describes one network, and it writes into one of two buffer sets, so
readers only ever see the last complete pass."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import slangpy as spy

from .gpu import HostCopy
from .trainer import Trainer

VIEWS = 3  # values, d/dx, d/dy (app.components.HEATMAP_VIEWS)
NEURON_GRID = 32  # the neuron views' grid side, at most: every k-th cell of the eval grid


def neuron_stride(grid: int) -> int:
    """Every how many eval-grid cells (along x and y) the neuron grid takes one."""
    return -(-grid // NEURON_GRID)


def neuron_side(grid: int) -> int:
    return -(-grid // neuron_stride(grid))


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

    @property
    def loss(self) -> float:
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
        self.step = -1
        self.version = -1  # the trainer's weight version evaluated


class GridEvaluator:
    def __init__(self, trainer: Trainer, grid: int):
        self.trainer, self.grid = trainer, grid
        self.weights = trainer.gpu.buffer(trainer.weights.size)
        self._sets = [_Buffers(trainer, grid), _Buffers(trainer, grid)]
        self._writing = 0  # the set the pass in progress writes
        self.progress = 0  # cells of the pass in progress done
        self.passes = 0  # complete passes so far
        outputs = trainer.plan.output_dim
        self._summary_out = HostCopy(trainer.gpu.device, (2 * self.cells + 2 * VIEWS * outputs) * 4)
        with trainer.gpu.submit() as encoder:  # builds the pipeline now, evaluating no cell
            self._dispatch(encoder, self._sets[0], 0, 0)

    @property
    def cells(self) -> int:
        return self.grid * self.grid

    @property
    def complete(self) -> _Buffers:
        """The last complete pass's buffers (the drawn heatmaps read these)."""
        return self._sets[1 - self._writing]

    def stale(self) -> bool:
        """Whether there is work to do: a pass in progress, or weights changed since the last."""
        return self.progress > 0 or self.complete.version != self.trainer.version

    def can_start(self) -> bool:
        """A pass starts only between steps: mid-way through adjustParameters some weights are
        already updated and others not."""
        return self.progress > 0 or self.trainer.progress.phase == "learn"

    def record(self, encoder: spy.CommandEncoder, cells: int | None = None) -> bool:
        """Records the next `cells` cells of the pass (all the rest when None); True when this
        completes the pass. Then record_summary() and the heatmaps may read it."""
        t, target = self.trainer, self._sets[self._writing]
        if self.progress == 0:
            encoder.global_barrier()
            encoder.copy_buffer(self.weights, 0, t.weights, 0, t.weights.size)
            encoder.clear_buffer(target.cell_stats)
            encoder.clear_buffer(target.neuron_ranges)
            encoder.global_barrier()
            target.step, target.version = t.step, t.version
        count = self.cells - self.progress if cells is None else max(1, min(cells, self.cells - self.progress))
        self._dispatch(encoder, target, self.progress, count)
        self.progress += count
        if self.progress < self.cells:
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
        self._summary_out.record(
            encoder, done.cell_stats, 0, 2 * VIEWS * self.trainer.plan.output_dim * 4, 2 * cells * 4
        )

    def read_summary(self) -> Summary:
        """What record_summary copied, once it has run."""
        outputs, cells = self.trainer.plan.output_dim, self.cells
        stats = self._summary_out.read(2 * VIEWS * outputs, np.uint32, offset=2 * cells * 4).reshape(VIEWS, 2, outputs)
        return Summary(
            loss=float(np.mean(self._summary_out.read(cells), dtype=np.float64)),
            grad_loss=float(np.mean(self._summary_out.read(cells, offset=cells * 4), dtype=np.float64)),
            error_max=np.ascontiguousarray(stats[:, 0]).view(np.float32),
            invalid=np.ascontiguousarray(stats[:, 1]),
        )

    def read(self) -> Evaluation:
        """Everything the last complete pass computed, read now."""
        done, g, o, gpu = self.complete, self.grid, self.trainer.plan.output_dim, self.trainer.gpu
        stats = gpu.read(done.cell_stats, 2 * VIEWS * o, np.uint32).reshape(VIEWS, 2, o)
        return Evaluation(
            predictions=gpu.read(done.predictions, g * g * o).reshape(g, g, o),
            truths=gpu.read(done.truths, g * g * o).reshape(g, g, o),
            derivatives=gpu.read(done.derivatives, g * g * o * 4).reshape(g, g, o, 4),
            cell_loss=gpu.read(done.cell_loss, g * g).reshape(g, g),
            cell_grad_loss=gpu.read(done.cell_grad_loss, g * g).reshape(g, g),
            error_max=np.ascontiguousarray(stats[:, 0]).view(np.float32),
            invalid=np.ascontiguousarray(stats[:, 1]),
            step=done.step,
        )

    def evaluate(self) -> Evaluation:
        """A whole pass of the current network, now (a pass in progress is started over)."""
        self.progress = 0
        with self.trainer.gpu.submit() as encoder:
            self.record(encoder)
        return self.read()
