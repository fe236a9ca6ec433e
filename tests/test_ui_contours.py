"""The Heatmaps panel's contours, driven by injected input in the offscreen UI: the checkbox and
the spacing field set the contours the renderer draws; heatmaps.png with contours on."""

from __future__ import annotations

import numpy as np
import pytest
import slangpy as spy
from reference import grid_centres, linear_to_srgb
from test_heatmap_contours import CIRCLE, _diverging, _truth_with_contours
from test_ui_offscreen import _centre, _type

from app.ui.offscreen import OffscreenApp
from app.views.heatmaps import Contours


@pytest.fixture
def ui(make_session):
    app = OffscreenApp(make_session(targets=[CIRCLE]), 1280, 800)
    app.frame(3)
    yield app
    app.close()


def test_the_panels_checkbox_and_spacing_set_the_contours_drawn(ui):
    images = ui.session.heatmaps
    assert images.contours == Contours(), "off by default"
    assert "contour spacing" not in ui.app.rects, "no spacing field while off"
    ui.click(*_centre(ui, "contours"))
    assert images.contours == Contours(shown=True, spacing=0.1)
    ui.frame()
    x0, y0, _, y1 = ui.app.rects["contour spacing"]
    ui.click(x0 + 10, (y0 + y1) / 2)  # into the text, left of the field's - and + buttons
    _type(ui, "0.25")
    assert images.contours == Contours(shown=True, spacing=0.25), "the typed spacing"
    assert ui.frames_until(lambda: images.drawn_contours == images.contours, force=True), "drawn with it"
    grid = images.grid
    atlas = np.asarray(images.atlas.to_numpy(), np.float32)[:grid, :grid, :3]
    x, y = grid_centres(ui.session.config.domain, grid)
    lo, hi = images.value_ranges[0, 0]
    expected = _truth_with_contours(np.hypot(x, y) - 0.5, max(abs(lo), abs(hi)), 0.25)
    np.testing.assert_allclose(linear_to_srgb(atlas[::-1]), expected, atol=0.01)

    _type_spacing(ui, "-1")
    assert "0 (none) or more" in ui.app.field_errors["contour spacing"]
    assert images.contours.spacing == 0.25, "a negative spacing changes nothing"
    _type_spacing(ui, "0")
    assert images.contours == Contours(shown=True, spacing=0.0) and "contour spacing" not in ui.app.field_errors
    ui.click(*_centre(ui, "contours"))
    assert images.contours == Contours(shown=False, spacing=0.0)


def _type_spacing(ui, text: str) -> None:
    x0, y0, _, y1 = ui.app.rects["contour spacing"]
    ui.click(x0 + 10, (y0 + y1) / 2)
    _type(ui, text)


def test_a_new_network_keeps_the_contours(ui):
    earlier = ui.session.heatmaps
    earlier.contours = Contours(shown=True, spacing=0.2)
    ui.session.start_rebuild(ui.session.config.replace(hidden=[8]))
    assert ui.frames_until(lambda: ui.session.rebuild is None, force=True), "rebuilt"
    assert ui.session.heatmaps is not earlier and ui.session.trainer.plan.sizes[1] == 8
    assert ui.session.heatmaps.contours == Contours(shown=True, spacing=0.2)


def _white_square(image: np.ndarray) -> tuple[int, int, int]:
    """(left, top, side) of the largest block of the diverging scale's white, |grad f| truth, with
    its antialiased edge pixels (blended with the ground: not white)."""
    white = np.all(np.abs(image - _diverging(np.array(0.5))) < 2 / 255, axis=2)
    across, down = white.sum(axis=1), white.sum(axis=0)  # a white ring in the value panels crosses fewer
    columns, rows = np.flatnonzero(down > 0.5 * down.max()), np.flatnonzero(across > 0.5 * across.max())
    middle = image[(rows[0] + rows[-1]) // 2]
    drawn = np.abs(middle - image[0, 0]).max(axis=1) > 0.03
    left, right = int(columns[0]), int(columns[-1])
    while drawn[left - 1]:
        left -= 1
    while drawn[right + 1]:
        right += 1
    return left, int(rows[0]), right - left + 1


def test_heatmaps_png_with_contours(make_session, tmp_path):
    """With contours, heatmaps.png has the value rows, contoured, with their legend, then the
    |grad f| rows, whose truth panel (|grad f| = 1) is a square of the scale's white, in the
    column of the values' truth panel above it."""
    from app.ui.report import write_heatmaps_png

    session = make_session(targets=[CIRCLE])
    plain, contoured = tmp_path / "plain.png", tmp_path / "contours.png"
    write_heatmaps_png(session.heatmaps, "title", "subtitle", str(plain))
    session.heatmaps.contours = Contours(shown=True, spacing=0.1)
    write_heatmaps_png(session.heatmaps, "title", "subtitle", str(contoured))
    before, after = (np.asarray(spy.Bitmap(str(p)))[..., :3].astype(float) / 255 for p in (plain, contoured))
    assert after.shape[0] > 1.8 * before.shape[0] - 100, "two blocks of rows: values, then |grad f|"
    left, top, side = _white_square(after)
    assert side > 100 and top > after.shape[0] / 2, "the |grad f| truth panel, 9 em, in the lower block"
    # The values' truth panel: in the same column, the run of drawn pixels as tall as the panel
    # (not the titles' or the legend's text)
    drawn = np.abs(after[:top, left + 3] - after[0, 0]).max(axis=1) > 0.03  # off the ground, clear of the circle
    runs = np.split(np.arange(top), np.flatnonzero(np.diff(drawn.astype(int))) + 1)
    above = next(int(run[0]) for run in runs if drawn[run[0]] and abs(len(run) - side) <= 2)
    grid = session.heatmaps.grid
    x, y = grid_centres(session.config.domain, grid)
    values = np.hypot(x, y) - 0.5
    centre = (np.arange(grid) + 0.5) / grid * side
    # the pixels the cell centres fall in, (j, i) with j along y
    panel = after[(above + side - centre).astype(int)][:, (left + centre).astype(int)]
    lo, hi = session.heatmaps.value_ranges[0, 0]
    plain_map = _diverging((values + max(-lo, hi)) / (2 * max(-lo, hi)))
    levels = values / 0.1
    between = (np.abs(np.abs(levels - np.round(levels)) - 0.5) < 0.08) & (np.abs(values) > 3 * 2 / grid)
    on_circle = np.abs(values) < 0.2 * 2 / grid
    assert between.sum() > 50 and on_circle.sum() > 20
    # RdBu over the symmetric range and no line; the display's bilinear filter mixes in part of the
    # neighbouring cells, which an isoline 0.6 cells off darkens by up to 0.2
    off = np.abs(panel[between] - plain_map[between]).max(axis=1)
    assert np.median(off) < 0.04 and off.max() < 0.16, np.sort(off)[-5:]
    # the zero level: dark where the scale is white (0.97), the filter mixing in its lighter edge
    grey = panel[on_circle].mean(axis=1)
    assert np.all(grey < 0.6) and np.median(grey) < 0.4, "the zero level is drawn dark"
