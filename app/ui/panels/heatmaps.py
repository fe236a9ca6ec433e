"""Heatmaps panel: which view (values, d/dx, d/dy, |gradient|), which outputs and how large,
whether the values have contours and their spacing; where the targets come from (formulas, a
shape or points); then the rows from heatmap_view, each titled by its target's field (a shape's
or an image's by what it is). For points, the data view (app/ui/panels/data.py) instead."""

from __future__ import annotations

import math

from imgui_bundle import imgui

from ...kernels.view_constants import GRADIENT_VIEW
from ...truth.eval_grid import cell_centre
from ...views.heatmaps import VIEWS, Contours
from ...views.slices import AXIS_NAMES, PLANES, Slice, box
from .. import image_view
from ..heatmap_view import draw_heatmaps, line_panels
from ..layout import drawn_height
from ..sliders import real, typed_slider
from ..style import MUTED, em, field_error
from . import data, shapes, targets

IMAGE_EM = (4.0, 14.0)  # the heatmap size slider's range
# Until the user sets a size, the heatmaps fill the panel's height with their rows, between these
# (below 6 em, a small window's panel scrolls instead), and the panel's width at most this share
# of the window's, and the panel at most MOST_SHARE of the width right of its left edge
FITTED_EM = (6.0, 14.0)
FITTED_WIDTH = 0.45
MOST_SHARE = 0.6
# A row's width besides its three images: two colour bars with their tick labels, spacing and
# the scrollbar gutter; a row wrapped into lines (app/ui/heatmap_view.py) has one bar a line
WIDTH_BESIDES_EM = 14.5
WRAPPED_BESIDES_EM = 10.0


def _slice_controls(app) -> None:
    """A function of (x, y, z): the plane the rows show (xy, xz or yz) and its depth along the
    third axis, dragged; the evaluation follows (app/views/slices.py)."""
    config, chosen = app.session.config, app.slice
    imgui.text_colored(MUTED, "slice")
    for plane in PLANES:
        imgui.same_line()
        if imgui.radio_button(f"{plane}###slice {plane}", chosen.plane == plane) and plane != chosen.plane:
            chosen = Slice(plane)  # at the middle of its own third axis
        app.remember(f"slice {plane}")
    low, high = box(config.domain, config.z_range)[chosen.axes[2]]
    depth = chosen.depth_in(config.domain, config.z_range)
    imgui.same_line(0, em(1.5))
    imgui.set_next_item_width(em(10))
    name = AXIS_NAMES[chosen.axes[2]]
    changed, value = imgui.slider_float(f"{name} (depth)###slice depth", depth, float(low), float(high), "%.3f")
    app.remember("slice depth", f"{name} (depth)")
    if changed:
        chosen = Slice(chosen.plane, value)
    app.slice = app.session.evaluator.slice = chosen
    imgui.text_colored(MUTED, f"Showing {chosen.caption(config.domain, config.z_range)}")


def _extent(app) -> tuple[float, float, float, float]:
    """The range across and up of what the rows show: the domain, or a 3D function's slice."""
    config = app.session.config
    return tuple(config.domain) if config.dims == 2 else app.slice.extent(config.domain, config.z_range)


def _axes(app) -> tuple[str, str]:
    return ("x", "y") if app.session.config.dims == 2 else app.slice.names


def _lookup(app):
    def lookup(view: int, output: int, i: int, j: int):
        ev = app.evaluation()  # read back only while the mouse is over a heatmap
        x, y = cell_centre(_extent(app), ev.predictions.shape[0], i, j)
        if view == 0:
            return x, y, float(ev.truths[j, i, output]), float(ev.predictions[j, i, output])
        d = ev.derivatives[j, i, output]
        if view == GRADIENT_VIEW:
            return x, y, math.hypot(d[2], d[3]), math.hypot(d[0], d[1])
        return x, y, float(d[view + 1]), float(d[view - 1])  # (truth, learned) d/dx or d/dy

    return lookup


def _view_picker(app) -> None:
    imgui.text_colored(MUTED, "show")
    axes = _axes(app)
    for view, name in enumerate(VIEWS):
        imgui.same_line()
        label = name if axes == ("x", "y") or view not in (1, 2) else f"∂/∂{axes[view - 1]}###{name}"
        if imgui.radio_button(label, app.view == view):
            app.view = view
        app.remember(f"view {name}")
        if view and imgui.is_item_hovered():
            what = f"the gradient's length in the {''.join(axes)} plane" if view == GRADIENT_VIEW else label
            what = what.split("###")[0]
            imgui.set_tooltip(f"{what} of the learned network and of the truth,\nby Slang's forward-mode autodiff")
    imgui.same_line(0, em(1.5))
    imgui.set_next_item_width(em(7))
    size = app.layout.image_em

    def slider(flags: int) -> tuple[bool, float]:
        return imgui.slider_float("size", size, *IMAGE_EM, "%.1f em", flags | imgui.SliderFlags_.always_clamp)

    typed_slider(app, "heatmap size", "size", slider, f"{size:.1f} em", real("heatmap size", "em"), _set_size(app))


def _set_size(app):
    def set_size(size: float) -> None:
        if not IMAGE_EM[0] <= size <= IMAGE_EM[1]:
            app.field_errors["heatmap size"] = f"heatmap size must be between {IMAGE_EM[0]:g} and {IMAGE_EM[1]:g} em"
            return
        app.layout.image_em, app.layout.fitted = round(size, 1), False
        app.field_errors.pop("heatmap size", None)

    return set_size


def _output_picker(app) -> None:
    count = app.config.output_dim
    shown = set(range(count)) if app.layout.outputs is None else set(app.layout.outputs)
    imgui.text_colored(MUTED, "rows")
    for o in range(count):
        imgui.same_line()
        changed, on = imgui.checkbox(f"f{o + 1}", o in shown)
        app.remember(f"show f{o + 1}")
        if changed:
            shown = shown | {o} if on else shown - {o}
            shown = shown or {o}  # at least one row stays
            app.layout.outputs = None if len(shown) == count else sorted(shown)


def _contour_controls(app) -> None:
    """Contours over the value panels (a distance field's look), and the isolines' spacing, live
    as typed; they are the heatmaps' own setting, which a new network keeps."""
    images = app.session.heatmaps
    contours = images.contours
    changed, shown = imgui.checkbox("contours", contours.shown)
    app.remember("contours")
    if imgui.is_item_hovered():
        imgui.set_tooltip("values in a diverging map, white at 0,\nwith the zero level and isolines drawn")
    if changed:
        images.contours = Contours(shown, contours.spacing)
    if not contours.shown:
        return
    imgui.same_line()
    imgui.set_next_item_width(em(6.5))  # its - and + buttons and four digits
    changed, spacing = imgui.input_float("spacing", contours.spacing, 0.05, 0.25, "%.3g")
    app.remember("contour spacing")
    if changed:
        if math.isfinite(spacing) and spacing >= 0:
            images.contours = Contours(True, spacing)
            app.field_errors.pop("contour spacing", None)
        else:
            app.field_errors["contour spacing"] = "the isolines' spacing must be 0 (none) or more"
    field_error(app, "contour spacing")


def draw(app) -> None:
    if app.session.trainer.data is not None:  # points: the data view instead of the heatmaps
        data.draw_source(app)
        shapes.draw_source(app)
        imgui.separator()
        data.draw_view(app)
        return
    _view_picker(app)
    _output_picker(app)
    image = app.session.image is not None
    if not image:  # an image's values are its pixels, not levels of a function
        imgui.same_line(0, em(1.5))
        _contour_controls(app)
    plan = app.session.trainer.plan
    shape = plan.sdf is not None or plan.mesh is not None  # its one row is named, not an expression
    if image or not shape:
        (image_view.draw_source if image else targets.draw_source)(app)
    shapes.draw_source(app)
    data.draw_source(app)
    imgui.separator()
    passing = _evaluating(app)
    session = app.session
    if session.config.dims == 3:  # a function of (x, y, z): which of its slices the rows show
        _slice_controls(app)
    if image and app.view == 0:  # an image's values: at its own resolution
        image_view.draw(app)
        return
    _fit(app)
    spacing, columns = imgui.get_style().item_spacing.x, app.layout.columns
    row_width = columns * em(app.layout.image_em) + em(app.layout.bar_em + 3.6) + (columns - 1) * spacing
    draw_heatmaps(
        app.renderer,
        session.heatmaps,
        session.config.target_labels(),
        session.error_max,
        session.invalid_cells,
        _extent(app),
        app.layout,
        app.view,
        _lookup(app),
        None if image or shape else targets.row_title(app, imgui.get_cursor_pos_x() + em(2.5) + row_width),
        app.rects,
        _axes(app),
    )
    if not (image or shape):
        targets.draw_after_rows(app)
    _measure(app, passing)


def _evaluating(app) -> float:
    """A line while the grid's first evaluation is under way; the height it took (it goes)."""
    evaluator = app.session.evaluator
    if evaluator.passes > 0:
        return 0.0
    # A wide network on a slow device evaluates over many frames
    imgui.text_colored(
        MUTED,
        f"evaluating the {evaluator.grid}x{evaluator.grid} grid: {100 * evaluator.progress / evaluator.units:.0f}%",
    )
    return imgui.get_text_line_height_with_spacing()


def _shown_rows(app) -> int:
    return app.config.output_dim if app.layout.outputs is None else len(app.layout.outputs)


def _image_lines(columns: int, rows: int) -> tuple[int, int]:
    """(lines of images, title lines beyond the one above the rows) for `rows` at `columns`
    images a line: a wrapped row's lines are each titled."""
    lines = rows * len(line_panels(columns))
    return lines, 0 if columns == 3 else lines - 1


def _fit(app) -> None:
    """While the size follows the window: the side and the images a line (3, or a row wrapped
    into lines of 2 or 1) at which the shown rows fill the panel's height with the largest maps,
    from what the panel held besides its images when last drawn; no wider a panel than
    FITTED_WIDTH of the window's width. One output's three maps in a line left 60% of the panel
    empty at 1280 x 800. Fitted again only when the panel's height, the window's width or the
    rows change: a message that comes and goes under a row (a target's error while typing)
    scrolls the panel instead of resizing every heatmap and the panels beside them."""
    layout = app.layout
    if not layout.fitted:
        return
    if layout.besides_images is None:  # the first frame: measured at whole pixels, as fitted
        layout.image_em = math.floor(em(layout.image_em)) / em()
        return
    # Fitted again too after a fit measured at a size of a fraction of a pixel (the user's, before
    # View > Reset layout), where ImGui's rounding of each line made the measure a pixel or two out
    whole = abs(em(layout.image_em) - round(em(layout.image_em))) < 1e-3
    # The contours' legend is a line above the rows while they are shown
    legend = app.view == 0 and app.session.heatmaps.contours.shown
    key = (imgui.get_window_height(), imgui.get_main_viewport().work_size.x, _shown_rows(app), legend, whole)
    if layout.fitted_for in (key, key[:4] + (True,)):
        return
    layout.fitted_for = key
    viewport, title = imgui.get_main_viewport(), imgui.get_text_line_height_with_spacing()
    right = viewport.work_pos.x + viewport.work_size.x - imgui.get_window_pos().x  # the widest it gets
    width = min(FITTED_WIDTH * viewport.work_size.x, MOST_SHARE * right)
    best = None
    for columns in (3, 2, 1):  # the most images a line, of those that give the largest side
        lines, titles = _image_lines(columns, _shown_rows(app))
        by_height = (imgui.get_window_height() - layout.besides_images - titles * title) / lines
        by_width = (width - em(WIDTH_BESIDES_EM if columns == 3 else WRAPPED_BESIDES_EM)) / columns
        # Whole pixels: ImGui rounds each line's height down, and a fraction flipped the size
        # between two values frame after frame
        side = math.floor(min(by_height, by_width, em(FITTED_EM[1])))
        if best is None or side > best[0]:
            best = (side, columns)
    layout.image_em, layout.columns = max(best[0], em(FITTED_EM[0])) / em(), best[1]


def _measure(app, passing: float) -> None:
    """After the rows: the height of the panel's content besides its images (rows' titles,
    the controls above them), which does not change with their size; less the `passing` line
    of the first evaluation."""
    lines, titles = _image_lines(app.layout.columns, _shown_rows(app))
    images = lines * em(app.layout.image_em) + titles * imgui.get_text_line_height_with_spacing()
    app.layout.besides_images = drawn_height() - passing - images


def wanted_width(app) -> float:
    """The panel's width for a line of images and what a line holds besides them."""
    columns = app.layout.columns
    return em(columns * app.layout.image_em + (WIDTH_BESIDES_EM if columns == 3 else WRAPPED_BESIDES_EM))
