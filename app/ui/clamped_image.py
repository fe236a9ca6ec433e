"""An atlas' image without its neighbours' texels. SlangPy's ImGui renderer samples through one
linear sampler that wraps (sgl's ui::Context; it cannot be set), so a magnified image's outer
pixels blended in the next image of the atlas, or the atlas' far side (a 1-pixel stripe down the
left of every ground truth). Nine quads sample as clamp-to-edge would: the outer half texel holds
the edge texels' colour, the inside runs between texel centres."""

from __future__ import annotations

from imgui_bundle import imgui


def _splits(low: float, high: float, t0: float, t1: float, texels: int) -> tuple[list[float], list[float]]:
    """Positions and texture coordinates of the nine quads' edges along one axis: the image's
    edge, half a texel in, half a texel from the far edge, the far edge."""
    half, centre = (high - low) / texels / 2, (t1 - t0) / texels / 2
    return [low, low + half, high - half, high], [t0 + centre, t0 + centre, t1 - centre, t1 - centre]


def add_clamped_image(
    draw_list: imgui.ImDrawList,
    texture: imgui.ImTextureRef,
    lo: imgui.ImVec2,
    hi: imgui.ImVec2,
    uv0: imgui.ImVec2,
    uv1: imgui.ImVec2,
    texels: tuple[int, int],
) -> None:
    """The atlas region `uv0`-`uv1`, `texels` (columns, rows) of it, drawn over `lo`-`hi`."""
    xs, us = _splits(lo.x, hi.x, uv0.x, uv1.x, texels[0])
    ys, vs = _splits(lo.y, hi.y, uv0.y, uv1.y, texels[1])
    for i in range(3):
        for j in range(3):
            draw_list.add_image(
                texture,
                imgui.ImVec2(xs[i], ys[j]),
                imgui.ImVec2(xs[i + 1], ys[j + 1]),
                imgui.ImVec2(us[i], vs[j]),
                imgui.ImVec2(us[i + 1], vs[j + 1]),
            )


def clamped_image(
    texture: imgui.ImTextureRef, size: imgui.ImVec2, uv0: imgui.ImVec2, uv1: imgui.ImVec2, texels: tuple[int, int]
) -> None:
    """As imgui.image at the cursor (an item of `size`, hovered as one), clamped."""
    lo = imgui.get_cursor_screen_pos()
    add_clamped_image(
        imgui.get_window_draw_list(), texture, lo, imgui.ImVec2(lo.x + size.x, lo.y + size.y), uv0, uv1, texels
    )
    imgui.dummy(size)
