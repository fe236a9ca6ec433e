"""heatmaps.png for headless runs: the heatmap rows rendered offscreen by the UI renderer."""

from __future__ import annotations

from imgui_bundle import imgui

from app.heatmaps import HeatmapImages
from app.ui.heatmap_view import HeatmapLayout, draw_heatmaps
from app.ui.renderer import UiRenderer, create_target, save_png
from app.ui.style import MUTED, em

_FLAGS = (imgui.WindowFlags_.no_decoration | imgui.WindowFlags_.no_move | imgui.WindowFlags_.no_saved_settings
          | imgui.WindowFlags_.no_background)


def _layout(renderer, images, title, subtitle, error_max, width, height) -> imgui.ImVec2:
    """One ImGui frame of the report; returns the size its content wants."""
    renderer.begin_frame(width, height, 1 / 60)
    imgui.set_next_window_pos(imgui.ImVec2(0, 0))
    imgui.begin("report", None, _FLAGS | imgui.WindowFlags_.always_auto_resize)
    imgui.text(title)
    imgui.text_colored(MUTED, subtitle)
    imgui.dummy(imgui.ImVec2(0, em(0.3)))
    draw_heatmaps(renderer, images, images.trainer.config.targets, error_max, HeatmapLayout(image_em=9.0))
    size = imgui.get_window_size()
    imgui.end()
    return size


def write_heatmaps_png(images: HeatmapImages, title: str, subtitle: str, path: str) -> None:
    device = images.trainer.device
    encoder = device.create_command_encoder()
    images.record(encoder)
    device.submit_command_buffer(encoder.finish())
    error_max = images.error_max()
    renderer = UiRenderer(device, 4096, 4096)
    try:
        # Auto-resizing settles over two frames; the third is drawn at exactly that size.
        size = imgui.ImVec2(4096, 4096)
        for _ in range(2):
            size = _layout(renderer, images, title, subtitle, error_max, 4096, 4096)
            imgui.render()
        width, height = int(size.x), int(size.y)
        target = create_target(device, width, height)
        _layout(renderer, images, title, subtitle, error_max, width, height)
        encoder = device.create_command_encoder()
        encoder.clear_texture_float(target, clear_value=[0.09, 0.10, 0.12, 1.0])
        renderer.end_frame(target, encoder)
        device.submit_command_buffer(encoder.finish())
        save_png(target, path)
    finally:
        renderer.destroy()
