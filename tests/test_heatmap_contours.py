"""A distance field's presentation of the heatmaps, drawn by drawHeatmaps on the GPU, against numpy
from the definitions: with contours the value panels are RdBu over a range symmetric about 0,
the zero level a dark line 1.5 cells wide and isolines every `spacing` translucent lines a cell
wide; the |grad f| view is white at 1. The target is the circle's signed distance, untrained."""

from __future__ import annotations

import numpy as np
import pytest
from reference import grid_centres, linear_to_srgb
from test_derivatives import RDBU

from app.kernels.view_constants import (
    CONTOUR_COLOUR,
    GRADIENT_VIEW,
    ISOLINE_ALPHA,
    ISOLINE_WIDTH,
    ZERO_LINE_WIDTH,
)
from app.views.evaluation import GridEvaluator
from app.views.heatmaps import Contours, HeatmapImages

GRID = 64
CIRCLE = "sqrt(x*x+y*y)-0.5"  # negative inside the circle of radius 0.5
CELL = 2.0 / GRID  # the domain [-1, 1]² over the grid


def _diverging(t: np.ndarray) -> np.ndarray:
    """RdBu in sRGB, linear between ColorBrewer's 11 stops."""
    stops = np.array([[int(h[k : k + 2], 16) / 255 for k in (1, 3, 5)] for h in RDBU])
    x = np.clip(t, 0, 1) * 10
    k = np.minimum(x.astype(int), 9)
    return stops[k] + (x - k)[..., None] * (stops[k + 1] - stops[k])


def _coverage(offset: np.ndarray, slope: np.ndarray, width: float) -> np.ndarray:
    """A line `width` cells wide through the level, antialiased over a cell."""
    return np.clip(width / 2 + 0.5 - np.abs(offset) / slope, 0, 1)


def _truth_with_contours(values: np.ndarray, top: float, spacing: float) -> np.ndarray:
    """The truth panel's sRGB colours, (j, i, 3), j along y: values (j, i) on RdBu over
    [-top, top], isolines every `spacing` (0: none) and the zero level, each placed by the
    value's change a cell from the neighbouring cells."""
    padded = np.pad(values, 1, mode="edge")
    steps = np.full(values.shape, 2.0)  # the difference spans 2 cells, 1 at the grid's edges
    along_x = (padded[1:-1, 2:] - padded[1:-1, :-2]) / (steps - np.isin(np.arange(GRID), (0, GRID - 1))[None, :])
    along_y = (padded[2:, 1:-1] - padded[:-2, 1:-1]) / (steps - np.isin(np.arange(GRID), (0, GRID - 1))[:, None])
    change = np.hypot(along_x, along_y)
    colour = _diverging((values + top) / (2 * top))
    ink = np.array(CONTOUR_COLOUR)
    if spacing > 0:
        levels, density = values / spacing, change / spacing
        alpha = ISOLINE_ALPHA * np.clip(0.5 / density - 1, 0, 1)
        alpha = alpha * _coverage(levels - np.round(levels), density, ISOLINE_WIDTH)
        colour = colour + alpha[..., None] * (ink - colour)
    zero = _coverage(values, change, ZERO_LINE_WIDTH)
    return colour + zero[..., None] * (ink - colour)


def _panel(images: HeatmapImages, view: int, panel: int) -> np.ndarray:
    """One panel of output 0 in sRGB, (j, i, 3) with j along y as the grid stores cells."""
    atlas = np.asarray(images.atlas.to_numpy(), np.float32)[:GRID, :, :3]
    left = (3 * view + panel) * GRID
    return linear_to_srgb(atlas[::-1, left : left + GRID])


@pytest.fixture(scope="module")
def circle(gpu):
    from app.config.config import Config, validate
    from app.train.trainer import Trainer

    images = HeatmapImages(GridEvaluator(Trainer(gpu, validate(Config(targets=[CIRCLE]))), GRID))
    x, y = grid_centres((-1.0, 1.0, -1.0, 1.0), GRID)
    return images, np.hypot(x, y)


@pytest.mark.parametrize("spacing", [0.0, 0.25, 0.1])
def test_truth_panel_with_contours_matches_numpy(circle, spacing):
    images, r = circle
    images.contours = Contours(shown=True, spacing=spacing)
    images.draw_now()
    drawn = _panel(images, 0, 0)
    lo, hi = images.value_ranges[0, 0]
    top = max(abs(lo), abs(hi))
    assert top == pytest.approx(np.hypot(1 - CELL / 2, 1 - CELL / 2) - 0.5, rel=1e-5), "the farthest cell's"
    np.testing.assert_allclose(drawn, _truth_with_contours(r - 0.5, top, spacing), atol=0.01)
    on_circle = np.abs(r - 0.5) < 0.2 * CELL
    far = np.abs(r - 0.5) > 2 * CELL
    assert on_circle.sum() > 20, "cells on the circle to look at"
    np.testing.assert_allclose(drawn[on_circle], np.broadcast_to(CONTOUR_COLOUR, drawn[on_circle].shape), atol=0.01)
    # (RdBu's darkest blue, the far corners', is the colour nearest the line's: 0.3 from it, 0.24 under an isoline)
    assert np.all(np.abs(drawn[far] - np.array(CONTOUR_COLOUR)).max(axis=1) > 0.2), "far cells are not the line"
    plain = _diverging((r - 0.5 + top) / (2 * top))
    darkened = np.abs(drawn[far] - plain[far]).max(axis=1) > 0.02
    if spacing == 0:
        assert not darkened.any(), "spacing 0: no isolines, the map alone away from the zero level"
    else:  # the isolines cross the far cells: |f| = spacing, 2 spacing, ... within a cell
        levels = (r - 0.5) / spacing
        on_isoline = (np.abs(levels - np.round(levels)) * spacing < 0.2 * CELL) & far
        assert on_isoline.sum() > 20 and darkened[on_isoline[far]].all()


def test_value_panels_without_contours_stay_viridis(circle):
    images, r = circle
    images.contours = Contours()
    images.draw_now()
    assert images.drawn_contours == Contours()
    drawn = _panel(images, 0, 0).reshape(-1, 3)
    low, high = drawn[np.argmin(r)], drawn[np.argmax(r)]
    np.testing.assert_allclose(low, (0.267, 0.005, 0.329), atol=0.03)  # viridis' bottom at the centre
    np.testing.assert_allclose(high, (0.993, 0.906, 0.144), atol=0.03)  # and its top at a corner


def test_gradient_view_of_the_distance_field_is_white_at_one(circle):
    """|grad f| = 1 everywhere but the centre: the truth's panel is the scale's white."""
    images, r = circle
    images.draw_now()
    evaluation = images.evaluator.read()
    assert tuple(images.value_ranges[GRADIENT_VIEW, 0]) == (0.0, 2.0), "0 to 2 at least, centred on 1"
    truth = _panel(images, GRADIENT_VIEW, 0)
    away = r > 2 * CELL
    white = _diverging(np.array(0.5))
    np.testing.assert_allclose(truth[away], np.broadcast_to(white, truth[away].shape), atol=0.01)
    d = evaluation.derivatives[..., 0, :]
    learned = np.hypot(d[..., 0], d[..., 1])
    t = np.where(learned <= 1, 0.5 * learned, 0.5 + 0.5 * (learned - 1) / (2.0 - 1))
    np.testing.assert_allclose(_panel(images, GRADIENT_VIEW, 1), _diverging(t), atol=0.01)
    error = np.abs(learned - np.hypot(d[..., 2], d[..., 3]))
    assert evaluation.error_max[GRADIENT_VIEW, 0] == pytest.approx(error.max(), rel=1e-5)
