"""Heatmap rows: for each output, ground truth | learned | |error| with labelled colour bars.
Shared by the window's heatmap panel and the headless heatmaps.png."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from imgui_bundle import imgui

from app.heatmaps import PANELS, HeatmapImages
from app.ui.style import MUTED, em

# (output, i, j) -> (x, y, truth, prediction): values under the mouse for the tooltip.
Lookup = Callable[[int, int, int], tuple[float, float, float, float]]


@dataclass
class HeatmapLayout:
    image_em: float = 7.0      # side of each square heatmap
    bar_em: float = 0.8        # colour bar width
    outputs: Optional[Sequence[int]] = None  # which outputs to show; None = all


def _format(value: float) -> str:
    return f"{value:.3g}"


def _colorbar(renderer, images: HeatmapImages, column: int, lo: float, hi: float, height: float, width: float) -> None:
    """A vertical bar (top = hi) with three value ticks to its right."""
    u = 0.25 + 0.5 * column
    start = imgui.get_cursor_screen_pos()
    imgui.image(renderer.texture(images.colorbars), imgui.ImVec2(width, height), imgui.ImVec2(u, 0), imgui.ImVec2(u, 1))
    draw = imgui.get_window_draw_list()
    colour = imgui.get_color_u32(imgui.Col_.text)
    line_h = imgui.get_text_line_height()
    for fraction in (0.0, 0.5, 1.0):
        y = start.y + (1.0 - fraction) * height
        draw.add_line(imgui.ImVec2(start.x + width, y), imgui.ImVec2(start.x + width + em(0.25), y), colour)
        text_y = min(max(y - line_h / 2, start.y), start.y + height - line_h)
        draw.add_text(imgui.ImVec2(start.x + width + em(0.35), text_y), colour, _format(lo + fraction * (hi - lo)))


def _tooltip(lookup: Lookup, output: int, grid: int, image_min: imgui.ImVec2, size: float) -> None:
    mouse = imgui.get_mouse_pos()
    i = int((mouse.x - image_min.x) / size * grid)
    j = grid - 1 - int((mouse.y - image_min.y) / size * grid)
    if not (0 <= i < grid and 0 <= j < grid):
        return
    x, y, truth, prediction = lookup(output, i, j)
    imgui.set_tooltip(f"x = {x:.3f}   y = {y:.3f}\ntruth       {truth:.4f}\nprediction  {prediction:.4f}\n"
                      f"|error|     {abs(prediction - truth):.4f}")


def draw_heatmaps(renderer, images: HeatmapImages, targets: Sequence[str], error_max: Sequence[float],
                  layout: HeatmapLayout, lookup: Optional[Lookup] = None) -> None:
    """Draws the rows at the cursor. Truth and learned share the viridis scale of the truth's
    range (learned values outside it saturate); |error| has its own magma scale from 0."""
    size, bar = em(layout.image_em), em(layout.bar_em)
    bar_block = bar + em(3.6)  # bar plus room for its tick labels
    outputs = list(range(len(targets))) if layout.outputs is None else list(layout.outputs)
    rows = len(targets)
    atlas = renderer.texture(images.atlas)
    spacing = imgui.get_style().item_spacing.x
    # column titles
    x0 = imgui.get_cursor_pos_x()
    for panel, title in enumerate(PANELS):
        offset = panel * (size + spacing) + (panel == 2) * (bar_block + spacing)
        imgui.set_cursor_pos_x(x0 + offset + (size - imgui.calc_text_size(title).x) / 2)
        imgui.text_colored(MUTED, title)
        if panel < 2:
            imgui.same_line()
    for output in outputs:
        lo, hi = (float(v) for v in images.value_ranges[output])
        imgui.text(f"f{output + 1} = {targets[output]}")
        for panel in range(3):
            if panel == 2:
                _colorbar(renderer, images, 0, lo, hi, size, bar)
                imgui.same_line(0, bar_block - bar + spacing)
            u0, v0 = panel / 3.0, output / rows
            image_min = imgui.get_cursor_screen_pos()
            imgui.image(atlas, imgui.ImVec2(size, size), imgui.ImVec2(u0, v0), imgui.ImVec2(u0 + 1 / 3.0, v0 + 1 / rows))
            if lookup is not None and imgui.is_item_hovered():
                _tooltip(lookup, output, images.grid, image_min, size)
            imgui.same_line()
        _colorbar(renderer, images, 1, 0.0, float(error_max[output]), size, bar)
        # The tick labels are drawn beside the bar, outside any item: reserve their width so
        # auto-sized windows (heatmaps.png) and scrollbars include them.
        imgui.same_line(0, 0)
        imgui.dummy(imgui.ImVec2(bar_block - bar, size))
