"""Heatmap images drawn by compute kernels from a grid evaluation: an atlas with one row per
output and, for each view (values, d/dx, d/dy, |gradient|), three panels (truth | learned |
|error|), the value panels optionally with contours (Contours); the colour bars that explain them; the neuron views' atlas (app.views.neurons), drawn with them; and for a
dataset, the data view (app.views.data_view): its points over the learned function."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import slangpy as spy

from ..kernels.view_constants import GRADIENT_VIEW, HEATMAP_PANELS, HEATMAP_VIEWS
from .data_view import DataView
from .evaluation import Evaluation, GridEvaluator
from .neurons import NeuronImages

COLORBAR_HEIGHT = 256
COLORBAR_COLUMNS = 3  # viridis (values), magma (|error|), diverging (derivatives)
PANELS = HEATMAP_PANELS
VIEWS = HEATMAP_VIEWS
GRADIENT_TOP_LEAST = 2.0  # |gradient|'s scale runs from 0 through 1 (its centre) to at least this


@dataclass(frozen=True)
class Contours:
    """How the value panels are drawn, a view setting of a run: with `shown`, in the diverging map
    over a range symmetric about 0 (white is the zero level), the zero level a solid dark line
    and isolines every `spacing` units (0: none) thinner and translucent; the presentation of a
    signed distance function, negative inside its shape. Off, values are viridis."""

    shown: bool = False
    spacing: float = 0.1

    def __post_init__(self):
        if not (math.isfinite(self.spacing) and self.spacing >= 0):
            raise ValueError(f"contour spacing must be a number >= 0, not {self.spacing}")


def _value_range(values: np.ndarray) -> tuple[float, float]:
    finite = values[np.isfinite(values)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if not (np.isfinite(hi - lo) and hi - lo >= 1e-6):
        mid = lo if np.isfinite(hi - lo) else 0.0
        lo, hi = mid - 0.5, mid + 0.5
    return lo, hi


def _symmetric_range(values: np.ndarray) -> tuple[float, float]:
    finite = np.abs(values[np.isfinite(values)])
    top = float(finite.max()) if finite.size else 0.0
    top = top if np.isfinite(top) and top >= 5e-7 else 0.5
    return -top, top


def _gradient_range(derivatives: np.ndarray) -> tuple[float, float]:
    """(0, top) of |gradient|'s scale, centred on 1: top is the truth's largest finite |gradient|,
    at least GRADIENT_TOP_LEAST so that 1 is never past the middle."""
    magnitude = np.hypot(derivatives[..., 0], derivatives[..., 1])
    finite = magnitude[np.isfinite(magnitude)]
    top = float(finite.max()) if finite.size else 0.0
    return 0.0, max(top, GRADIENT_TOP_LEAST)


def truth_ranges(evaluation: Evaluation) -> np.ndarray:
    """(views, outputs, 2) colour scale of truth and learned, from the truth as the GPU evaluated
    it (expressions and Slang files alike): each target's finite range for the values, a range
    symmetric about 0 for each derivative, so that the diverging map's white is 0, and (0, top)
    for |gradient| (white at 1). Learned values beyond a range saturate."""
    outputs = evaluation.truths.shape[2]
    ranges = np.zeros((len(VIEWS), outputs, 2), np.float32)
    for o in range(outputs):
        ranges[0, o] = _value_range(evaluation.truths[..., o])
        ranges[1, o] = _symmetric_range(evaluation.derivatives[..., o, 2])
        ranges[2, o] = _symmetric_range(evaluation.derivatives[..., o, 3])
        ranges[GRADIENT_VIEW, o] = _gradient_range(evaluation.derivatives[..., o, 2:])
    return ranges


def shown_range(ranges: np.ndarray, view: int, output: int, contours: Contours) -> tuple[float, float]:
    """The (lo, hi) the truth and learned panels of `view` are coloured over: with contours the
    values' range is made symmetric about 0, as drawHeatmaps does."""
    lo, hi = (float(v) for v in ranges[view, output])
    if view == 0 and contours.shown:
        top = max(abs(lo), abs(hi))
        return -top, top
    return lo, hi


class HeatmapImages:
    """GPU textures for one evaluator: `atlas` (3 * views * grid x outputs * grid) and
    `colorbars` (COLORBAR_COLUMNS x 256). `contours` is how the value panels are drawn: set it
    (a Contours) and the next record_draw draws them so; `dirty` says a redraw is due."""

    def __init__(self, evaluator: GridEvaluator, contours: Contours = Contours()):
        self.evaluator, self.grid = evaluator, evaluator.grid
        trainer = evaluator.trainer
        device, outputs = trainer.gpu.device, trainer.plan.output_dim
        usage = spy.TextureUsage.unordered_access | spy.TextureUsage.shader_resource | spy.TextureUsage.copy_source
        self.atlas = device.create_texture(
            format=spy.Format.rgba16_float, width=3 * len(VIEWS) * self.grid, height=outputs * self.grid, usage=usage
        )
        self.colorbars = device.create_texture(
            format=spy.Format.rgba16_float, width=COLORBAR_COLUMNS, height=COLORBAR_HEIGHT, usage=usage
        )
        self.neurons = NeuronImages(evaluator)
        self.data_view = DataView(evaluator) if trainer.data is not None else None
        self.drawn = -1  # the evaluator pass the atlases show
        self.contours = contours
        self.drawn_contours: Contours | None = None  # the contours the atlas shows
        # The truth's ranges need one evaluated pass (any network's: the truth is the same).
        self.value_ranges = truth_ranges(evaluator.read() if evaluator.passes else evaluator.evaluate())
        self._ranges_buffer = trainer.gpu.buffer(self.value_ranges.nbytes)
        trainer.gpu.write(self._ranges_buffer, self.value_ranges)
        with trainer.gpu.submit() as encoder:
            self.record_draw(encoder)
            trainer.kernels.draw_colorbars.dispatch(
                [1, COLORBAR_HEIGHT, 1], command_encoder=encoder, height=COLORBAR_HEIGHT, bars=self.colorbars
            )

    def record_draw(self, encoder: spy.CommandEncoder) -> None:
        """Draws both atlases from the evaluator's last complete pass."""
        t, done = self.evaluator.trainer, self.evaluator.complete
        t.kernels.draw_heatmaps.dispatch(
            [3 * len(VIEWS) * self.grid, t.plan.output_dim * self.grid, 1],
            command_encoder=encoder,
            predictions=done.predictions.device_address,
            truths=done.truths.device_address,
            derivatives=done.derivatives.device_address,
            valueRanges=self._ranges_buffer.device_address,
            cellStats=done.cell_stats.device_address,
            grid=self.grid,
            contours=int(self.contours.shown),
            spacing=float(self.contours.spacing),
            atlas=self.atlas,
        )
        self.neurons.record_draw(encoder)
        if self.data_view is not None:
            self.data_view.record_draw(encoder)
        self.drawn, self.drawn_contours = self.evaluator.passes, self.contours

    @property
    def dirty(self) -> bool:
        """Whether a redraw would show something new besides a new evaluation pass: the points,
        or other contours."""
        if self.evaluator.passes == 0:
            return False
        points = self.data_view is not None and self.data_view.dirty
        return points or self.contours != self.drawn_contours

    def draw_now(self) -> None:
        """A whole evaluation pass of the current network and the atlas drawn from it."""
        self.evaluator.progress = 0
        with self.evaluator.trainer.gpu.submit() as encoder:
            self.evaluator.record(encoder)
            self.record_draw(encoder)
