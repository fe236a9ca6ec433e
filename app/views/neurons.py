"""The neuron views: every neuron's value over the domain as a small image, as TensorFlow
Playground draws them. The grid evaluation writes the values on a coarser grid (every k-th cell
centre, app.views.evaluation.neuron_stride) with each neuron's range; this draws them into an atlas
of tiles, in the plan's neuron order: the encoded inputs, each hidden layer, the outputs."""

from __future__ import annotations

import numpy as np
import slangpy as spy

from ..truth.eval_grid import grid_centres
from .evaluation import GridEvaluator, neuron_side, neuron_stride

ATLAS_COLUMNS = 32  # tiles per row of the atlas


def from_ordered_bits(bits: np.ndarray) -> np.ndarray:
    """The floats that shaders/views/neurons.slang's orderedBits mapped to `bits` (uint32)."""
    bits = np.asarray(bits, np.uint32)
    negative = (bits & 0x80000000) == 0
    return np.where(negative, ~bits, bits & 0x7FFFFFFF).astype(np.uint32).view(np.float32)


def neuron_points(domain, grid: int) -> tuple[np.ndarray, np.ndarray]:
    """x and y of the neuron grid's points, each (N, N) indexed [j, i]: the eval grid's cell
    centres with i and j multiples of the stride."""
    return grid_centres(domain, grid, np.arange(0, grid, neuron_stride(grid)))


class NeuronImages:
    """`atlas`: one side x side tile per neuron, ATLAS_COLUMNS to a row, y pointing up; each tile
    coloured by the diverging map over its neuron's own largest |value|."""

    def __init__(self, evaluator: GridEvaluator):
        self.evaluator = evaluator
        trainer = evaluator.trainer
        self.count = trainer.plan.neuron_count
        self.side = neuron_side(evaluator.grid)
        self.columns = min(ATLAS_COLUMNS, self.count)
        self.rows = -(-self.count // self.columns)
        usage = spy.TextureUsage.unordered_access | spy.TextureUsage.shader_resource | spy.TextureUsage.copy_source
        self.atlas = trainer.gpu.device.create_texture(
            format=spy.Format.rgba16_float, width=self.columns * self.side, height=self.rows * self.side, usage=usage
        )
        self._ranges: tuple[int, np.ndarray | None] = (-1, None)

    def record_draw(self, encoder: spy.CommandEncoder) -> None:
        """Draws every neuron's tile from the evaluator's last complete pass."""
        t, done = self.evaluator.trainer, self.evaluator.complete
        t.kernels.draw_neurons.dispatch(
            [self.columns * self.side, self.rows * self.side, 1],
            command_encoder=encoder,
            values=done.neuron_values.device_address,
            ranges=done.neuron_ranges.device_address,
            grid=self.side,
            columns=self.columns,
            atlas=self.atlas,
        )

    def tile(self, neuron: int) -> tuple[float, float, float, float]:
        """(u0, v0, u1, v1) of `neuron`'s tile in the atlas."""
        row, column = divmod(neuron, self.columns)
        return (column / self.columns, row / self.rows, (column + 1) / self.columns, (row + 1) / self.rows)

    def ranges(self) -> np.ndarray:
        """(neurons, 2): each neuron's finite (min, max) in the last complete pass, read back once
        per pass (the UI asks every frame a neuron is shown large)."""
        passes, ranges = self._ranges
        if ranges is None or passes != self.evaluator.passes:
            bits = self.evaluator.trainer.gpu.read(self.evaluator.complete.neuron_ranges, 2 * self.count, np.uint32)
            top = from_ordered_bits(bits[0::2])
            bottom = -from_ordered_bits(bits[1::2])
            ranges = np.stack([bottom, top], axis=1)
            self._ranges = (self.evaluator.passes, ranges)
        return ranges

    def values(self) -> np.ndarray:
        """(neurons, N, N) values of the last complete pass, [neuron, j, i] with j along y."""
        n, done = self.side, self.evaluator.complete
        return self.evaluator.trainer.gpu.read(done.neuron_values, self.count * n * n).reshape(self.count, n, n)
