"""Issue 25, item 11: larger windows give the panels' contents the room, measured from the
rectangles offscreen frames record. Before, a 1920 x 1080 window drew the heatmaps at 7.5 em as at
1280 x 800, with half the Heatmaps panel empty below them, and the diagram's nodes no larger."""

from __future__ import annotations

import math

import imgui_bundle  # noqa: F401 (a dependency: a broken install fails here, never skips)
import numpy as np
import pytest
from imgui_bundle.imgui import internal as imgui_internal
from test_ui_offscreen import _centre

from app.ui.offscreen import OffscreenApp
from app.ui.style import em

SIZES = [(1280, 800), (1920, 1080), (2560, 1440)]


@pytest.fixture
def windows(make_session):
    """The default session paused, at each of SIZES: what each shows."""
    shown = {}
    for size in SIZES:
        ui = OffscreenApp(make_session(), *size)
        ui.app.running = False
        ui.session.advance(5)  # a loss to plot
        ui.frame(4)
        ui.renderer.make_current()
        heatmaps = imgui_internal.find_window_by_name("Heatmaps")
        shown[size] = {
            "em": em(),
            "image": em(ui.app.layout.image_em),
            "panel": ui.app.windows["Heatmaps"],
            "reach": heatmaps.scroll_max.y,
            "content": ui.app.dock.content["Heatmaps"],
            "node": max(r[2] - r[0] for r in ui.app.diagram_nodes.values()),
            "plot": ui.app.rects["loss plot"],
        }
        ui.close()
    return shown


def test_larger_windows_draw_larger_heatmaps_nodes_and_plots(windows):
    small, large, largest = (windows[size] for size in SIZES)
    font = small["em"]  # the UI's em, in pixels (the contexts are gone)
    assert small["image"] >= 6 * font, "1280 x 800: four rows of at least 6 em"
    assert large["image"] > 1.5 * small["image"], (small["image"], large["image"])
    assert largest["image"] == 14 * font, "at most the size slider's 14 em"
    assert large["node"] > small["node"] and largest["node"] > large["node"]
    for key in (2, 3):  # the loss plot's right and bottom edges move out
        assert small["plot"][key] < large["plot"][key] < largest["plot"][key]


@pytest.mark.parametrize("size", SIZES[:2])
def test_the_heatmap_rows_fill_the_panel_without_scrolling(windows, size):
    """Four rows in the panel's height to a pixel a row (ImGui rounds lines down), with nothing
    to scroll to; before, 1280 x 800 scrolled by a pixel and 1920 x 1080 left 272 px empty."""
    shown = windows[size]
    height = shown["panel"][3] - shown["panel"][1]
    assert shown["reach"] == 0
    assert height - 4 <= shown["content"] <= height, (shown["content"], height)


def test_the_size_the_user_sets_is_kept_until_reset_layout(make_session, tmp_path, monkeypatch):
    """The heatmap size slider's value stays through a resize and the next launch (saved as
    heatmap_em); View > Reset layout gives the sizing back to the window."""
    from app.files import saved
    from app.ui import settings

    monkeypatch.setattr(saved, "settings_path", lambda: tmp_path / "settings.json")
    ui = OffscreenApp(make_session(), 1920, 1080)
    try:
        ui.app.running = False
        ui.frame(3)
        fitted = ui.app.layout.image_em
        x0, y0, x1, y1 = ui.app.rects["heatmap size"]
        ui.click(x0 + 0.2 * (x1 - x0), (y0 + y1) / 2)  # 4 + 10 * 0.2 = 6 em
        chosen = ui.app.layout.image_em
        assert chosen == pytest.approx(6.0, abs=0.5) and chosen < fitted - 3
        ui.resize(2560, 1440)
        ui.frame(3)
        assert ui.app.layout.image_em == chosen, "a resize keeps the user's size"
        settings.save(ui.app)
        assert saved.load()["view"]["heatmap_em"] == chosen
        later = OffscreenApp(make_session(), 1920, 1080)
        try:
            settings.restore_view(later.app, saved.load())
            later.frame(3)
            assert later.app.layout.image_em == chosen, "and the next launch"
            later.click(*_centre(later, "menu view"))
            later.click(*_centre(later, "reset layout"))
            later.frame(3)
            assert later.app.layout.image_em == pytest.approx(fitted), "fitted to the window again"
            settings.save(later.app)
            assert saved.load()["view"]["heatmap_em"] is None
        finally:
            later.close()
    finally:
        ui.close()


@pytest.fixture(scope="module")
def star(gpu):
    """A shape's one output at 1280 x 800, paused, laid out."""
    from app.config.config import Config, validate
    from app.loop.session import Session

    ui = OffscreenApp(Session(gpu, validate(Config(sdf="star")), grid=64, heatmaps=True), 1280, 800)
    ui.app.running = False
    ui.session.advance(100)  # every view's |error| in colour: the far side the truth's edge wrapped to
    ui.frame(4)
    yield ui
    ui.close()


def test_one_outputs_maps_grow_to_the_panel(star):
    """Issue 42: a shape's one row of three maps, sized for the panel's width, left about 60% of
    the Heatmaps panel blank at 1280 x 800. Its row wraps, |error| under truth and learned, and the
    maps grow into the height, with nothing to scroll to either way."""
    ui = star
    ui.renderer.make_current()
    heatmaps = imgui_internal.find_window_by_name("Heatmaps")
    panel = ui.app.windows["Heatmaps"]
    assert ui.app.layout.columns == 2, "truth and learned, then |error|"
    assert em(ui.app.layout.image_em) >= 13 * em(), "twice the area of 7.9 em maps at least"
    assert ui.app.dock.content["Heatmaps"] >= 0.8 * (panel[3] - panel[1]), "the panel is filled"
    assert (heatmaps.scroll_max.x, heatmaps.scroll_max.y) == (0, 0)


def test_no_map_takes_colour_from_beyond_its_edges(star):
    """Issue 42: the renderer's sampler wraps, so the ground truth's left edge was a 1-pixel
    stripe of the atlas' far side (a |error| map's magma). Drawn 3.3 px a texel here, each map's
    outermost pixels show its edge texels: they differ from the pixels inside them no more than
    those differ from the next ones in (the map's own gradient)."""
    ui = star
    ui.frame(force=True)
    pixels = ui.target.to_numpy()[..., :3].astype(int)
    for panel in range(3):
        x0, y0, x1, y1 = (math.ceil(v - 0.5) for v in ui.app.rects[f"heatmap 0 {panel}"])  # pixel centres inside
        image = pixels[y0:y1, x0:x1]
        for where, lines in (
            ("left", image.transpose(1, 0, 2)),
            ("right", image.transpose(1, 0, 2)[::-1]),
            ("top", image),
            ("bottom", image[::-1]),
        ):
            step_out = np.abs(lines[0] - lines[1]).max(axis=-1)
            step_in = np.abs(lines[1] - lines[2]).max(axis=-1)
            worst = int((step_out - step_in).max())
            assert worst <= 4, f"map {panel}'s {where} edge stands out by {worst} from the map inside it"
