"""Issue 25, item 11: the window's layout at 1280 x 800 and larger, measured from the rectangles an
offscreen frame records (app.windows, app.rects). At 1280 x 800 the Training panel's GPU rows were
below its fold, behind the Network panel."""

from __future__ import annotations

import imgui_bundle  # noqa: F401 (a dependency: a broken install fails here, never skips)
import numpy as np
import pytest
from imgui_bundle import imgui
from imgui_bundle.imgui import internal as imgui_internal

from app.ui.offscreen import OffscreenApp
from app.ui.panels.table import NETWORK, TRAINING

STARTS = {
    "formulas": {},
    "spiral": {"dataset": {"generator": "spiral"}},
    # a hash grid's network: the Network panel's longest (grid rows), 24 inputs in the diagram
    "hash grid": {"encoding": "hashgrid", "grid_levels": 12, "grid_features": 2, "hidden": [6]},
}


def _running(make_session, size, **fields) -> OffscreenApp:
    ui = OffscreenApp(make_session(**fields), *size)
    ui.app.running = True
    ui.frame(3)
    return ui


def _scroll(ui, title: str) -> tuple[float, bool]:
    """How far panel `title` scrolls, and whether it shows a vertical scrollbar."""
    ui.renderer.make_current()
    window = imgui_internal.find_window_by_name(title)
    return window.scroll_max.y, window.scrollbar_y


def _assert_training_rows_show(ui) -> None:
    panel, figures = ui.app.windows[TRAINING], ui.app.rects["figures"]
    assert figures[3] <= panel[3], f"the figures end at y = {figures[3]}, below the panel's {panel[3]}"
    assert _scroll(ui, TRAINING) == (0.0, False), "the Training panel shows all of itself"
    network = ui.app.windows[NETWORK]
    assert network[1] > panel[3] and network[3] == ui.target.height, "the Network panel takes the rest"
    reach, scrollbar = _scroll(ui, NETWORK)
    assert scrollbar == (reach > 0), "what the Network panel can't show, it scrolls to, with its scrollbar"


@pytest.mark.parametrize("start", STARTS)
@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_every_training_row_shows_while_training(make_session, start, size):
    """The figures table (its last row: the GPU's time) ends inside the Training panel, which has
    nothing to scroll to. Before: at 1280 x 800 and 1920 x 1080 alike the panel was 35.5 em
    tall and the figures ran 2 rows past it (the hash grid's PSNR-less run: 3)."""
    ui = _running(make_session, size, **STARTS[start])
    try:
        _assert_training_rows_show(ui)
    finally:
        ui.close()


def test_the_training_panel_grows_by_the_gradient_checks_result(make_session):
    ui = _running(make_session, (1280, 800))
    try:
        before = ui.app.windows[TRAINING]
        ui.app.request_grad_check()
        assert ui.frames_until(lambda: ui.app.grad_check is not None), "the gradient check ran"
        ui.frame(2)
        after = ui.app.windows[TRAINING]
        assert after[3] > before[3], "the result's line is room the panel takes from the Network panel"
        _assert_training_rows_show(ui)
    finally:
        ui.close()


def test_space_leaves_the_panels_where_they_are(make_session):
    """Paused, the figures keep their rows ("paused"): pausing moves no panel."""
    ui = _running(make_session, (1280, 800))
    try:
        running = dict(ui.app.windows)
        ui.app.running = False
        ui.frame(3)
        assert ui.app.windows == running
    finally:
        ui.close()


def _inside(inner, outer, what: str) -> None:
    assert outer[0] <= inner[0] and inner[2] <= outer[2] and outer[1] <= inner[1] and inner[3] <= outer[3], (
        f"{what} {inner} is not inside {outer}"
    )


def _with_earlier_runs(make_session, steps: int, **fields) -> OffscreenApp:
    """Two short earlier runs, each with evaluations, in the legend (the most kept), and a current
    run of `steps`: more steps than the plot draws points, so the subtitle names the band too."""
    ui = OffscreenApp(make_session(**fields), 1280, 800)
    ui.app.running = False
    for seed in (1, 2):
        ui.session.advance(200)
        ui.app.reset(seed)
    ui.session.advance(steps)
    ui.frame(3)
    return ui


def _legend_above_the_axes(ui, inner) -> None:
    """Every entry of the loss plot's legend (its own, wrapped to the panel: app/ui/panels/
    loss_series.py) inside the panel, above the axes, where it covers none of the curves."""
    entries = [name for name in ui.app.rects if name.startswith("legend ")]
    assert len(entries) >= 2, "the legend was drawn"
    axes = ui.app.rects["loss axes"]
    for name in entries:
        _inside(ui.app.rects[name], inner, name)
        assert ui.app.rects[name][3] <= axes[1], f"{name} above the axes"


@pytest.mark.parametrize("start", ["formulas", "spiral"])
def test_the_loss_subtitle_and_legend_stay_in_the_panel(make_session, start):
    """Before: the subtitle ("4-16-1 seed 2; earlier runs in the legend; band: min to max per
    plotted point") ran past the panel's right edge, and a dataset's legend, a row of seven
    entries 620 px wide above a plot of 370, was cut at both ends."""
    ui = _with_earlier_runs(make_session, 2100, batch_size=256, **STARTS[start])  # the label names no batch
    try:
        assert len(ui.session.history.earlier) == 2
        panel = ui.app.windows["Loss"]
        padding = 8  # the window's (app/ui/style.py)
        inner = (panel[0] + padding, panel[1], panel[2] - padding, panel[3])
        _inside(ui.app.rects["loss subtitle"], inner, "the subtitle")
        _legend_above_the_axes(ui, inner)
    finally:
        ui.close()


def test_a_datasets_legend_fits_above_its_plot(make_session):
    """A dataset's five curves alone fit in a row above the plot, where they cover none of it."""
    ui = OffscreenApp(make_session(**STARTS["spiral"]), 1280, 800)
    try:
        ui.app.running = False
        ui.session.advance(300)  # evaluations at 100, 200, 300: every curve has points
        ui.frame(3)
        assert ui.session.trainer.plan.loss.classifies and not ui.session.history.earlier
        panel = ui.app.windows["Loss"]
        _legend_above_the_axes(ui, (panel[0] + 8, panel[1], panel[2] - 8, panel[3]))
    finally:
        ui.close()


def _overlap(a, b) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


@pytest.mark.parametrize("size", [(1280, 800), (1000, 700), (1920, 1080)])
@pytest.mark.parametrize("start", ["formulas", "hash grid"])
def test_the_diagrams_labels_are_whole_and_beside_the_nodes(make_session, start, size):
    """Every input's and output's name lies inside the diagram's panel and over no node and no
    other name. Before: a hash grid's 24 inputs, staggered into two lines, had their names
    ('L0 f0') cut by the panel's left edge, and those of the right line ('L0 f1') written over the
    left line's nodes."""
    ui = OffscreenApp(make_session(**STARTS[start]), *size)
    try:
        ui.app.running = False
        ui.frame(3)
        plan = ui.session.trainer.plan
        labels, nodes = [rect for _, rect in ui.app.diagram_labels.values()], ui.app.diagram_nodes.values()
        shown = [n for n in ui.app.diagram_nodes if n < plan.input_dim or n >= plan.neuron_offset(len(plan.sizes) - 1)]
        assert len(labels) == len(shown), "a name for each input and output shown"
        panel = ui.app.windows["Network diagram"]
        for label in labels:
            _inside(label, panel, "a name")
            assert not any(_overlap(label, node) for node in nodes), f"{label} is drawn over a node"
        for k, label in enumerate(labels):
            assert not any(_overlap(label, other) for other in labels[k + 1 :]), f"{label} overlaps another name"
    finally:
        ui.close()


def _grab(frame, index: int, positions: int) -> tuple[float, float]:
    """The x extent of an ImGui integer slider's grab at `index` of `positions` (SliderBehaviorT:
    2 px of padding, a grab one position wide but at least the style's grab_min_size)."""
    from imgui_bundle import imgui

    padding, width = 2.0, frame[2] - frame[0] - 4.0
    grab = min(max(width / positions, imgui.get_style().grab_min_size), width)
    centre = frame[0] + padding + grab / 2 + index / (positions - 1) * (width - grab)
    return centre - grab / 2, centre + grab / 2


def test_the_batch_slider_ends_at_the_whole_set_clear_of_its_text(make_session):
    """A spiral's 250 training points: the slider's right end is 256, the first power of two that
    holds them (before: 2^20, twelve positions past 256 that all trained on the same 250), and
    there its text, 'the whole set, 250', is clear of the grab (before, the default 4,096 put the
    grab across '(the whole set)' in the middle)."""
    from imgui_bundle import imgui

    ui = OffscreenApp(make_session(**STARTS["spiral"]), 1280, 800)
    try:
        ui.app.running = False
        ui.frame(3)
        assert ui.session.trainer.data.train_count == 250 and ui.session.config.batch_size == 4096
        frame = ui.app.rects["batch size"]
        ui.click(frame[0] + 3, (frame[1] + frame[3]) / 2)
        assert ui.session.config.batch_size == 1, "the left end: one point"
        ui.click(frame[2] - 3, (frame[1] + frame[3]) / 2)
        assert ui.session.config.batch_size == 256 and ui.session.trainer.batch_size == 250
        ui.renderer.make_current()
        text = imgui.calc_text_size("the whole set, 250").x
        left = frame[0] + (frame[2] - frame[0] - text) / 2  # ImGui centres a slider's text
        grab = _grab(frame, 8, 9)  # 1, 2, ..., 256
        assert left + text < grab[0], f"the text ends at x = {left + text}, the grab starts at {grab[0]}"
    finally:
        ui.close()


def _text_runs(ui, box) -> list[tuple[int, int]]:
    """The x extents of the text in `box` (x0, y0, x1, y1) of the last frame: columns holding a
    pixel brighter than the plot's frame, joined where less than 6 px apart (a word's letters)."""
    x0, y0, x1, y1 = (int(v) for v in box)
    pixels = ui.target.to_numpy()[y0:y1, x0:x1, :3].astype(int).sum(axis=2)
    lit = np.flatnonzero((pixels > pixels.min() + 150).any(axis=0))
    runs: list[list[int]] = []
    for x in lit:
        if runs and x - runs[-1][1] < 6:
            runs[-1][1] = x
        else:
            runs.append([x, x])
    return [(x0 + a, x0 + b) for a, b in runs]


def test_at_1024_x_640_the_step_labels_and_the_data_sliders_keep_apart(make_session):
    """Issue 42: at 1024 x 640 the loss plot's step labels ran together beside the accuracy axis
    ("20000 60000100000140000"), and the third data slider's label was cut off behind the
    Heatmaps panel's horizontal scroll."""
    ui = OffscreenApp(make_session(**STARTS["spiral"]), 1024, 640)
    try:
        ui.app.running = False
        steps = np.arange(1, 150_001, dtype=np.float64)
        ui.session.history.current.train.extend(steps, 1 / np.sqrt(steps))
        ui.frame(4, force=True)
        frame, axes = ui.app.rects["loss plot"], ui.app.rects["loss axes"]
        ui.renderer.make_current()
        # the line under the axes (below their tick marks), up to the frame's border
        band = (axes[0] - 20, axes[3] + 4, frame[2] - 4, axes[3] + 4 + imgui.get_text_line_height())
        labels = _text_runs(ui, band)
        assert len(labels) >= 2, labels
        gaps = [b[0] - a[1] for a, b in zip(labels, labels[1:])]
        assert min(gaps) >= 8, f"step labels {labels} only {min(gaps)} px apart"
        widest = imgui.calc_text_size("1000000").x  # one label of 7 digits at most, not two run together
        assert max(b - a for a, b in labels) <= widest, f"step labels {labels} run together"
        assert labels[-1][1] <= axes[2], "the last label ends under the axes, not under the accuracy's"
        heatmaps = imgui_internal.find_window_by_name("Heatmaps")
        assert heatmaps.scroll_max.x == 0, "nothing to scroll to sideways"
        slider, panel = ui.app.rects["train ratio"], ui.app.windows["Heatmaps"]
        assert slider[2] + imgui.calc_text_size("train").x < panel[2], "the slider's label shows whole"
    finally:
        ui.close()
