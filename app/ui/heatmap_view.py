"""Heatmap rows: for each output, ground truth | learned | |error| of one view (the values,
their derivatives in x or y, or the gradient's length) with labelled colour bars, the domain's x
and y ranges along the images, and legend entries for contours and for cells that are not finite.
Shared by the window's heatmap panel and the headless heatmaps.png."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from imgui_bundle import imgui

from ..kernels.view_constants import GRADIENT_VIEW
from ..views.heatmaps import PANELS, VIEWS, HeatmapImages, shown_range
from . import fonts
from .clamped_image import clamped_image
from .heatmap_legend import contour_legend, invalid_legend
from .style import MUTED, em, px

# (view, output, i, j) -> (x, y, truth, prediction): values under the mouse for the tooltip.
Lookup = Callable[[int, int, int, int], tuple[float, float, float, float]]
# (output) -> None: draws a row's title line (the window's editable target field, say).
RowTitle = Callable[[int], None]
BAR_COLUMNS = {"values": 0, "error": 1, "signed": 2}  # columns of HeatmapImages.colorbars
QUANTITY = {0: "f", 1: "∂f/∂x", 2: "∂f/∂y", GRADIENT_VIEW: "|grad f|"}


def quantity(view: int, axes: tuple[str, str] = ("x", "y")) -> str:
    """What a view shows, its derivatives named by the axes across and up (a 3D slice's xz, say)."""
    return QUANTITY[view] if axes == ("x", "y") or view not in (1, 2) else f"∂f/∂{axes[view - 1]}"


# draw_heatmaps puts its images in draw-list channels of their own, so that all heatmaps are one
# draw of the atlas and all bars one of theirs: a draw is costly on a CPU driver, and the images,
# bars and labels taking turns made a draw of each.
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
    # Images a line: 3 (truth, learned, |error| side by side), or a row wrapped into lines of 2
    # or 1, each under its own titles, where that gives larger maps (one output in a tall panel)
    columns: int = 3

    def follow_window(self) -> None:
        """View > Reset layout: the size is the one that fits the window again."""
        self.fitted, self.fitted_for = True, None


def _format(value: float) -> str:
    return f"{value:.3g}"


def _image(
    channel: int | None, texture, size: imgui.ImVec2, uv0: imgui.ImVec2, uv1: imgui.ImVec2, texels: tuple[int, int]
) -> None:
    """The `texels` (columns, rows) of a texture's region as an image, without its neighbours'
    (app/ui/clamped_image.py), into draw-list `channel` where draw_heatmaps split the list (None:
    as is)."""
    draw = imgui.get_window_draw_list()
    if channel is not None:
        draw.channels_set_current(channel)
    clamped_image(texture, size, uv0, uv1, texels)
    if channel is not None:
        draw.channels_set_current(TEXT_CHANNEL)


def bar_ticks(view: int, lo: float, hi: float) -> list[tuple[float, float]]:
    """(height as a fraction of the bar, value) of a view's colour bar ticks: its ends and
    middle; |gradient|'s middle is 1, the length of a distance field's gradient."""
    if view == GRADIENT_VIEW:
        return [(0.0, lo), (0.5, 1.0), (1.0, hi)]
    return [(fraction, lo + fraction * (hi - lo)) for fraction in (0.0, 0.5, 1.0)]


def colorbar(
    renderer,
    images: HeatmapImages,
    column: int,
    lo: float,
    hi: float,
    height: float,
    width: float,
    channel: int | None = None,
    ticks: Sequence[tuple[float, float]] | None = None,
) -> None:
    """A vertical bar (top = hi) with `ticks` ((fraction, value) pairs; by default lo, the middle
    and hi) to its right. The ticks are notches cut into the bar's right edge: a tick outside it,
    right before a number, read as a minus sign."""
    columns = images.colorbars.width
    u = (column + 0.5) / columns
    start = imgui.get_cursor_screen_pos()
    texture = renderer.texture(images.colorbars)
    bar = imgui.ImVec2(width, height)
    _image(channel, texture, bar, imgui.ImVec2(u, 0), imgui.ImVec2(u, 1), (1, images.colorbars.height))
    draw = imgui.get_window_draw_list()
    text = imgui.get_color_u32(imgui.Col_.text)
    notch = imgui.get_color_u32(imgui.ImVec4(0.09, 0.10, 0.12, 1.0))
    line_h = imgui.get_text_line_height()
    for fraction, value in bar_ticks(0, lo, hi) if ticks is None else ticks:
        y = start.y + (1.0 - fraction) * height
        y_line = min(max(y, start.y + 1), start.y + height - 1)
        draw.add_line(
            imgui.ImVec2(start.x + width * 0.45, y_line), imgui.ImVec2(start.x + width, y_line), notch, px(2.0)
        )
        text_y = min(max(y - line_h / 2, start.y), start.y + height - line_h)
        draw.add_text(imgui.ImVec2(start.x + width + em(0.45), text_y), text, _format(value))


def _tooltip(
    lookup: Lookup, view: int, output: int, grid: int, image_min: imgui.ImVec2, size: float, axes=("x", "y")
) -> None:
    mouse = imgui.get_mouse_pos()
    i = int((mouse.x - image_min.x) / size * grid)
    j = grid - 1 - int((mouse.y - image_min.y) / size * grid)
    if not (0 <= i < grid and 0 <= j < grid):
        return
    x, y, truth, prediction = lookup(view, output, i, j)
    what = quantity(view, axes)
    imgui.set_tooltip(
        f"{axes[0]} = {x:.3f}   {axes[1]} = {y:.3f}\n{what} truth     {truth:.4g}\n{what} learned   {prediction:.4g}\n"
        f"|error|     {abs(prediction - truth):.4g}"
    )


def axis_labels(domain, origin: imgui.ImVec2, size: float, x_axis: bool, axes=("x", "y")) -> None:
    """y's range left of an image (top and bottom), or x's range under it (left and right); `axes`
    names them (a 3D function's slice: x and z, say)."""
    draw, colour = imgui.get_window_draw_list(), imgui.get_color_u32(MUTED)
    x0, x1, y0, y1 = (_format(v) for v in domain)
    line_h = imgui.get_text_line_height()
    if x_axis:
        right = imgui.calc_text_size(x1).x
        draw.add_text(imgui.ImVec2(origin.x, origin.y + size), colour, x0)
        draw.add_text(imgui.ImVec2(origin.x + size - right, origin.y + size), colour, x1)
        label = imgui.calc_text_size(axes[0]).x
        draw.add_text(imgui.ImVec2(origin.x + (size - label) / 2, origin.y + size), colour, axes[0])
        return
    for text, y in ((y1, origin.y), (y0, origin.y + size - line_h), (axes[1], origin.y + (size - line_h) / 2)):
        draw.add_text(imgui.ImVec2(origin.x - imgui.calc_text_size(text).x - em(0.3), y), colour, text)


def column_titles(view: int, axes=("x", "y")) -> tuple[str, str, str]:
    if view == 0:
        return PANELS
    return (f"{quantity(view, axes)} truth", f"{quantity(view, axes)} learned", "|error|")


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
    rects: dict | None = None,
    axes: tuple[str, str] = ("x", "y"),
) -> None:
    """Draws the rows of `view` (0 values, 1 d/dx, 2 d/dy, 3 |gradient|) at the cursor;
    `error_max` and `invalid` are (views, outputs). Values: truth and learned share the viridis
    scale of the truth's finite range (learned values outside it saturate), or with contours the
    diverging map over that range made symmetric about 0, the contours' legend above the rows.
    Derivatives: the diverging map, white at 0, over the truth's largest |derivative|. |gradient|:
    the diverging map, white at 1, from 0 to the truth's largest (at least 2). |error| has its own
    magma scale from 0."""
    rows = _Rows(renderer, images, layout, domain, view, lookup)
    rows.axes = axes  # the names across and up: x and y, or a 3D function's slice's
    rows.rects = rects  # each image's rectangle, "heatmap {output} {panel}" (tests)
    outputs = list(range(len(labels))) if layout.outputs is None else list(layout.outputs)
    x0 = imgui.get_cursor_pos_x() + rows.margin
    lines = line_panels(layout.columns)
    if len(lines) == 1:  # the titles once, above the columns; wrapped, above each line
        rows.titles(x0, lines[0], view)
    if view == 0 and images.contours.shown:
        imgui.set_cursor_pos_x(x0)
        contour_legend(images.contours)
    invalid_legend(invalid[view], outputs)
    imgui.get_window_draw_list().channels_split(3)
    imgui.get_window_draw_list().channels_set_current(TEXT_CHANNEL)
    for row, output in enumerate(outputs):
        if row_title is None:
            imgui.text(f"f{output + 1} = {fonts.drawable(labels[output])}")  # numbered: '?' will do
        else:
            row_title(output)
        for k, panels in enumerate(lines):
            if len(lines) > 1:
                rows.titles(x0, panels, view)
            imgui.set_cursor_pos_x(x0)
            last = row == len(outputs) - 1 and k == len(lines) - 1
            rows.draw(output, len(labels), float(error_max[view][output]), panels, last)
    imgui.get_window_draw_list().channels_merge()
    imgui.dummy(imgui.ImVec2(0, imgui.get_text_line_height()))  # room for x's labels


def line_panels(columns: int) -> list[tuple[int, ...]]:
    """A row's panels (0 truth, 1 learned, 2 |error|) line by line, `columns` to a line."""
    return [tuple(range(first, min(first + columns, 3))) for first in range(0, 3, columns)]


def _value_bar_after(panels: tuple[int, ...]) -> int | None:
    """The panel of a line that the values' bar follows: its last of truth and learned."""
    return max((panel for panel in panels if panel < 2), default=None)


class _Rows:
    """One view's rows as draw_heatmaps lays them out: their sizes, and a row's images and bars."""

    def __init__(self, renderer, images: HeatmapImages, layout: HeatmapLayout, domain, view: int, lookup):
        self.renderer, self.images, self.domain, self.view, self.lookup = renderer, images, domain, view, lookup
        self.rects: dict | None = None
        self.axes = ("x", "y")
        self.size, self.bar = em(layout.image_em), em(layout.bar_em)
        self.bar_block = self.bar + em(3.6)  # bar plus room for its tick labels
        self.margin = max(imgui.calc_text_size(_format(v)).x for v in domain[2:]) + em(0.5)  # y's labels
        self.spacing = imgui.get_style().item_spacing.x
        self.atlas = renderer.texture(images.atlas)

    def _value_bar(self, output: int) -> None:
        view, contours = self.view, self.images.contours
        lo, hi = shown_range(self.images.value_ranges, view, output, contours)
        column = BAR_COLUMNS["values" if view == 0 and not contours.shown else "signed"]
        ticks = bar_ticks(view, lo, hi)
        colorbar(self.renderer, self.images, column, lo, hi, self.size, self.bar, BAR_CHANNEL, ticks)

    def titles(self, x0: float, panels: tuple[int, ...], view: int) -> None:
        """The titles of a line's panels, each centred over its image."""
        names, after = column_titles(view, self.axes), _value_bar_after(panels)
        for k, panel in enumerate(panels):
            offset = k * (self.size + self.spacing)
            offset += (self.bar_block + self.spacing) if after is not None and panel > after else 0
            imgui.set_cursor_pos_x(x0 + offset + (self.size - imgui.calc_text_size(names[panel]).x) / 2)
            imgui.text_colored(MUTED, names[panel])
            if k < len(panels) - 1:
                imgui.same_line()

    def draw(self, output: int, rows: int, error_top: float, panels: tuple[int, ...], last: bool) -> None:
        """A line of row `output` of `rows` at the cursor: of truth, learned and |error| those in
        `panels`, truth and learned followed by their bar, |error| by its own."""
        size, width, after = self.size, 3 * len(VIEWS), _value_bar_after(panels)
        for k, panel in enumerate(panels):
            u0, v0 = (3 * self.view + panel) / width, output / rows
            image_min = imgui.get_cursor_screen_pos()
            uv1 = imgui.ImVec2(u0 + 1 / width, v0 + 1 / rows)
            grid = (self.images.grid, self.images.grid)
            _image(ATLAS_CHANNEL, self.atlas, imgui.ImVec2(size, size), imgui.ImVec2(u0, v0), uv1, grid)
            if self.rects is not None:
                self.rects[f"heatmap {output} {panel}"] = (
                    image_min.x,
                    image_min.y,
                    image_min.x + size,
                    image_min.y + size,
                )
            if k == 0:
                axis_labels(self.domain, image_min, size, x_axis=False, axes=self.axes)
            if last:
                axis_labels(self.domain, image_min, size, x_axis=True, axes=self.axes)
            if self.lookup is not None and imgui.is_item_hovered():
                _tooltip(self.lookup, self.view, output, self.images.grid, image_min, size, self.axes)
            imgui.same_line()
            if panel == after:
                self._value_bar(output)
                self._labels_room(more=panel != panels[-1])
        if 2 in panels:
            colorbar(self.renderer, self.images, BAR_COLUMNS["error"], 0.0, error_top, size, self.bar, BAR_CHANNEL)
            self._labels_room(more=False)

    def _labels_room(self, more: bool) -> None:
        """After a bar: its tick labels' width, drawn beside it outside any item. Reserved, so
        that auto-sized windows (heatmaps.png) and scrollbars include them, or skipped to the
        line's next image."""
        if more:
            imgui.same_line(0, self.bar_block - self.bar + self.spacing)
            return
        imgui.same_line(0, 0)
        imgui.dummy(imgui.ImVec2(self.bar_block - self.bar, self.size))
