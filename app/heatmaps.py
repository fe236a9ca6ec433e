"""Heatmap images drawn by compute kernels from the trainer's grid evaluation: an atlas with
one row per output (truth | learned | |error|) and the two colour bars that explain it."""

from __future__ import annotations

import numpy as np
import slangpy as spy

from app.targets import target_to_numpy
from app.trainer import Trainer

COLORBAR_HEIGHT = 256
PANELS = ("ground truth", "learned", "|error|")


def truth_ranges(config, grid: int) -> np.ndarray:
    """(outputs, 2) value range of each target over the grid's cell centres (the colour scale
    of truth and learned; learned values beyond it saturate)."""
    x0, x1, y0, y1 = config.domain
    xs = x0 + (np.arange(grid) + 0.5) / grid * (x1 - x0)
    ys = y0 + (np.arange(grid) + 0.5) / grid * (y1 - y0)
    x, y = np.meshgrid(xs, ys)
    ranges = []
    for target in config.targets:
        values = target_to_numpy(target)(x, y)
        finite = values[np.isfinite(values)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        if hi - lo < 1e-6:
            lo, hi = lo - 0.5, hi + 0.5
        ranges.append((lo, hi))
    return np.asarray(ranges, np.float32)


class HeatmapImages:
    """GPU textures for one trainer: `atlas` (3*grid x outputs*grid) and `colorbars` (2 x 256)."""

    def __init__(self, trainer: Trainer, grid: int):
        self.trainer, self.grid = trainer, grid
        device, outputs = trainer.device, trainer.config.output_dim
        usage = spy.TextureUsage.unordered_access | spy.TextureUsage.shader_resource | spy.TextureUsage.copy_source
        self.atlas = device.create_texture(format=spy.Format.rgba16_float, width=3 * grid,
                                           height=outputs * grid, usage=usage)
        self.colorbars = device.create_texture(format=spy.Format.rgba16_float, width=2,
                                               height=COLORBAR_HEIGHT, usage=usage)
        self.value_ranges = truth_ranges(trainer.config, grid)
        self._ranges_buffer = device.create_buffer(data=self.value_ranges, usage=spy.BufferUsage.shader_resource)
        encoder = device.create_command_encoder()
        trainer.kernels.draw_colorbars.dispatch([1, COLORBAR_HEIGHT, 1], command_encoder=encoder,
                                                height=COLORBAR_HEIGHT, bars=self.colorbars)
        device.submit_command_buffer(encoder.finish())

    def record(self, encoder: spy.CommandEncoder) -> None:
        """Evaluates the network on the grid and draws the atlas."""
        t = self.trainer
        t.record_evaluation(encoder, self.grid)
        t.kernels.draw_heatmaps.dispatch(
            [3 * self.grid, t.config.output_dim * self.grid, 1], command_encoder=encoder,
            predictions=t.predictions.device_address, truths=t.truths.device_address,
            valueRanges=self._ranges_buffer.device_address, errorMax=t.error_max.device_address,
            grid=self.grid, atlas=self.atlas)

    def error_max(self) -> np.ndarray:
        """Largest |error| per output from the last recorded evaluation (after submit)."""
        return self.trainer.error_max.to_numpy().view(np.float32)[: self.trainer.config.output_dim].copy()
