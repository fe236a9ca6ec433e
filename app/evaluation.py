"""Evaluation of the network on the G x G cell centres of the domain: the eval loss, the
heatmaps' data and the |error| scale. A pass runs whole or in ranges of cells over several
frames (a wide network on a CPU driver takes most of a second); it evaluates a copy of the
weights taken when it began, so it always describes one network, and it writes into one of two
buffer sets, so readers only ever see the last complete pass."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import slangpy as spy

from app.gpu import HostCopy
from app.trainer import Trainer


@dataclass
class Evaluation:
    predictions: np.ndarray  # (G, G, outputs), [j, i] with j along y
    truths: np.ndarray
    cell_loss: np.ndarray    # (G, G)
    error_max: np.ndarray    # (outputs,): the largest finite |error|
    invalid: np.ndarray      # (outputs,): cells whose prediction or truth is NaN or infinite
    step: int                # the network evaluated had taken this many steps

    @property
    def loss(self) -> float:
        return float(np.mean(self.cell_loss, dtype=np.float64))


class _Buffers:
    def __init__(self, trainer: Trainer, grid: int):
        cells, outputs = grid * grid, trainer.plan.output_dim
        self.predictions = trainer.gpu.buffer(cells * outputs * 4)
        self.truths = trainer.gpu.buffer(cells * outputs * 4)
        self.cell_loss = trainer.gpu.buffer(cells * 4)
        self.cell_stats = trainer.gpu.buffer(2 * outputs * 4)  # |error| maxima, then invalid counts
        self.step = -1
        self.version = -1  # the trainer's weight version evaluated


class GridEvaluator:
    def __init__(self, trainer: Trainer, grid: int):
        self.trainer, self.grid = trainer, grid
        self.weights = trainer.gpu.buffer(trainer.weights.size)
        self._sets = [_Buffers(trainer, grid), _Buffers(trainer, grid)]
        self._writing = 0               # the set the pass in progress writes
        self.progress = 0               # cells of the pass in progress done
        self.passes = 0                 # complete passes so far
        outputs = trainer.plan.output_dim
        self._summary_out = HostCopy(trainer.gpu.device, (self.cells + 2 * outputs) * 4)
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
            [max(count, 1), 1, 1], command_encoder=encoder, weights=self.weights.device_address,
            predictions=target.predictions.device_address, truths=target.truths.device_address,
            cellLoss=target.cell_loss.device_address, cellStats=target.cell_stats.device_address,
            grid=self.grid, domain=spy.float4(*t.config.domain), cellOffset=first, cellEnd=first + count)
        encoder.global_barrier()

    def record_summary(self, encoder: spy.CommandEncoder) -> None:
        """Records a copy of the complete pass's cell losses, |error| maxima and invalid-cell
        counts to the host."""
        done = self.complete
        self._summary_out.record(encoder, done.cell_loss, 0, self.cells * 4)
        self._summary_out.record(encoder, done.cell_stats, 0, 2 * self.trainer.plan.output_dim * 4, self.cells * 4)

    def read_summary(self) -> tuple[float, np.ndarray, np.ndarray]:
        """(eval loss, |error| maxima, invalid cells) recorded by record_summary, once it has run."""
        outputs = self.trainer.plan.output_dim
        cell_loss = self._summary_out.read(self.cells)
        error_max = self._summary_out.read(outputs, offset=self.cells * 4)
        invalid = self._summary_out.read(outputs, np.uint32, offset=(self.cells + outputs) * 4)
        return float(np.mean(cell_loss, dtype=np.float64)), error_max, invalid

    def read(self) -> Evaluation:
        """Everything the last complete pass computed, read now."""
        done, g, o, gpu = self.complete, self.grid, self.trainer.plan.output_dim, self.trainer.gpu
        return Evaluation(predictions=gpu.read(done.predictions, g * g * o).reshape(g, g, o),
                          truths=gpu.read(done.truths, g * g * o).reshape(g, g, o),
                          cell_loss=gpu.read(done.cell_loss, g * g).reshape(g, g),
                          error_max=gpu.read(done.cell_stats, o),
                          invalid=gpu.read(done.cell_stats, o, np.uint32, offset=o * 4), step=done.step)

    def evaluate(self) -> Evaluation:
        """A whole pass of the current network, now (a pass in progress is started over)."""
        self.progress = 0
        with self.trainer.gpu.submit() as encoder:
            self.record(encoder)
        return self.read()
