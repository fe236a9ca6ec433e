"""The panel table: every docked panel of the window, once. frame.py draws them from it and
layout.py docks them by it, so a new panel is its module plus one row here.

Columns run left to right, a column's panels top to bottom in the order of the rows. Shares are
the defaults until the user drags a splitter (app/ui/layout.py says how they are read)."""

from __future__ import annotations

from dataclasses import replace

from imgui_bundle import imgui

from ..layout import Panel, content_height, ems, fits, fraction
from . import diagram, heatmaps, loss_plot, network, training, view3d

TRAINING, NETWORK, HEATMAPS, DIAGRAM, LOSS = "Training", "Network", "Heatmaps", "Network diagram", "Loss"
VIEW_3D = "3D view"

PANELS = (
    # The Training panel is as tall as its rows (at 1280 x 800 all of them, the GPU's too); the
    # Network panel below takes the rest, and scrolls
    Panel(
        TRAINING,
        training.draw,
        column=0,
        width=ems(22, 0.2, 0.45),
        height=content_height(TRAINING, 38.5, 0.45, 0.8),
    ),
    Panel(NETWORK, network.draw, column=0),
    Panel(
        HEATMAPS,
        heatmaps.draw,
        column=1,
        width=fits(heatmaps.wanted_width, 0.3, heatmaps.MOST_SHARE),
        flags=imgui.WindowFlags_.horizontal_scrollbar,
    ),
    Panel(DIAGRAM, diagram.draw, column=2, height=fraction(0.5), flags=imgui.WindowFlags_.no_scrollbar),
    Panel(LOSS, loss_plot.draw, column=2, flags=imgui.WindowFlags_.no_scrollbar),
)

# A function of (x, y, z)'s surface, learned and true, below the Heatmaps (its slices), which keep
# HEATMAPS_SHARE_3D of the column: at 1280 x 800 their controls and a row of slices at 8 em, and
# pictures of the surface about 220 pixels a side
VIEW_3D_PANEL = Panel(VIEW_3D, view3d.draw, column=1, flags=imgui.WindowFlags_.no_scrollbar)
HEATMAPS_SHARE_3D = 0.55


def shown_panels(panels: tuple[Panel, ...], app) -> tuple[Panel, ...]:
    """The panels a frame draws: `panels`, and the 3D view for a network of (x, y, z)."""
    if app.session.config.dims != 3:
        return panels
    above = fraction(HEATMAPS_SHARE_3D)
    return (*(replace(panel, height=above) if panel.title == HEATMAPS else panel for panel in panels), VIEW_3D_PANEL)
