"""Issue 16, Found 11: at 1280 x 800 the diagram has room for 8 layers of 256 (summarised)
instead of saying "Too small to show the network", and the default network's hidden nodes are
large enough to click (they were 12 px slivers)."""

from __future__ import annotations

import itertools
import warnings

import imgui_bundle  # noqa: F401 (a dependency: a broken install fails here, never skips)
import numpy as np
import pytest

from app.ui.offscreen import OffscreenApp
from app.ui.panels import diagram
from app.ui.style import em


@pytest.fixture
def ui(make_session):
    app = OffscreenApp(make_session(), 1280, 800)
    app.app.running = False
    app.frame(4)
    yield app
    app.close()


def test_eight_layers_of_256_fit_the_diagram_at_1280_by_800(ui):
    """What the panel needs, measured against the panel of the default layout (8 x 256 changes
    neither column's width). Building 8 x 256 itself takes minutes on a CPU driver; the drawing
    of ten columns is test_ui_controls.py's test_diagram_titles_never_overlap, and summarising a
    wide layer is shown_neurons below."""
    x0, _, x1, _ = ui.app.windows["Network diagram"]
    ui.renderer.make_current()
    padding = 2 * 8  # the window's padding (app/ui/style.py)
    assert diagram.required_em([4, *[256] * 8, 4]) * em() <= x1 - x0 - padding
    assert diagram.required_em([4, 16, 4]) < diagram.required_em([4, *[256] * 8, 4])


def test_a_wide_layer_is_summarised():
    assert diagram.shown_neurons(256, 12) == [*range(10), 255]
    assert diagram.shown_neurons(8, 12) == list(range(8))


def test_the_default_networks_hidden_nodes_are_large_enough_to_click(ui):
    plan = ui.session.trainer.plan
    hidden = {n: r for n, r in ui.app.diagram_nodes.items() if plan.neuron_offset(1) <= n < plan.neuron_offset(2)}
    assert len(hidden) == 16, "all 16 shown"
    ui.renderer.make_current()
    for rect in hidden.values():
        assert rect[2] - rect[0] >= em(1.5) and rect[3] - rect[1] >= em(1.5), rect
    for (_, a), (_, b) in itertools.combinations(hidden.items(), 2):
        overlap_x, overlap_y = min(a[2], b[2]) - max(a[0], b[0]), min(a[3], b[3]) - max(a[1], b[1])
        assert overlap_x <= 0 or overlap_y <= 0, "nodes don't overlap"
    panel = ui.app.windows["Network diagram"]
    assert all(panel[0] <= r[0] and r[2] <= panel[2] and r[3] <= panel[3] for r in hidden.values())
    neuron, rect = next(iter(hidden.items()))
    ui.click((rect[0] + rect[2]) / 2, (rect[1] + rect[3]) / 2)
    assert ui.app.selected_neuron == neuron


def test_a_layers_edge_colours_and_widths_are_each_edges_own(ui):
    """The layer's edges coloured at once (_edges) as one edge at a time would be (_colour, the
    width's formula): orange below zero, blue above, alpha and width growing with |w| up to the
    widest; float16 weights as the half networks hold them."""
    ui.renderer.make_current()
    rng = np.random.default_rng(3)
    scale = 0.8
    for dtype in (np.float32, np.float16):
        extremes = [0.0, -0.0, scale, -scale, 3.0, -3.0, 1e-8, np.inf, -np.inf, np.nan]  # a diverged network's
        w = np.concatenate([rng.normal(0, 0.5, 60), extremes]).astype(dtype).reshape(-1, 1)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # NaN is no invalid cast
            colours, widths = diagram._edges(w, scale)
        for value, (colour,), (width,) in zip(w[:, 0].tolist(), colours, widths):
            mag = min(abs(value) / scale, 1.0)
            assert colour == diagram._colour(value, 0.25 + 0.65 * mag), value
            assert width == 0.5 + em(0.3) * mag or (np.isnan(value) and np.isnan(width)), value
    orange, blue = (diagram._edges(np.array([[v]]), 1.0)[0][0][0] & 0xFFFFFF for v in (-0.5, 0.5))
    assert orange == diagram._colour(-1.0, 1.0) & 0xFFFFFF != blue
