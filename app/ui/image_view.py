"""An image target in the Heatmaps panel: ground truth | learned | |error| at the image's own
resolution (app/views/image_eval.py's last complete pass), zoomed and panned together, pixel-exact
(each screen pixel shows the one image pixel under it: shaders/views/image_eval.slang's
drawImageView), with the values under the mouse and the PSNR. Wheel: zoom about the mouse;
drag: pan; "fit" and "1:1" set the zoom."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import slangpy as spy
from imgui_bundle import imgui

from ..config.config import Config
from ..errors import UserError
from ..truth import image_truth
from ..views.heatmaps import PANELS
from .heatmap_view import BAR_COLUMNS, colorbar
from .style import MUTED, em

BACKGROUND = (0.09, 0.10, 0.12)  # the window's, outside the image
TEXTURE_STEP = 256  # the view's texture grows in these steps: not a new texture at every resize
WHEEL_ZOOM = 1.25
MAX_ZOOM = 64.0


@dataclass
class ImageViewState:
    zoom: float | None = None  # screen pixels per image pixel; None: fit the panel
    centre: tuple[float, float] | None = None  # the image coordinates at a panel's centre
    image: str = ""  # the sha256 the view is for: a new image fits again
    texture: spy.Texture | None = None
    drawn: tuple = ()  # what the texture shows: (pass, zoom, centre, size)
    learned: tuple[int, np.ndarray | None] = (-1, None)  # the pass read back for hover values


def _state(app) -> ImageViewState:
    state = getattr(app, "image_view", None)
    if state is None:
        state = app.image_view = ImageViewState()
    return state


def _zoom(state: ImageViewState, width: int, height: int, side: tuple[int, int]) -> tuple[float, tuple[float, float]]:
    fit = min(side[0] / width, side[1] / height)
    zoom = fit if state.zoom is None else state.zoom
    centre = state.centre if state.centre is not None else (width / 2, height / 2)
    return zoom, centre


def _texture(app, state: ImageViewState, size: tuple[int, int]) -> spy.Texture:
    need = (3 * size[0], size[1])
    texture = state.texture
    if texture is None or texture.width < need[0] or texture.height < need[1]:
        width = -(-need[0] // TEXTURE_STEP) * TEXTURE_STEP
        height = -(-need[1] // TEXTURE_STEP) * TEXTURE_STEP
        state.texture = panels_texture(app.gpu.device, width, height)
        state.drawn = ()
    return state.texture


def panels_texture(device: spy.Device, width: int, height: int) -> spy.Texture:
    """A texture drawImageView writes and the UI shows (record_panels)."""
    usage = spy.TextureUsage.unordered_access | spy.TextureUsage.shader_resource
    return device.create_texture(format=spy.Format.rgba16_float, width=width, height=height, usage=usage)


def _queue_draw(app, state: ImageViewState, side: tuple[int, int], zoom: float, centre) -> None:
    """Records drawImageView into this frame's encoder when what it shows has changed."""
    session = app.session
    evaluator = session.image
    key = (evaluator.passes, id(evaluator), zoom, centre, side)
    if state.drawn == key:
        return
    state.drawn = key
    texture = _texture(app, state, side)
    origin = (centre[0] - side[0] / (2 * zoom), centre[1] - side[1] / (2 * zoom))
    app.gpu_draws.append(lambda encoder: record_panels(encoder, session, texture, side, origin, zoom))


def record_panels(encoder: spy.CommandEncoder, session, texture, side, origin, zoom: float) -> None:
    """Records drawImageView: truth | learned | mean |error| of the last complete pass, side by
    side in `texture`, each `side` pixels, showing the image from pixel `origin` at `zoom`
    screen pixels an image pixel (also heatmaps.png's, app/ui/report.py)."""
    evaluator = session.image
    session.trainer.kernels.draw_image_view.dispatch(
        [3 * side[0], side[1], 1],
        command_encoder=encoder,
        truthPixels=session.trainer.truth_pixels.device_address,
        learned=evaluator.complete.learned.device_address,
        side=spy.uint2(*side),
        origin=spy.float2(*origin),
        zoom=zoom,
        errorTop=evaluator.error_top,
        background=spy.float3(*BACKGROUND),
        view=texture,
    )


def _controls(app, state: ImageViewState, zoom: float) -> None:
    evaluator = app.session.image
    psnr = f"PSNR {evaluator.psnr:.2f} dB" if math.isfinite(evaluator.psnr) else "PSNR -"
    image = app.config.image
    imgui.text(psnr)
    imgui.same_line()
    imgui.text_colored(MUTED, f"{image['width']}x{image['height']}, zoom {zoom * 100:.0f}%")
    imgui.same_line()
    if imgui.small_button("fit"):
        state.zoom = state.centre = None
    app.remember("image fit")
    imgui.same_line()
    if imgui.small_button("1:1"):
        state.zoom = 1.0
    app.remember("image 1:1")


def _interact(app, state: ImageViewState, start: imgui.ImVec2, side, zoom: float, centre) -> None:
    """Wheel zoom about the mouse, drag to pan; the tooltip of the pixel under the mouse."""
    image = app.config.image
    io = imgui.get_io()
    mouse = imgui.get_mouse_pos()
    local = (mouse.x - start.x, mouse.y - start.y)
    origin = (centre[0] - side[0] / (2 * zoom), centre[1] - side[1] / (2 * zoom))
    under = (origin[0] + local[0] / zoom, origin[1] + local[1] / zoom)
    if io.mouse_wheel:
        new = float(np.clip(zoom * WHEEL_ZOOM**io.mouse_wheel, 0.05, MAX_ZOOM))
        state.zoom = new
        state.centre = (under[0] - (local[0] - side[0] / 2) / new, under[1] - (local[1] - side[1] / 2) / new)
    elif imgui.is_item_active() and imgui.is_mouse_dragging(0):
        state.zoom = zoom
        state.centre = (centre[0] - io.mouse_delta.x / zoom, centre[1] - io.mouse_delta.y / zoom)
    column, row = int(math.floor(under[0])), int(math.floor(under[1]))
    if 0 <= column < image["width"] and 0 <= row < image["height"]:
        _tooltip(app, state, column, row)


def _tooltip(app, state: ImageViewState, column: int, row: int) -> None:
    evaluator, config = app.session.image, app.config
    if state.learned[0] != evaluator.passes:  # read back once a pass, while the mouse is over it
        state.learned = (evaluator.passes, evaluator.learned())
    truth = image_truth.pixels_of(config.image)[row, column]
    learned = state.learned[1][row, column]
    x, y = (float(v[row, column]) for v in image_truth.pixel_centres(config.domain, *truth_size(config)))
    names = image_truth.CHANNEL_NAMES[len(truth)]
    lines = [f"pixel ({column}, {row})   x = {x:.3f}   y = {y:.3f}"]
    lines += [
        f"{name:6s} truth {t:.4f}   learned {v:.4f}   |error| {abs(v - t):.4f}"
        for name, t, v in zip(names, truth, learned)
    ]
    imgui.set_tooltip("\n".join(lines))


def draw_source(app) -> None:
    """Where the truth comes from: the image, and the way back to expressions."""
    image = app.config.image
    imgui.align_text_to_frame_padding()
    imgui.text_colored(MUTED, "truth")
    imgui.same_line()
    names = ", ".join(image_truth.CHANNEL_NAMES[image["channels"]])
    imgui.text(f"image {Path(image['file']).name}, {image['width']}x{image['height']} ({names})")
    imgui.same_line()
    if imgui.small_button("use expressions"):
        try:
            app.session.start_rebuild(app.config.replace(image=None, domain=list(Config().domain)))
        except UserError as error:
            app.say(f"not changed: {error}")
    app.remember("image to expressions")
    if imgui.is_item_hovered():
        imgui.set_tooltip(
            "learn the target expressions again, over the default domain\n(File > Open image... picks another image)"
        )


def truth_size(config) -> tuple[int, int]:
    return config.image["width"], config.image["height"]


def _layout(width: int, height: int) -> tuple[tuple[int, int], bool]:
    """Each panel's size, and whether the panels go two to a row (the error panel below) or all
    three in one: whichever shows the image larger in the space left."""
    spacing, bar_block = imgui.get_style().item_spacing.x, em(4.4)
    avail = imgui.get_content_region_avail()
    title = imgui.get_text_line_height_with_spacing()
    room = avail.y - imgui.get_frame_height_with_spacing()
    best = None
    for two_rows in (False, True):
        across = (
            min((avail.x - spacing) / 2, avail.x - spacing - bar_block)
            if two_rows
            else ((avail.x - 3 * spacing - bar_block) / 3)
        )
        rows = 2 if two_rows else 1
        tall = (room - rows * title - (rows - 1) * spacing) / rows
        side_w = max(em(4), min(across, tall * width / height))
        if best is None or side_w > best[0][0]:
            best = ((int(side_w), int(max(em(4), side_w * height / width))), two_rows)
    return best


def draw(app) -> None:
    """The three panels, their error scale and the controls, at the cursor."""
    state, config = _state(app), app.config
    if state.image != config.image["sha256"]:
        state.zoom, state.centre, state.image = None, None, config.image["sha256"]
    width, height = truth_size(config)
    side, two_rows = _layout(width, height)
    zoom, centre = _zoom(state, width, height, side)
    _controls(app, state, zoom)
    _queue_draw(app, state, side, zoom, centre)
    spacing = imgui.get_style().item_spacing.x
    title_h = imgui.get_text_line_height_with_spacing()
    left, top = imgui.get_cursor_pos()
    texture = app.renderer.texture(state.texture)
    u_side, v_side = side[0] / state.texture.width, side[1] / state.texture.height
    titles = (PANELS[0], PANELS[1], "mean |error| of channels")
    for k, title in enumerate(titles):
        column, row = (k % 2, k // 2) if two_rows else (k, 0)
        x, y = left + column * (side[0] + spacing), top + row * (side[1] + title_h + spacing)
        imgui.set_cursor_pos(imgui.ImVec2(x + max(0.0, (side[0] - imgui.calc_text_size(title).x) / 2), y))
        imgui.text_colored(MUTED, title)
        imgui.set_cursor_pos(imgui.ImVec2(x, y + title_h))
        start = imgui.get_cursor_screen_pos()
        imgui.image(texture, imgui.ImVec2(*side), imgui.ImVec2(k * u_side, 0), imgui.ImVec2((k + 1) * u_side, v_side))
        if k == 2:
            imgui.same_line()
            colorbar(
                app.renderer,
                app.session.heatmaps,
                BAR_COLUMNS["error"],
                0.0,
                app.session.image.error_top,
                side[1],
                em(0.8),
            )
        imgui.set_cursor_screen_pos(start)
        imgui.invisible_button(f"image view {k}", imgui.ImVec2(*side))
        app.remember("image view" if k == 0 else f"image view {k}")
        if imgui.is_item_hovered() or imgui.is_item_active():
            _interact(app, state, start, side, zoom, centre)
    rows = 2 if two_rows else 1
    imgui.set_cursor_pos(imgui.ImVec2(left, top + rows * (side[1] + title_h + spacing)))
    imgui.dummy(imgui.ImVec2(0, 0))
