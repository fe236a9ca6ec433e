"""The data view's images (app/views/data_view.py) with their titles, axis ranges and legends, as the
Heatmaps panel and heatmaps.png show them. Classes: one image and the class colours. Values: one
image an output, each with its own scale from -m to +m (m its column's largest |value|): outputs
differ in scale, and one bar for all of them described the first alone."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from imgui_bundle import imgui

from ..kernels.view_constants import CLASS_COLOURS
from ..views.data_view import DataView
from . import fonts
from .heatmap_view import axis_labels
from .style import MUTED, em, fit_text, px

VALUE_NOTE = "points and background: orange < 0 < blue"
LEGEND_EM = 9.5  # a class legend's width right of the image
# (image, its top-left corner, its side) -> None, after each image is drawn: the panel's tooltip
AfterImage = Callable[[int, imgui.ImVec2, float], None]


@dataclass(frozen=True)
class Scale:
    """A colour scale as drawn: what it measures and its two ends' labels."""

    name: str
    low: str
    high: str


def scales(view: DataView) -> list[Scale]:
    """The view's colour scales: one per value column, the class probability's for two classes,
    none for more (their colours are the legend). Names are as drawn (app/ui/fonts.py's label)."""
    problem = view.evaluator.trainer.data.dataset.problem
    if problem.kind == "binary":
        return [Scale(f"p({fonts.label(problem.names[1], 2, 'class', named=True)})", "0", "1")]
    if problem.kind == "classes":
        return []
    ranges = enumerate(zip(problem.names, view.value_ranges))
    return [Scale(fonts.label(name, k + 1), f"{-top:.3g}", f"{top:.3g}") for k, (name, top) in ranges]


@dataclass(frozen=True)
class ImageLayout:
    side: float  # each image's side, in pixels
    below: bool  # a class legend below the image, rather than right of it
    columns: int = 1  # value images a row: more wrap into further rows


def image_layout(view: DataView, avail: imgui.ImVec2, margin: float) -> ImageLayout:
    """The largest images that fit `avail` (less `margin` on the left for y's labels). Classes:
    their legend below the image or right of it, whichever leaves it larger. Values: in the
    rows and columns that leave them largest, each with its title line above and its x axis,
    scale and scale's ends below (eight columns side by side were a strip of stamps)."""
    spacing, line = imgui.get_style().item_spacing.x, imgui.get_text_line_height_with_spacing()
    if view.evaluator.trainer.plan.loss.classifies:
        below = min(avail.x - margin - spacing, avail.y - 5 * line)
        right = min(avail.x - margin - em(LEGEND_EM) - spacing, avail.y - 2 * line)
        return ImageLayout(max(below, right, em(8)), below > right)
    count, best = view.images, ImageLayout(0.0, True)
    for columns in range(1, count + 1):
        rows = -(-count // columns)
        side = min((avail.x - margin) / columns - spacing, (avail.y - line) / rows - 4 * line - spacing)
        if side > best.side:
            best = ImageLayout(side, True, columns)
    return ImageLayout(max(best.side, em(8)), True, best.columns)


def draw_data_images(
    renderer, view: DataView, domain, layout: ImageLayout, after_image: AfterImage | None = None
) -> list[Scale]:
    """The images from the cursor on (the caller leaves room left of it for y's labels) and
    their legends; returns the scales drawn, in order."""
    left, side = imgui.get_cursor_pos_x(), layout.side
    if view.evaluator.trainer.plan.loss.classifies:
        _image(renderer, view, 0, domain, side, after_image)
        if layout.below:
            imgui.dummy(imgui.ImVec2(0, imgui.get_text_line_height()))  # room for x's labels
            imgui.set_cursor_pos_x(left)
        else:
            imgui.same_line()
        return _class_legend(renderer, view, side, layout.below)
    drawn = scales(view)
    for image, scale in enumerate(drawn):
        if image % layout.columns:
            imgui.same_line()
        else:
            imgui.set_cursor_pos_x(left)
        imgui.begin_group()
        _title(scale.name, side)
        _image(renderer, view, image, domain, side, after_image, y_axis=image % layout.columns == 0)
        imgui.dummy(imgui.ImVec2(0, imgui.get_text_line_height()))  # room for x's labels
        _value_bar(renderer, view, scale, side)
        imgui.end_group()
    imgui.set_cursor_pos_x(left)
    imgui.text_colored(MUTED, VALUE_NOTE)
    return drawn


def _image(renderer, view: DataView, image: int, domain, side: float, after_image, y_axis: bool = True) -> None:
    """Image `image` of the view, its x range under it and, with `y_axis`, its y range left of it."""
    origin = imgui.get_cursor_screen_pos()
    u0, u1 = image / view.images, (image + 1) / view.images
    imgui.image(renderer.texture(view.view), imgui.ImVec2(side, side), imgui.ImVec2(u0, 0), imgui.ImVec2(u1, 1))
    if after_image is not None:
        after_image(image, origin, side)
    if y_axis:
        axis_labels(domain, origin, side, x_axis=False)
    axis_labels(domain, origin, side, x_axis=True)


def _title(name: str, side: float) -> None:
    """A value column's name, centred over its image."""
    text = fit_text(name, side)
    start = imgui.get_cursor_pos_x()
    imgui.set_cursor_pos_x(start + (side - imgui.calc_text_size(text).x) / 2)
    imgui.text(text)


def _named_bar(renderer, view: DataView, scale: Scale, width: float) -> None:
    """The scale's name, then the signed scale across, lowest on the left, between its ends'
    values (`width` for the ends and the bar)."""
    imgui.text_colored(MUTED, scale.name)
    imgui.same_line()
    spacing = imgui.get_style().item_spacing.x
    ends = imgui.calc_text_size(scale.low).x + imgui.calc_text_size(scale.high).x + 2 * spacing
    length = max(width - ends, em(3))
    imgui.text(scale.low)
    imgui.same_line()
    a = imgui.get_cursor_screen_pos()
    b = imgui.ImVec2(a.x + length, a.y + imgui.get_text_line_height())
    lo, hi = imgui.ImVec2(0.5, 1.0), imgui.ImVec2(0.5, 0.0)  # the bar texture's bottom is -1
    corners = (imgui.ImVec2(a.x, a.y), imgui.ImVec2(b.x, a.y), imgui.ImVec2(b.x, b.y), imgui.ImVec2(a.x, b.y))
    imgui.get_window_draw_list().add_image_quad(renderer.texture(view.bar), *corners, lo, hi, hi, lo)
    imgui.dummy(imgui.ImVec2(length, b.y - a.y))
    imgui.same_line()
    imgui.text(scale.high)


def _value_bar(renderer, view: DataView, scale: Scale, side: float) -> None:
    """A value column's scale across its image's width, its two ends' values under its ends."""
    start, height = imgui.get_cursor_screen_pos(), em(0.8)
    lo, hi = imgui.ImVec2(0.5, 1.0), imgui.ImVec2(0.5, 0.0)  # the bar texture's bottom is -1
    end = imgui.ImVec2(start.x + side, start.y + height)
    corners = (start, imgui.ImVec2(end.x, start.y), end, imgui.ImVec2(start.x, end.y))
    imgui.get_window_draw_list().add_image_quad(renderer.texture(view.bar), *corners, lo, hi, hi, lo)
    imgui.dummy(imgui.ImVec2(side, height))
    left = imgui.get_cursor_pos_x()
    imgui.text(scale.low)
    imgui.same_line()
    imgui.set_cursor_pos_x(left + side - imgui.calc_text_size(scale.high).x)
    imgui.text(scale.high)


def _upright_bar(renderer, view: DataView, scale: Scale, length: float) -> None:
    """The signed scale upright, lowest at the bottom, its ends' values beside it."""
    imgui.text_colored(MUTED, scale.name)
    start = imgui.get_cursor_screen_pos()
    imgui.image(renderer.texture(view.bar), imgui.ImVec2(em(0.8), length))
    draw, colour = imgui.get_window_draw_list(), imgui.get_color_u32(imgui.Col_.text)
    for text, y in ((scale.high, start.y), (scale.low, start.y + length - imgui.get_text_line_height())):
        draw.add_text(imgui.ImVec2(start.x + em(1.2), y), colour, text)


def _swatch(colour, ring: bool = False) -> None:
    side = imgui.get_text_line_height()
    start = imgui.get_cursor_screen_pos()
    centre = imgui.ImVec2(start.x + side / 2, start.y + side / 2)
    u32 = imgui.get_color_u32(imgui.ImVec4(*colour, 1.0))
    draw = imgui.get_window_draw_list()
    if ring:
        draw.add_circle(centre, side * 0.32, u32, 0, px(2.5))
    else:
        draw.add_circle_filled(centre, side * 0.36, u32)
        draw.add_circle(centre, side * 0.36, imgui.get_color_u32(imgui.ImVec4(1, 1, 1, 1)), 0, px(1.0))
    imgui.dummy(imgui.ImVec2(side, side))
    imgui.same_line(0, em(0.2))


def _class_legend(renderer, view: DataView, side: float, below: bool) -> list[Scale]:
    """Class colours (filled: training, ring: test), and for two classes the probability's scale;
    in a column right of the image, or in lines below it."""
    problem = view.evaluator.trainer.data.dataset.problem
    imgui.begin_group()
    if not below:
        imgui.text_colored(MUTED, "classes")
    for k, name in enumerate(problem.names):
        _swatch(CLASS_COLOURS[k])
        _swatch(CLASS_COLOURS[k], ring=True)
        imgui.text(fonts.label(name, k + 1, "class"))
        if below:
            imgui.same_line(0, em(1))
    imgui.text_colored(MUTED, "filled: train, ring: test")
    drawn = scales(view)
    for scale in drawn:
        if below:
            _named_bar(renderer, view, scale, min(side * 0.45, em(12)) + em(5))
        else:
            _upright_bar(renderer, view, scale, max(min(side * 0.45, em(10)), em(4)))
    imgui.end_group()
    return drawn
