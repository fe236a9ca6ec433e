"""Heatmap rows: for each output, ground truth | learned | |error| of one view (the values, or
their derivatives in x or y) with labelled colour bars, the domain's x and y ranges along the
images, and a legend entry for cells that are not finite. Shared by the window's heatmap panel
and the headless heatmaps.png."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from imgui_bundle import imgui

from ..kernels.view_constants import INVALID_COLOUR
from ..views.heatmaps import PANELS, VIEWS, HeatmapImages
from .style import MUTED, em

# (view, output, i, j) -> (x, y, truth, prediction): values under the mouse for the tooltip.
Lookup = Callable[[int, int, int, int], tuple[float, float, float, float]]
# (output) -> None: draws a row's title line (the window's editable target field, say).
RowTitle = Callable[[int], None]
BAR_COLUMNS = {"values": 0, "error": 1, "signed": 2}  # columns of HeatmapImages.colorbars
QUANTITY = {0: "f", 1: "∂f/∂x", 2: "∂f/∂y"}
INVALID = imgui.ImVec4(*INVALID_COLOUR, 1.0)
# draw_heatmaps puts its images in draw-list channels of their own, so that all heatmaps are one
# draw of the atlas and all bars one of theirs: each draw cost ~50 us on a CPU driver, and the
# images, bars and labels taking turns made a draw of each.
ATLAS_CHANNEL, BAR_CHANNEL, TEXT_CHANNEL = 0, 1, 2


@dataclass
class HeatmapLayout:
    image_em: float = 7.0  # side of each square heatmap
    bar_em: float = 0.8  # colour bar width
    outputs: Sequence[int] | None = None  # which outputs to show; None = all
    # The window's: image_em follows the Heatmaps panel's size until the user sets one
    # (app/ui/panels/heatmaps.py), from the height of the panel's content besides its images;
    # fitted_for: the panel's height, the window's width and the rows it was last fitted to
    fitted: bool = False
    besides_images: float | None = None
    fitted_for: tuple | None = None

    def follow_window(self) -> None:
        """View > Reset layout: the size is the one that fits the window again."""
        self.fitted, self.fitted_for = True, None


def _format(value: float) -> str:
    return f"{value:.3g}"


def _image(channel: int | None, texture, size: imgui.ImVec2, uv0: imgui.ImVec2, uv1: imgui.ImVec2) -> None:
    """imgui.image, into draw-list `channel` where draw_heatmaps split the list (None: as is)."""
    draw = imgui.get_window_draw_list()
    if channel is not None:
        draw.channels_set_current(channel)
    imgui.image(texture, size, uv0, uv1)
    if channel is not None:
        draw.channels_set_current(TEXT_CHANNEL)


def colorbar(
    renderer,
    images: HeatmapImages,
    column: int,
    lo: float,
    hi: float,
    height: float,
    width: float,
    channel: int | None = None,
) -> None:
    """A vertical bar (top = hi) with three values to its right. The ticks are notches cut into
    the bar's right edge: a tick outside it, right before a number, read as a minus sign."""
    columns = images.colorbars.width
    u = (column + 0.5) / columns
    start = imgui.get_cursor_screen_pos()
    texture = renderer.texture(images.colorbars)
    _image(channel, texture, imgui.ImVec2(width, height), imgui.ImVec2(u, 0), imgui.ImVec2(u, 1))
    draw = imgui.get_window_draw_list()
    text = imgui.get_color_u32(imgui.Col_.text)
    notch = imgui.get_color_u32(imgui.ImVec4(0.09, 0.10, 0.12, 1.0))
    line_h = imgui.get_text_line_height()
    for fraction in (0.0, 0.5, 1.0):
        y = start.y + (1.0 - fraction) * height
        y_line = min(max(y, start.y + 1), start.y + height - 1)
        draw.add_line(imgui.ImVec2(start.x + width * 0.45, y_line), imgui.ImVec2(start.x + width, y_line), notch, 2.0)
        text_y = min(max(y - line_h / 2, start.y), start.y + height - line_h)
        draw.add_text(imgui.ImVec2(start.x + width + em(0.45), text_y), text, _format(lo + fraction * (hi - lo)))


def _tooltip(lookup: Lookup, view: int, output: int, grid: int, image_min: imgui.ImVec2, size: float) -> None:
    mouse = imgui.get_mouse_pos()
    i = int((mouse.x - image_min.x) / size * grid)
    j = grid - 1 - int((mouse.y - image_min.y) / size * grid)
    if not (0 <= i < grid and 0 <= j < grid):
        return
    x, y, truth, prediction = lookup(view, output, i, j)
    what = QUANTITY[view]
    imgui.set_tooltip(
        f"x = {x:.3f}   y = {y:.3f}\n{what} truth     {truth:.4g}\n{what} learned   {prediction:.4g}\n"
        f"|error|     {abs(prediction - truth):.4g}"
    )


def _legend(invalid: np.ndarray, outputs: Sequence[int]) -> None:
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
    where = ", ".join(f"f{o + 1}: {n:,} cells" for o, n in counts)
    imgui.text(f"not a number or infinite ({where})")


def axis_labels(domain, origin: imgui.ImVec2, size: float, x_axis: bool) -> None:
    """y's range left of an image (top and bottom), or x's range under it (left and right)."""
    draw, colour = imgui.get_window_draw_list(), imgui.get_color_u32(MUTED)
    x0, x1, y0, y1 = (_format(v) for v in domain)
    line_h = imgui.get_text_line_height()
    if x_axis:
        right = imgui.calc_text_size(x1).x
        draw.add_text(imgui.ImVec2(origin.x, origin.y + size), colour, x0)
        draw.add_text(imgui.ImVec2(origin.x + size - right, origin.y + size), colour, x1)
        label = imgui.calc_text_size("x").x
        draw.add_text(imgui.ImVec2(origin.x + (size - label) / 2, origin.y + size), colour, "x")
        return
    for text, y in ((y1, origin.y), (y0, origin.y + size - line_h), ("y", origin.y + (size - line_h) / 2)):
        draw.add_text(imgui.ImVec2(origin.x - imgui.calc_text_size(text).x - em(0.3), y), colour, text)


def column_titles(view: int) -> tuple[str, str, str]:
    if view == 0:
        return PANELS
    return (f"{QUANTITY[view]} truth", f"{QUANTITY[view]} learned", "|error|")


def draw_heatmaps(
    renderer,
    images: HeatmapImages,
    labels: Sequence[str],
    error_max: np.ndarray,
    invalid: np.ndarray,
    domain: Sequence[float],
    layout: HeatmapLayout,
    view: int = 0,
    lookup: Lookup | None = None,
    row_title: RowTitle | None = None,
) -> None:
    """Draws the rows of `view` (0 values, 1 d/dx, 2 d/dy) at the cursor; `error_max` and
    `invalid` are (views, outputs). Values: truth and learned share the viridis scale of the
    truth's finite range (learned values outside it saturate). Derivatives: the diverging map,
    white at 0, over the truth's largest |derivative|. |error| has its own magma scale from 0."""
    size, bar = em(layout.image_em), em(layout.bar_em)
    bar_block = bar + em(3.6)  # bar plus room for its tick labels
    margin = max(imgui.calc_text_size(_format(v)).x for v in domain[2:]) + em(0.5)  # y's labels
    outputs = list(range(len(labels))) if layout.outputs is None else list(layout.outputs)
    rows = len(labels)
    atlas = renderer.texture(images.atlas)
    spacing = imgui.get_style().item_spacing.x
    x0 = imgui.get_cursor_pos_x() + margin
    for panel, title in enumerate(column_titles(view)):
        offset = panel * (size + spacing) + (panel == 2) * (bar_block + spacing)
        imgui.set_cursor_pos_x(x0 + offset + (size - imgui.calc_text_size(title).x) / 2)
        imgui.text_colored(MUTED, title)
        if panel < 2:
            imgui.same_line()
    _legend(invalid[view], outputs)
    width = 3 * len(VIEWS)
    imgui.get_window_draw_list().channels_split(3)
    imgui.get_window_draw_list().channels_set_current(TEXT_CHANNEL)
    for row, output in enumerate(outputs):
        lo, hi = (float(v) for v in images.value_ranges[view, output])
        if row_title is None:
            imgui.text(f"f{output + 1} = {labels[output]}")
        else:
            row_title(output)
        imgui.set_cursor_pos_x(x0)
        for panel in range(3):
            if panel == 2:
                bar_column = BAR_COLUMNS["values" if view == 0 else "signed"]
                colorbar(renderer, images, bar_column, lo, hi, size, bar, BAR_CHANNEL)
                imgui.same_line(0, bar_block - bar + spacing)
            u0, v0 = (3 * view + panel) / width, output / rows
            image_min = imgui.get_cursor_screen_pos()
            uv1 = imgui.ImVec2(u0 + 1 / width, v0 + 1 / rows)
            _image(ATLAS_CHANNEL, atlas, imgui.ImVec2(size, size), imgui.ImVec2(u0, v0), uv1)
            if panel == 0:
                axis_labels(domain, image_min, size, x_axis=False)
            if row == len(outputs) - 1:
                axis_labels(domain, image_min, size, x_axis=True)
            if lookup is not None and imgui.is_item_hovered():
                _tooltip(lookup, view, output, images.grid, image_min, size)
            imgui.same_line()
        colorbar(renderer, images, BAR_COLUMNS["error"], 0.0, float(error_max[view][output]), size, bar, BAR_CHANNEL)
        # The tick labels are drawn beside the bar, outside any item: reserve their width so
        # auto-sized windows (heatmaps.png) and scrollbars include them.
        imgui.same_line(0, 0)
        imgui.dummy(imgui.ImVec2(bar_block - bar, size))
    imgui.get_window_draw_list().channels_merge()
    imgui.dummy(imgui.ImVec2(0, imgui.get_text_line_height()))  # room for x's labels
