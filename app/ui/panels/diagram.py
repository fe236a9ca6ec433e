"""Network diagram in the style of TensorFlow Playground: layers as columns of nodes, edges
orange for negative and blue for positive weights, thicker for larger |w|."""

from __future__ import annotations

import numpy as np
from imgui_bundle import imgui

from app.ui.style import MUTED, em

NEGATIVE = (0.96, 0.58, 0.13)   # Playground's orange
POSITIVE = (0.03, 0.47, 0.74)   # Playground's blue
MAX_NODES = 16                  # per column; wider layers show their first nodes and "+N"


def _colour(weight: float, alpha: float) -> int:
    r, g, b = NEGATIVE if weight < 0 else POSITIVE
    return imgui.get_color_u32(imgui.ImVec4(r, g, b, alpha))


def _legend(scale: float) -> None:
    draw = imgui.get_window_draw_list()
    for label, weight in (("negative weight", -1.0), ("positive weight", 1.0)):
        p = imgui.get_cursor_screen_pos()
        y = p.y + imgui.get_text_line_height() / 2
        draw.add_line(imgui.ImVec2(p.x, y), imgui.ImVec2(p.x + em(1.5), y), _colour(weight, 1.0), em(0.2))
        imgui.dummy(imgui.ImVec2(em(1.7), imgui.get_text_line_height()))
        imgui.same_line()
        imgui.text(label)
        imgui.same_line(0, em(1))
    imgui.new_line()
    imgui.text_colored(MUTED, f"line width ~ |weight|; widest = {scale:.3g}")


def draw(app) -> None:
    plan, params = app.session.trainer.plan, app.diagram_weights()
    sizes = plan.sizes
    scale = max(float(np.max(np.abs(params))) if params.size else 1.0, 1e-6)
    _legend(scale)
    origin, avail = imgui.get_cursor_screen_pos(), imgui.get_content_region_avail()
    top, bottom = origin.y + em(1.6), origin.y + avail.y - em(0.6)
    left, right = origin.x + em(3.5), origin.x + avail.x - em(2.5)
    columns = len(sizes)
    xs = [left + k * (right - left) / max(columns - 1, 1) for k in range(columns)]
    shown = [min(n, MAX_NODES) for n in sizes]
    ys = [[top + (i + 0.5) * (bottom - top) / n for i in range(n)] for n in shown]
    draw_list = imgui.get_window_draw_list()
    for k, layer in enumerate(plan.layers):  # edges first, nodes on top
        w = layer.weights(params)
        for o in range(shown[k + 1]):
            for i in range(shown[k]):
                value = float(w[o, i])
                mag = min(abs(value) / scale, 1.0)
                draw_list.add_line(imgui.ImVec2(xs[k], ys[k][i]), imgui.ImVec2(xs[k + 1], ys[k + 1][o]),
                                   _colour(value, 0.25 + 0.65 * mag), 0.5 + em(0.3) * mag)
    _nodes(draw_list, plan, sizes, shown, xs, ys, top)
    imgui.dummy(avail)


def _nodes(draw_list, plan, sizes, shown, xs, ys, top) -> None:
    fill = imgui.get_color_u32(imgui.ImVec4(0.85, 0.87, 0.90, 1.0))
    text = imgui.get_color_u32(imgui.Col_.text)
    muted = imgui.get_color_u32(MUTED)
    names = plan.encoding.names(plan.frequencies)
    titles = ["input"] + [f"hidden {k + 1}" for k in range(len(sizes) - 2)] + ["output"]
    for k, column in enumerate(ys):
        r = max(2.0, min(em(0.45), (column[1] - column[0]) * 0.35)) if len(column) > 1 else em(0.45)
        for i, y in enumerate(column):
            draw_list.add_circle_filled(imgui.ImVec2(xs[k], y), r, fill)
            label = names[i] if k == 0 else (f"f{i + 1}" if k == len(ys) - 1 else None)
            if label is not None and r >= 3:
                size = imgui.calc_text_size(label)
                x = xs[k] - r - em(0.3) - size.x if k == 0 else xs[k] + r + em(0.3)
                draw_list.add_text(imgui.ImVec2(x, y - size.y / 2), text, label)
        title = f"{titles[k]} ({sizes[k]})" if sizes[k] == shown[k] else f"{titles[k]} ({shown[k]} of {sizes[k]})"
        size = imgui.calc_text_size(title)
        draw_list.add_text(imgui.ImVec2(xs[k] - size.x / 2, top - em(1.5)), muted, title)
