"""The data view: a dataset's points over the learned function, as the TensorFlow Playground shows
them, drawn by compute kernels (shaders/views/points.slang) into textures: `layer` the points (one
thread a point), drawn when they or their toggles change; `view` the learned function under them at
each evaluation; `bar` the signed scale. Pixel (i, j) of a side-`size` image shows
x = x0 + (i + 0.5) / size * (x1 - x0), y = y1 - (j + 0.5) / size * (y1 - y0): y points up."""

from __future__ import annotations

import math

import numpy as np
import slangpy as spy

from .evaluation import GridEvaluator

VIEW_SIZE = 512  # pixels a side of each image
BAR_HEIGHT = 256
# A point's radius in pixels: the Playground's look at its 500 points, smaller as they crowd
# (the area they cover grows no further), never under one pixel.
MAX_RADIUS, MIN_RADIUS, CROWD = 4.5, 1.0, 500


def point_radius(count: int, size: int = VIEW_SIZE) -> float:
    return float(np.clip(MAX_RADIUS * size / VIEW_SIZE * math.sqrt(CROWD / max(count, 1)), MIN_RADIUS, MAX_RADIUS))


class DataView:
    def __init__(self, evaluator: GridEvaluator, size: int = VIEW_SIZE):
        self.evaluator, self.size = evaluator, size
        trainer = evaluator.trainer
        plan = trainer.plan
        self.images = 1 if plan.loss.classifies else plan.output_dim
        device = trainer.gpu.device
        usage = spy.TextureUsage.unordered_access | spy.TextureUsage.shader_resource | spy.TextureUsage.copy_source
        self.layer = device.create_texture(
            format=spy.Format.rgba16_float, width=self.images * size, height=size, usage=usage
        )
        self.view = device.create_texture(
            format=spy.Format.rgba16_float, width=self.images * size, height=size, usage=usage
        )
        self.bar = device.create_texture(format=spy.Format.rgba16_float, width=1, height=BAR_HEIGHT, usage=usage)
        self._ranges = trainer.gpu.buffer(4 * plan.output_dim)
        self.show_train, self.show_test, self.discretize = True, True, False
        self._drawn_layer: tuple | None = None  # what the layer shows: (points, domain, shown sets)
        self._drawn_view: tuple | None = None  # (evaluation pass, discretize, layer)
        with trainer.gpu.submit() as encoder:
            trainer.kernels.points.draw_signed_bar.dispatch(
                [1, BAR_HEIGHT, 1], command_encoder=encoder, height=BAR_HEIGHT, bar=self.bar
            )

    @property
    def value_ranges(self) -> np.ndarray:
        """|value| at full colour, per output: the largest |truth| of the points (regression)."""
        data = self.evaluator.trainer.data
        if data is None or data.dataset.problem.classify:
            return np.ones(self.evaluator.trainer.plan.output_dim, np.float32)
        top = np.max(np.abs(data.dataset.truth), axis=0)
        return np.where(top > 1e-6, top, 1.0).astype(np.float32)

    def _layer_key(self) -> tuple:
        t = self.evaluator.trainer
        return (t.data, tuple(t.config.domain), self.show_train, self.show_test)

    @property
    def dirty(self) -> bool:
        """Whether the view shows something else than it would now (new points, toggles)."""
        return self._drawn_layer != self._layer_key() or self._drawn_view != self._view_key()

    def _view_key(self) -> tuple:
        return (self.evaluator.passes, self.discretize, self._layer_key())

    def record_draw(self, encoder: spy.CommandEncoder) -> None:
        """The points layer where it is out of date, then the view from the last complete pass."""
        t = self.evaluator.trainer
        if self._drawn_layer != self._layer_key():
            self._draw_layer(encoder)
        t.kernels.points.draw_data_view.dispatch(
            [self.images * self.size, self.size, 1],
            command_encoder=encoder,
            predictions=self.evaluator.complete.predictions.device_address,
            grid=self.evaluator.grid,
            viewSize=self.size,
            valueRanges=self._ranges.device_address,
            discretize=int(self.discretize),
            layer=self.layer,
            view=self.view,
        )
        self._drawn_view = self._view_key()

    def _draw_layer(self, encoder: spy.CommandEncoder) -> None:
        t = self.evaluator.trainer
        data = t.data
        t.gpu.write(self._ranges, self.value_ranges)
        encoder.clear_texture_float(self.layer, clear_value=[0.0, 0.0, 0.0, 0.0])
        count = data.dataset.count
        t.kernels.points.draw_points.dispatch(
            [count, 1, 1],
            command_encoder=encoder,
            points=data.buffer.device_address,
            pointCount=count,
            trainCount=data.train_count,
            showTrain=int(self.show_train),
            showTest=int(self.show_test),
            radius=point_radius(count, self.size),
            domain=spy.float4(*t.config.domain),
            viewSize=self.size,
            valueRanges=self._ranges.device_address,
            layer=self.layer,
        )
        encoder.global_barrier()
        self._drawn_layer = self._layer_key()
