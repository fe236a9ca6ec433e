"""heatmaps.png for headless runs: the heatmap rows rendered offscreen by the UI renderer (values with
their contours, then the |gradient| rows; a distance field's two checks); for a dataset, the data
view with its legend; for an image, the truth, the learned image and the error map with its colour
bar, as the window's Heatmaps panel shows them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import slangpy as spy
from imgui_bundle import imgui

from .. import datasets
from ..files.run_summary import image_text, metrics_text
from ..kernels.view_constants import GRADIENT_VIEW
from ..views.heatmaps import PANELS, HeatmapImages
from . import fonts
from .data_images import ImageLayout, Scale, draw_data_images
from .heatmap_view import BAR_COLUMNS, HeatmapLayout, colorbar, draw_heatmaps
from .image_view import panels_texture, record_panels
from .renderer import UiRenderer, create_target, save_png
from .style import MUTED, em

IMAGE_PANEL_PX = 360  # the longer side of each of an image's panels

_FLAGS = (
    imgui.WindowFlags_.no_decoration
    | imgui.WindowFlags_.no_move
    | imgui.WindowFlags_.no_saved_settings
    | imgui.WindowFlags_.no_background
)


@dataclass
class ImagePanels:
    """An image target's truth | learned | error panels, drawn by drawImageView into `texture`."""

    texture: spy.Texture
    side: tuple[int, int]  # each panel's size in pixels
    error_top: float  # the error map's top, its colour bar's


def image_zoom(width: int, height: int) -> float:
    """Pixels of heatmaps.png an image pixel: a whole number for an image smaller than
    IMAGE_PANEL_PX along its longer side (each pixel an even block), else the image shrunk to it."""
    longest = max(width, height)
    return float(IMAGE_PANEL_PX // longest) if longest <= IMAGE_PANEL_PX else IMAGE_PANEL_PX / longest


def _image_panels(session) -> ImagePanels:
    """The image panels of the session's network now (a pass first where the last is older)."""
    image = session.image
    if image.stale():
        image.evaluate()
    zoom = image_zoom(image.width, image.height)
    side = (max(1, round(image.width * zoom)), max(1, round(image.height * zoom)))
    texture = panels_texture(session.gpu.device, 3 * side[0], side[1])
    with session.gpu.submit() as encoder:
        record_panels(encoder, session, texture, side, (0.0, 0.0), zoom)
    return ImagePanels(texture, side, image.error_top)


def _draw_image_panels(renderer, images: HeatmapImages, panels: ImagePanels, channels: int) -> None:
    """The three panels, each centred under its title in a column as wide as the wider of the
    two (a tall image's panels are narrower than "mean |error| of channels"), then the bar."""
    texture, (width, height) = renderer.texture(panels.texture), panels.side
    titles = (PANELS[0], PANELS[1], "mean |error| of channels" if channels > 1 else "|error|")
    column = max(width, *(imgui.calc_text_size(title).x for title in titles))
    for k, title in enumerate(titles):
        if k:
            imgui.same_line()
        imgui.begin_group()
        left = imgui.get_cursor_pos_x()
        imgui.set_cursor_pos_x(left + (column - imgui.calc_text_size(title).x) / 2)
        imgui.text_colored(MUTED, title)
        imgui.set_cursor_pos_x(left + (column - width) / 2)
        imgui.image(texture, imgui.ImVec2(width, height), imgui.ImVec2(k / 3, 0), imgui.ImVec2((k + 1) / 3, 1))
        imgui.end_group()
    imgui.same_line()
    imgui.begin_group()
    imgui.dummy(imgui.ImVec2(0, imgui.get_text_line_height()))  # level with the panels, under their titles
    bar = em(0.8)
    colorbar(renderer, images, BAR_COLUMNS["error"], 0.0, panels.error_top, height, bar)
    imgui.end_group()
    # The tick labels are drawn beside the bar, outside any item: their width is reserved so that
    # the auto-sized report includes them.
    imgui.same_line(0, 0)
    imgui.dummy(imgui.ImVec2(em(3.6), height))


def _layout(
    renderer, images, title, subtitle, evaluation, width, height, panels=None
) -> tuple[imgui.ImVec2, list[Scale]]:
    """One ImGui frame of the report; returns the size its content wants and the data view's
    colour scales (none for heatmaps, whose bars are per row, nor for an image)."""
    renderer.begin_frame(width, height, 1 / 60)
    imgui.set_next_window_pos(imgui.ImVec2(0, 0))
    imgui.begin("report", None, _FLAGS | imgui.WindowFlags_.always_auto_resize)
    imgui.text(title)
    imgui.text_colored(MUTED, subtitle)
    imgui.dummy(imgui.ImVec2(0, em(0.3)))
    config = images.evaluator.trainer.config
    if panels is not None:
        _draw_image_panels(renderer, images, panels, config.output_dim)
        size = imgui.get_window_size()
        imgui.end()
        return size, []
    if images.data_view is not None:
        drawn = _data_view(renderer, images.data_view, config.domain)
        size = imgui.get_window_size()
        imgui.end()
        return size, drawn
    views = (0, GRADIENT_VIEW) if images.contours.shown else (0,)
    for view in views:
        if view:
            imgui.dummy(imgui.ImVec2(0, em(0.6)))
        draw_heatmaps(
            renderer,
            images,
            config.target_labels(),
            evaluation.error_max,
            evaluation.invalid,
            config.domain,
            HeatmapLayout(image_em=9.0),
            view,
        )
    size = imgui.get_window_size()
    imgui.end()
    return size, []


def _data_view(renderer, view, domain) -> list[Scale]:
    """The data view's images, large; more than two value columns smaller, four a row."""
    imgui.set_cursor_pos_x(imgui.get_cursor_pos_x() + em(2.2))  # room for y's labels
    layout = ImageLayout(em(24) if view.images <= 2 else em(16), below=True, columns=min(view.images, 4))
    return draw_data_images(renderer, view, domain, layout)


def write_heatmaps_png(
    images: HeatmapImages, title: str, subtitle: str, path: str, panels: ImagePanels | None = None
) -> list[Scale]:
    """Draws the heatmaps of the current network, or an image target's `panels`, and saves them,
    titled, with colour bars; returns the data view's scales as drawn (tests)."""
    gpu = images.evaluator.trainer.gpu
    device = gpu.device
    images.draw_now()
    evaluation = images.evaluator.read()
    fonts.want(title, subtitle)  # their fonts merged before the first frame, which sizes the picture
    fonts.want_config(images.evaluator.trainer.config)
    renderer = UiRenderer(device, 4096, 4096)
    try:
        # Auto-resizing settles over two frames; the third is drawn at exactly that size.
        size = imgui.ImVec2(4096, 4096)
        for _ in range(2):
            size, _ = _layout(renderer, images, title, subtitle, evaluation, 4096, 4096, panels)
            imgui.render()
        width, height = int(size.x), int(size.y)
        target = create_target(device, width, height)
        _, drawn = _layout(renderer, images, title, subtitle, evaluation, width, height, panels)
        with gpu.submit() as encoder:
            encoder.clear_texture_float(target, clear_value=[0.09, 0.10, 0.12, 1.0])
            renderer.end_frame(target, encoder)
        save_png(target, path)
    finally:
        renderer.destroy()
    return drawn


def _slice_text(session) -> str:
    """Where a function of (x, y, z) is cut for its heatmaps (none in 2D)."""
    config = session.config
    if config.dims == 2:
        return ""
    return f", {session.evaluator.slice.caption(config.domain, config.z_range)}"


def write_run_heatmaps(session, path) -> list[Scale]:
    """heatmaps.png of a headless run, to `path`, titled with what was trained; returns the data
    view's scales as drawn."""
    plan, config = session.trainer.plan, session.config
    title = (
        f"Slang Visual Trainer - {session.trainer.step} steps, {plan.title}, {config.activation}, {config.precision}"
    )
    x0, x1, y0, y1 = config.domain
    subtitle = (
        f"eval loss {session.eval_loss:.4g} on a {session.grid}x{session.grid} grid; x in [{x0:g}, {x1:g}] "
        f"left to right, y in [{y0:g}, {y1:g}] bottom to top{_slice_text(session)}\n"
        f"truth and learned share each row's value scale; |error| has its own"
    )
    if session.image is not None:  # an image: its figures, and the image itself in true colour
        image, mean = session.image, ", the mean over its channels" if config.output_dim > 1 else ""
        subtitle = (
            f"{Path(config.image['file']).name}: {image_text(image)}\n"
            f"truth and learned in true colour; the error map: each pixel's |error|{mean}"
        )
        return write_heatmaps_png(session.heatmaps, title, subtitle, str(path), _image_panels(session))
    if session.metrics is not None:  # a dataset: its figures, and its points over the function
        dataset = session.trainer.data.dataset
        subtitle = (
            f"{metrics_text(session.metrics)}\n{dataset.count:,} points of {datasets.describe(dataset.source)}, "
            f"{dataset.train_count:,} to train; x in [{x0:g}, {x1:g}], y in [{y0:g}, {y1:g}]"
        )
    return write_heatmaps_png(session.heatmaps, title, subtitle, str(path))
