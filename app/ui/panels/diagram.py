"""Network diagram in the style of TensorFlow Playground: layers as columns of nodes, edges orange for
negative and blue for positive weights, thicker for larger |w|, a wide layer summarised by its first
neurons, an ellipsis and its last. Each node is an image of its neuron over the domain; clicking
one shows it large. A column whose nodes come out larger staggered into two lines is staggered."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from imgui_bundle import imgui

from ...datasets.source import problem_of
from .. import fonts
from ..clamped_image import add_clamped_image
from ..style import MUTED, em, fit_text, too_small

NEGATIVE = (0.96, 0.58, 0.13)  # Playground's orange
POSITIVE = (0.03, 0.47, 0.74)  # Playground's blue
MIN_NODE_SPACING_EM = 0.85  # closer nodes are summarised
MAX_NODES = 16  # per column, at most
STAGGERED_GAIN = 1.3  # a column is staggered where that makes its nodes this much larger
NODE_EM = 1.3  # a node's half-side at most, in a panel up to NODE_PANEL_SIDES node sides high...
NODE_PANEL_SIDES = 10  # ...and in a larger one, the panel's height (or width) over this
OUTPUT_NAME_EM = 7.0  # an output's name is cut short beyond this


def _colour(weight: float, alpha: float) -> int:
    r, g, b = NEGATIVE if weight < 0 else POSITIVE
    return imgui.get_color_u32(imgui.ImVec4(r, g, b, alpha))


def _edges(w: np.ndarray, scale: float) -> tuple[list[list[int]], list[list[float]]]:
    """Each edge's colour and width from its weight, for a whole layer at once: the colours as
    _colour packs them (ImGui's float-to-byte rounding, in float32), the widths as a double."""
    w = np.asarray(w, dtype=np.float64)
    mag = np.minimum(np.abs(w) / scale, 1.0)
    alpha = np.float32(0.25 + 0.65 * mag) * np.float32(imgui.get_style().alpha)
    # a NaN weight's edge gets alpha 0, as ImGui's packing gives it
    scaled = np.clip(np.nan_to_num(alpha, nan=0.0), np.float32(0), np.float32(1))
    byte = (scaled * np.float32(255.0) + np.float32(0.5)).astype(np.int64)
    rgb = [_colour(sign, 0.0) & 0x00FFFFFF for sign in (-1.0, 1.0)]
    colours = np.where(w < 0, rgb[0], rgb[1]) | (byte << 24)
    return colours.tolist(), (0.5 + em(0.3) * mag).tolist()


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


def output_names(config) -> list[str]:
    """The output nodes' names: a value CSV's (or generator's) value columns (as drawn:
    app/ui/fonts.py's label), f1, f2, ... for formulas, images and classes (whose outputs are
    logits, named by the data view's legend)."""
    if config.dataset is not None:
        problem = problem_of(config.dataset)
        if not problem.classify:
            return [fonts.label(name, k + 1) for k, name in enumerate(problem.names)]
    return [f"f{k + 1}" for k in range(config.output_dim)]


def shown_neurons(width: int, room: int) -> list[int]:
    """Which of a layer's neurons get a node: all that fit, or the first ones and the last."""
    if width <= room:
        return list(range(width))
    return list(range(room - 2)) + [width - 1]  # a row's room is left for the ellipsis


def _positions(neurons: list[int], width: int, top: float, bottom: float) -> list[float]:
    slots = len(neurons) + (1 if len(neurons) < width else 0)  # the ellipsis takes a slot
    ys = [top + (i + 0.5) * (bottom - top) / slots for i in range(slots)]
    return ys if len(neurons) == width else ys[:-2] + [ys[-1]]


def _titles(app, sizes: list[int], xs: list[float], top: float) -> None:
    """Two lines per column, centred: the layer's name (short when columns are close), its width."""
    draw, muted = imgui.get_window_draw_list(), imgui.get_color_u32(MUTED)
    gap = (xs[1] - xs[0]) if len(xs) > 1 else em(10)
    hidden = len(sizes) - 2
    app.diagram_titles = []  # each title's (left, right) extent: tests check that none overlap
    for k, x in enumerate(xs):
        long = "input" if k == 0 else "output" if k == len(sizes) - 1 else f"hidden {k}"
        short = "in" if k == 0 else "out" if k == len(sizes) - 1 else f"h{k}"
        name = long if imgui.calc_text_size(f"hidden {hidden}").x < gap - em(0.6) else short
        for line, text in enumerate((name, str(sizes[k]))):
            size = imgui.calc_text_size(text)
            draw.add_text(imgui.ImVec2(x - size.x / 2, top - em(2.9) + line * em(1.2)), muted, text)
            if line == 0:
                app.diagram_titles.append((x - size.x / 2, x + size.x / 2))


def required_em(sizes: list[int]) -> float:
    """The width the diagram needs, in em: the least distance between columns that keeps their
    titles apart ("h8" over "256"), and margins for the inputs' and outputs' names. 8 layers of
    256 fit at 1280 x 800 (a fixed 3.5 em a column did not)."""
    widest = max(imgui.calc_text_size(str(max(sizes))).x, imgui.calc_text_size(f"h{len(sizes) - 2}").x)
    return (len(sizes) - 1) * (widest / em() + 0.6) + 6


def draw(app) -> None:
    plan = app.session.trainer.plan
    sizes = list(plan.sizes)
    if too_small(required_em(sizes), 12, "the network"):
        return
    params = app.diagram_weights()
    scale = max(float(np.max(np.abs(params))) if params.size else 1.0, 1e-6)
    _legend(scale)
    _diagram(app, plan, sizes, params, scale, imgui.get_content_region_avail(), output_names(app.config))


@dataclass
class Column:
    """Where a layer's shown nodes go: their centres and half-size. A column whose nodes would
    be small in one line is staggered into two, every other node to the right: twice the room."""

    xs: list[float]
    ys: list[float]
    half: float


def _column(x: float, shown: list[int], width: int, top: float, bottom: float, gap: float, largest: float) -> Column:
    """`largest`: the most a node's half-side may be."""
    ys = _positions(shown, width, top, bottom)
    spacing = (ys[1] - ys[0]) if len(ys) > 1 else em(2)
    half = max(2.0, min(largest, spacing * 0.46, gap * 0.18))
    staggered = min(largest, spacing * 0.92, (gap * 0.5 - em(0.3)) / 4)
    if len(ys) < 3 or staggered < STAGGERED_GAIN * half:
        return Column([x] * len(ys), ys, half)
    dx = staggered + em(0.15)
    return Column([x - dx if i % 2 == 0 else x + dx for i in range(len(ys))], ys, staggered)


def _labels(plan, neurons: list[list[int]], outputs: list[str]) -> tuple[list[str], list[str]]:
    """The shown inputs' names and the shown outputs' (`outputs`: output_names, cut short past
    OUTPUT_NAME_EM), which the diagram writes beside their nodes."""
    names = plan.input_names()
    return [names[n] for n in neurons[0]], [fit_text(outputs[n], em(OUTPUT_NAME_EM)) for n in neurons[-1]]


def _reach(column: Column) -> float:
    """How far a column's nodes reach from its centre line, either way (a staggered column's
    nodes sit left and right of it)."""
    return max(abs(x - column.xs[0]) for x in column.xs) * (len(set(column.xs)) > 1) + column.half


def _place(plan, sizes, origin, avail, outputs: list[str]) -> tuple[list[list[int]], list[float], list[Column]]:
    """Which neurons get a node, the columns' centres and their nodes. The first and last
    columns are set in from the panel's edges by their labels' width and how far their nodes
    reach, so that no label is cut by the panel or drawn over a node (a hash grid's 'L0 f1' was
    both); a labelled column keeps a text line a node, so that its labels don't overlap."""
    top, bottom = origin.y + em(3.0), origin.y + avail.y - em(0.6)
    room = int(min(MAX_NODES, max(3, (bottom - top) / em(MIN_NODE_SPACING_EM))))
    labelled = int(min(room, max(3, (bottom - top) / imgui.get_text_line_height_with_spacing())))
    last = len(sizes) - 1
    neurons = [shown_neurons(n, labelled if k in (0, last) else room) for k, n in enumerate(sizes)]
    text = [max(imgui.calc_text_size(t).x for t in texts) + em(0.3) for texts in _labels(plan, neurons, outputs)]
    largest = max(em(NODE_EM), min(avail.x, avail.y) / NODE_PANEL_SIDES / 2)
    reach = [largest, largest]  # the most an unstaggered column reaches; then as placed, once more
    for _ in range(3):
        left = origin.x + em(0.2) + text[0] + reach[0]
        right = origin.x + avail.x - em(0.2) - text[1] - reach[1]
        xs = [left + k * (right - left) / max(last, 1) for k in range(len(sizes))]
        gap = (xs[1] - xs[0]) if len(xs) > 1 else em(10)
        columns = [_column(x, shown, n, top, bottom, gap, largest) for x, shown, n in zip(xs, neurons, sizes)]
        placed = [_reach(columns[0]), _reach(columns[-1])]
        if placed[0] <= reach[0] and placed[1] <= reach[1]:
            break
        reach = [max(a, b) for a, b in zip(reach, placed)]
    return neurons, xs, columns


def _diagram(app, plan, sizes, params, scale, avail, outputs: list[str]) -> None:
    origin = imgui.get_cursor_screen_pos()
    neurons, xs, columns = _place(plan, sizes, origin, avail, outputs)
    draw_list = imgui.get_window_draw_list()
    for k, layer in enumerate(plan.layers):  # edges first, nodes on top
        # The shown edges' colours and widths for the layer at once: per edge, only the line (a
        # 64-wide network has ~600 edges shown, and this loop was the UI's largest cost a frame).
        colours, widths = _edges(layer.weights(params)[np.ix_(neurons[k + 1], neurons[k])], scale)
        start, end = columns[k], columns[k + 1]
        starts = [imgui.ImVec2(x, y) for x, y in zip(start.xs, start.ys)]
        for x_out, y_out, colour_row, width_row in zip(end.xs, end.ys, colours, widths):
            finish = imgui.ImVec2(x_out, y_out)
            for begin, colour, width in zip(starts, colour_row, width_row):
                draw_list.add_line(begin, finish, colour, width)
    _nodes(app, draw_list, plan, sizes, neurons, xs, columns)
    _write_labels(app, draw_list, plan, neurons, columns, outputs)
    _titles(app, sizes, xs, origin.y + em(3.0))
    imgui.dummy(avail)


def _nodes(app, draw_list, plan, sizes, neurons, xs, columns) -> None:
    """Each node as its neuron's image, framed; a click on one selects it (again: deselects)."""
    muted = imgui.get_color_u32(MUTED)
    frame = imgui.get_color_u32(imgui.ImVec4(0.55, 0.58, 0.64, 1.0))
    chosen = imgui.get_color_u32(imgui.ImVec4(1.0, 1.0, 1.0, 1.0))
    atlas = app.renderer.texture(app.session.heatmaps.neurons.atlas)
    tile = (app.session.heatmaps.neurons.side, app.session.heatmaps.neurons.side)
    clicked = imgui.is_window_hovered() and imgui.is_mouse_clicked(0)
    mouse = imgui.get_mouse_pos()
    app.diagram_nodes = {}  # neuron (plan order) -> node rect: tests click them
    # The images in one channel, frames and labels in another: one draw of the atlas instead of
    # one per node (a draw is costly on a CPU driver).
    draw_list.channels_split(2)
    for k, (shown, column) in enumerate(zip(neurons, columns)):
        half = column.half
        for neuron, x, y in zip(shown, column.xs, column.ys):
            index = plan.neuron_offset(k) + neuron
            lo, hi = imgui.ImVec2(x - half, y - half), imgui.ImVec2(x + half, y + half)
            u0, v0, u1, v1 = app.session.heatmaps.neurons.tile(index)
            draw_list.channels_set_current(0)
            add_clamped_image(draw_list, atlas, lo, hi, imgui.ImVec2(u0, v0), imgui.ImVec2(u1, v1), tile)
            draw_list.channels_set_current(1)
            selected = index == app.selected_neuron
            draw_list.add_rect(lo, hi, chosen if selected else frame, 0.0, 2.0 if selected else 1.0)
            app.diagram_nodes[index] = (lo.x, lo.y, hi.x, hi.y)
            if clicked and lo.x <= mouse.x <= hi.x and lo.y <= mouse.y <= hi.y:
                app.selected_neuron = None if selected else index
        if len(shown) < sizes[k]:  # a vertical ellipsis between the first neurons and the last
            y = (column.ys[-2] + column.ys[-1]) / 2
            for dy in (-1, 0, 1):
                draw_list.add_circle_filled(imgui.ImVec2(xs[k], y + dy * half * 0.6), max(1.0, half * 0.18), muted)
    draw_list.channels_merge()


def _write_labels(app, draw_list, plan, neurons: list[list[int]], columns: list[Column], outputs: list[str]) -> None:
    """The inputs' names left of their column's leftmost node edge, the outputs' right of the
    rightmost: beside a staggered column, not over its other nodes."""
    colour = imgui.get_color_u32(imgui.Col_.text)
    # neuron (plan order) -> (its name as drawn, its rect): tests check them against the nodes and the panel
    app.diagram_labels = {}
    firsts = (0, plan.neuron_offset(len(plan.sizes) - 1))
    ends = zip(_labels(plan, neurons, outputs), (columns[0], columns[-1]), (neurons[0], neurons[-1]), firsts)
    for texts, column, shown, first in ends:
        if column.half < 3:  # nodes too small to tell apart: no labels either
            continue
        before = first == 0
        edge = min(column.xs) - column.half - em(0.3) if before else max(column.xs) + column.half + em(0.3)
        for label, neuron, y in zip(texts, shown, column.ys):
            size = imgui.calc_text_size(label)
            x = edge - size.x if before else edge
            draw_list.add_text(imgui.ImVec2(x, y - size.y / 2), colour, label)
            app.diagram_labels[first + neuron] = (label, (x, y - size.y / 2, x + size.x, y + size.y / 2))
