"""heatmaps.png for headless runs: the heatmap rows rendered offscreen by the UI renderer."""

from __future__ import annotations

from imgui_bundle import imgui

from app.heatmaps import HeatmapImages
from app.ui.heatmap_view import HeatmapLayout, draw_heatmaps
from app.ui.renderer import UiRenderer, create_target, save_png
from app.ui.style import MUTED, em

_FLAGS = (imgui.WindowFlags_.no_decoration | imgui.WindowFlags_.no_move | imgui.WindowFlags_.no_saved_settings
          | imgui.WindowFlags_.no_background)


def write_heatmaps_png(images: HeatmapImages, title: str, subtitle: str, path: str) -> None:
    trainer = images.trainer
    device, targets = trainer.device, trainer.config.targets
    encoder = device.create_command_encoder()
    images.record(encoder)
    device.submit_command_buffer(encoder.finish())
    error_max = images.error_max()
    width = 600
    height = int(90 + len(targets) * 172)
    renderer = UiRenderer(device, width, height, font_scale=1.0)
    try:
        target = create_target(device, width, height)
        for _ in range(2):  # the first frame measures text; the second lays out with it
            renderer.begin_frame(width, height, 1 / 60)
            imgui.set_next_window_pos(imgui.ImVec2(0, 0))
            imgui.set_next_window_size(imgui.ImVec2(width, height))
            imgui.begin("report", None, _FLAGS)
            imgui.text(title)
            imgui.text_colored(MUTED, subtitle)
            imgui.dummy(imgui.ImVec2(0, em(0.3)))
            draw_heatmaps(renderer, images, targets, error_max, HeatmapLayout(image_em=10.0))
            imgui.end()
            encoder = device.create_command_encoder()
            encoder.clear_texture_float(target, clear_value=[0.09, 0.10, 0.12, 1.0])
            renderer.end_frame(target, encoder)
            device.submit_command_buffer(encoder.finish())
        save_png(target, path)
    finally:
        renderer.destroy()
