"""Heatmap images drawn by compute kernels from a grid evaluation: an atlas with one row per
output (truth | learned | |error|) and the two colour bars that explain it."""

from __future__ import annotations

import numpy as np
import slangpy as spy

from app.components import HEATMAP_PANELS
from app.config import Config
from app.evaluation import GridEvaluator
from app.targets import grid_centres, target_to_numpy

COLORBAR_HEIGHT = 256
PANELS = HEATMAP_PANELS


def truth_ranges(config: Config, grid: int) -> np.ndarray:
    """(outputs, 2) finite value range of each target over the grid's cell centres: the colour
    scale of truth and learned (learned values beyond it saturate)."""
    x, y = grid_centres(config.domain, grid)
    ranges = []
    for target in config.targets:
        values = target_to_numpy(target)(x, y)
        finite = values[np.isfinite(values)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        if not (np.isfinite(hi - lo) and hi - lo >= 1e-6):
            mid = lo if np.isfinite(hi - lo) else 0.0
            lo, hi = mid - 0.5, mid + 0.5
        ranges.append((lo, hi))
    return np.asarray(ranges, np.float32)


class HeatmapImages:
    """GPU textures for one evaluator: `atlas` (3*grid x outputs*grid) and `colorbars` (2 x 256)."""

    def __init__(self, evaluator: GridEvaluator):
        self.evaluator, self.grid = evaluator, evaluator.grid
        trainer = evaluator.trainer
        device, outputs = trainer.gpu.device, trainer.plan.output_dim
        usage = spy.TextureUsage.unordered_access | spy.TextureUsage.shader_resource | spy.TextureUsage.copy_source
        self.atlas = device.create_texture(format=spy.Format.rgba16_float, width=3 * self.grid,
                                           height=outputs * self.grid, usage=usage)
        self.colorbars = device.create_texture(format=spy.Format.rgba16_float, width=2,
                                               height=COLORBAR_HEIGHT, usage=usage)
        self.drawn = -1  # the evaluator pass the atlas shows
        self.value_ranges = truth_ranges(trainer.config, self.grid)
        self._ranges_buffer = trainer.gpu.buffer(self.value_ranges.nbytes)
        trainer.gpu.write(self._ranges_buffer, self.value_ranges)
        with trainer.gpu.submit() as encoder:
            self.record_draw(encoder)  # builds the pipeline now; the atlas is cleared after it
            self.drawn = -1
            encoder.clear_texture_float(self.atlas, clear_value=[0.0, 0.0, 0.0, 1.0])
            trainer.kernels.draw_colorbars.dispatch([1, COLORBAR_HEIGHT, 1], command_encoder=encoder,
                                                    height=COLORBAR_HEIGHT, bars=self.colorbars)

    def record_draw(self, encoder: spy.CommandEncoder) -> None:
        """Draws the atlas from the evaluator's last complete pass."""
        t, done = self.evaluator.trainer, self.evaluator.complete
        t.kernels.draw_heatmaps.dispatch(
            [3 * self.grid, t.plan.output_dim * self.grid, 1], command_encoder=encoder,
            predictions=done.predictions.device_address, truths=done.truths.device_address,
            valueRanges=self._ranges_buffer.device_address, errorMax=done.cell_stats.device_address,
            grid=self.grid, atlas=self.atlas)
        self.drawn = self.evaluator.passes

    def draw_now(self) -> None:
        """A whole evaluation pass of the current network and the atlas drawn from it."""
        self.evaluator.progress = 0
        with self.evaluator.trainer.gpu.submit() as encoder:
            self.evaluator.record(encoder)
            self.record_draw(encoder)
