"""The heatmaps' legend lines besides their colour bars: what the contour lines over the value
panels mean, and the colour of cells that are not finite (app/ui/heatmap_view.py draws them)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from imgui_bundle import imgui

from ..errors import counted
from ..kernels.view_constants import CONTOUR_COLOUR, INVALID_COLOUR, ISOLINE_ALPHA
from ..views.heatmaps import Contours
from .style import em

INVALID = imgui.ImVec4(*INVALID_COLOUR, 1.0)
SWATCH_EM = 1.6  # a line's sample, as long as this
# On the panels a line is 1.5 cells wide (ZERO_LINE_WIDTH), a few pixels at their usual size: its
# sample here is drawn as thick, and the isolines' thinner, in their colour and alpha
ZERO_SWATCH_PX, ISOLINE_SWATCH_PX = 3.0, 1.5


def _line_swatch(thickness: float, alpha: float) -> None:
    """A short horizontal line at the cursor, centred on the text line, then the cursor after it."""
    start, side = imgui.get_cursor_screen_pos(), imgui.get_text_line_height()
    y = start.y + side / 2
    colour = imgui.get_color_u32(imgui.ImVec4(*CONTOUR_COLOUR, alpha))
    # Drawn on light ground, the panels' white at the level, so that the dark line shows
    light = imgui.get_color_u32(imgui.ImVec4(0.97, 0.97, 0.97, 1.0))
    end = imgui.ImVec2(start.x + em(SWATCH_EM), start.y + side)
    imgui.get_window_draw_list().add_rect_filled(start, end, light)
    imgui.get_window_draw_list().add_line(
        imgui.ImVec2(start.x + em(0.2), y), imgui.ImVec2(end.x - em(0.2), y), colour, thickness
    )
    imgui.dummy(imgui.ImVec2(em(SWATCH_EM), side))
    imgui.same_line()


def contour_text(contours: Contours) -> tuple[str, str]:
    """What the zero level's line and the isolines say in the legend."""
    isolines = f"isolines every {contours.spacing:g}" if contours.spacing > 0 else "no isolines (spacing 0)"
    return "zero level (f = 0)", isolines


def contour_legend(contours: Contours) -> None:
    """One line: a sample of the zero level's line and of the isolines', each with its meaning."""
    zero, isolines = contour_text(contours)
    _line_swatch(ZERO_SWATCH_PX, 1.0)
    imgui.text(zero)
    imgui.same_line(0, em(1.5))
    if contours.spacing > 0:
        _line_swatch(ISOLINE_SWATCH_PX, ISOLINE_ALPHA)
    imgui.text(isolines)


def invalid_legend(invalid: np.ndarray, outputs: Sequence[int]) -> None:
    """Explains the colour of cells that are NaN or infinite, where any are shown."""
    counts = [(o, int(invalid[o])) for o in outputs if invalid[o]]
    if not counts:
        return
    start = imgui.get_cursor_screen_pos()
    side = imgui.get_text_line_height()
    imgui.get_window_draw_list().add_rect_filled(
        start, imgui.ImVec2(start.x + side, start.y + side), imgui.get_color_u32(INVALID)
    )
    imgui.dummy(imgui.ImVec2(side, side))
    imgui.same_line()
    where = ", ".join(f"f{o + 1}: {counted(n, 'cell')}" for o, n in counts)
    imgui.text(f"not a number or infinite ({where})")
