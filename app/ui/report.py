"""heatmaps.png for headless runs: the heatmap rows rendered offscreen by the UI renderer; for a
dataset, the data view (its points over the learned function) with its legend."""

from __future__ import annotations

from imgui_bundle import imgui

from .. import datasets
from ..files.run_summary import metrics_text
from ..views.heatmaps import HeatmapImages
from .data_images import ImageLayout, Scale, draw_data_images
from .heatmap_view import HeatmapLayout, draw_heatmaps
from .renderer import UiRenderer, create_target, save_png
from .style import MUTED, em

_FLAGS = (
    imgui.WindowFlags_.no_decoration
    | imgui.WindowFlags_.no_move
    | imgui.WindowFlags_.no_saved_settings
    | imgui.WindowFlags_.no_background
)


def _layout(renderer, images, title, subtitle, evaluation, width, height) -> tuple[imgui.ImVec2, list[Scale]]:
    """One ImGui frame of the report; returns the size its content wants and the data view's
    colour scales (none for heatmaps, whose bars are per row)."""
    renderer.begin_frame(width, height, 1 / 60)
    imgui.set_next_window_pos(imgui.ImVec2(0, 0))
    imgui.begin("report", None, _FLAGS | imgui.WindowFlags_.always_auto_resize)
    imgui.text(title)
    imgui.text_colored(MUTED, subtitle)
    imgui.dummy(imgui.ImVec2(0, em(0.3)))
    config = images.evaluator.trainer.config
    if images.data_view is not None:
        drawn = _data_view(renderer, images.data_view, config.domain)
        size = imgui.get_window_size()
        imgui.end()
        return size, drawn
    draw_heatmaps(
        renderer,
        images,
        config.target_labels(),
        evaluation.error_max,
        evaluation.invalid,
        config.domain,
        HeatmapLayout(image_em=9.0),
    )
    size = imgui.get_window_size()
    imgui.end()
    return size, []


def _data_view(renderer, view, domain) -> list[Scale]:
    """The data view's images, large; more than two value columns smaller, four a row."""
    imgui.set_cursor_pos_x(imgui.get_cursor_pos_x() + em(2.2))  # room for y's labels
    layout = ImageLayout(em(24) if view.images <= 2 else em(16), below=True, columns=min(view.images, 4))
    return draw_data_images(renderer, view, domain, layout)


def write_heatmaps_png(images: HeatmapImages, title: str, subtitle: str, path: str) -> list[Scale]:
    """Draws the heatmaps of the current network and saves them, titled, with colour bars;
    returns the data view's scales as drawn (tests)."""
    gpu = images.evaluator.trainer.gpu
    device = gpu.device
    images.draw_now()
    evaluation = images.evaluator.read()
    renderer = UiRenderer(device, 4096, 4096)
    try:
        # Auto-resizing settles over two frames; the third is drawn at exactly that size.
        size = imgui.ImVec2(4096, 4096)
        for _ in range(2):
            size, _ = _layout(renderer, images, title, subtitle, evaluation, 4096, 4096)
            imgui.render()
        width, height = int(size.x), int(size.y)
        target = create_target(device, width, height)
        _, drawn = _layout(renderer, images, title, subtitle, evaluation, width, height)
        with gpu.submit() as encoder:
            encoder.clear_texture_float(target, clear_value=[0.09, 0.10, 0.12, 1.0])
            renderer.end_frame(target, encoder)
        save_png(target, path)
    finally:
        renderer.destroy()
    return drawn


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
        f"left to right, y in [{y0:g}, {y1:g}] bottom to top\n"
        f"truth and learned share each row's value scale; |error| has its own"
    )
    if session.metrics is not None:  # a dataset: its figures, and its points over the function
        dataset = session.trainer.data.dataset
        subtitle = (
            f"{metrics_text(session.metrics)}\n{dataset.count:,} points of {datasets.describe(dataset.source)}, "
            f"{dataset.train_count:,} to train; x in [{x0:g}, {x1:g}], y in [{y0:g}, {y1:g}]"
        )
    return write_heatmaps_png(session.heatmaps, title, subtitle, str(path))
