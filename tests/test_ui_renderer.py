"""The UI renderer backends (app.ui.renderer): our draw-data renderer (app.ui.imgui_draw) draws
known shapes in the expected colours, and it draws the same pixels as SlangPy's own renderer."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

imgui = pytest.importorskip("imgui_bundle").imgui
spy = pytest.importorskip("slangpy")

from app.ui.imgui_draw import INDEX_BYTES, VERTEX_BYTES  # noqa: E402
from app.ui.renderer import UiRenderer  # noqa: E402

W, H = 96, 64
BACKGROUND = (0.0, 0.0, 1.0, 1.0)  # cleared as stored values: blue 255 in an rgba8 target
RECT = (200, 100, 50, 255)
HALF_RED = (255, 0, 0, 128)
IMAGE_LINEAR = (0.2, 0.5, 0.8, 1.0)  # our heatmap textures store linear colour


def _encode_srgb(c: float) -> float:
    return c * 12.92 if c < 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055


def _u32(r, g, b, a) -> int:
    return r | g << 8 | b << 16 | a << 24  # ImU32 is ABGR: red in the low byte


def _render(device, backend: str, target_format=spy.Format.rgba8_unorm) -> np.ndarray:
    renderer = UiRenderer(device, W, H, backend=backend)
    image = device.create_texture(format=spy.Format.rgba32_float, width=4, height=4,
                                  usage=spy.TextureUsage.shader_resource,
                                  data=np.tile(np.array(IMAGE_LINEAR, np.float32), (4, 4, 1)))
    target = device.create_texture(format=target_format, width=W, height=H,
                                   usage=spy.TextureUsage.render_target | spy.TextureUsage.shader_resource
                                   | spy.TextureUsage.copy_source | spy.TextureUsage.copy_destination)
    try:
        for _ in range(2):  # the first frame creates the font atlas; draw the scene twice alike
            renderer.begin_frame(W, H, 1 / 60)
            draw = imgui.get_foreground_draw_list()
            draw.add_rect_filled(imgui.ImVec2(4, 4), imgui.ImVec2(28, 20), _u32(*RECT))
            draw.add_rect_filled(imgui.ImVec2(40, 4), imgui.ImVec2(60, 20), _u32(*HALF_RED))
            draw.add_image(renderer.texture(image), imgui.ImVec2(64, 4), imgui.ImVec2(92, 28))
            draw.push_clip_rect(imgui.ImVec2(4, 30), imgui.ImVec2(16, 60))  # clips the rect at x = 16
            draw.add_rect_filled(imgui.ImVec2(4, 30), imgui.ImVec2(28, 40), _u32(*RECT))
            draw.pop_clip_rect()
            draw.add_text(imgui.ImVec2(40, 40), _u32(255, 255, 255, 255), "Hg")
            encoder = device.create_command_encoder()
            encoder.clear_texture_float(target, clear_value=list(BACKGROUND))
            renderer.end_frame(target, encoder)
            device.submit_command_buffer(encoder.finish())
        return target.to_numpy().astype(int)
    finally:
        renderer.destroy()


@pytest.fixture(scope="module")
def ours(device):
    return _render(device, "ours")


def test_index_and_vertex_sizes_match_imgui_bundle():
    """Our upload copies ImDrawVert/ImDrawIdx memory as raw bytes: check their sizes."""
    context = imgui.create_context()
    try:
        imgui.get_io().set_ini_filename("")  # write no imgui.ini into the working directory
        imgui.get_io().display_size = imgui.ImVec2(W, H)
        imgui.get_io().backend_flags |= imgui.BackendFlags_.renderer_has_textures
        imgui.get_io().fonts.add_font_default()
        imgui.new_frame()
        draw = imgui.get_foreground_draw_list()
        draw.add_rect_filled(imgui.ImVec2(1, 2), imgui.ImVec2(30, 40), _u32(*RECT))
        indices = [draw.idx_buffer[i] for i in range(draw.idx_buffer.size())]
        raw = ctypes.string_at(draw.idx_buffer.data_address(), len(indices) * INDEX_BYTES)
        assert np.frombuffer(raw, {2: np.uint16, 4: np.uint32}[INDEX_BYTES]).tolist() == indices
        vertices = ctypes.string_at(draw.vtx_buffer.data_address(), 2 * VERTEX_BYTES)
        second = draw.vtx_buffer[1]
        pos = np.frombuffer(vertices[VERTEX_BYTES:VERTEX_BYTES + 8], np.float32)
        col = np.frombuffer(vertices[VERTEX_BYTES + 16:VERTEX_BYTES + 20], np.uint32)[0]
        assert (pos.tolist(), int(col)) == ([second.pos.x, second.pos.y], second.col)
        imgui.end_frame()
    finally:
        imgui.destroy_context(context)


def test_solid_rect_keeps_its_srgb_colour(ours):
    # sRGB vertex colour -> linear -> sRGB again in an rgba8_unorm target: the bytes asked for.
    assert ours[12, 16].tolist() == list(RECT)
    assert ours[2, 16].tolist() == [0, 0, 255, 255], "nothing drawn outside the rect"


def test_half_transparent_rect_blends_over_background(ours):
    a = HALF_RED[3] / 255
    expected = [round(255 * a), 0, round(255 * (1 - a)), 255]  # src alpha, one minus src alpha
    assert np.abs(ours[12, 50] - expected).max() <= 1


def test_image_shows_linear_texture_as_srgb(ours):
    expected = [round(255 * _encode_srgb(c)) for c in IMAGE_LINEAR[:3]] + [255]
    assert np.abs(ours[16, 78] - expected).max() <= 1


def test_clip_rect_scissors(ours):
    assert ours[35, 10].tolist() == list(RECT)
    assert ours[35, 20].tolist() == [0, 0, 255, 255], "the part right of the clip rect is not drawn"


def test_text_is_drawn_crisp(ours):
    red = ours[40:58, 40:60, 0]  # white text over blue: red is the glyph coverage, sRGB-encoded
    assert (red >= 200).sum() >= 20 and red.max() >= 250, "glyph stems reach the text colour"
    rows = np.nonzero(red.max(axis=1) > 0)[0]
    assert rows.max() - rows.min() < 16, "glyphs are not smeared over the line"
    assert np.all(ours[40:58, 62:90] == [0, 0, 255, 255]), "nothing to the right of the text"


@pytest.mark.parametrize("target_format", [spy.Format.rgba8_unorm, spy.Format.rgba8_unorm_srgb])
def test_backends_agree(device, target_format):
    ours = _render(device, "ours", target_format)
    theirs = _render(device, "slangpy", target_format)
    difference = np.abs(ours - theirs)
    assert difference.mean() < 0.05 and difference.max() <= 2
