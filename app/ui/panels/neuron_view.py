"""One neuron shown large once its node in the network diagram is clicked: its values over the
domain (the diverging map, white at 0, over its largest |value|), the colour bar, and its value
range. It is a window of its own over the Loss panel, the panel least needed while looking
inside the network; the diagram stays in view, so another click shows another neuron."""

from __future__ import annotations

from imgui_bundle import imgui

from ..clamped_image import clamped_image
from ..heatmap_view import BAR_COLUMNS, axis_labels, colorbar
from ..style import MUTED, em


def neuron_name(plan, neuron: int) -> str:
    """'input x²', 'hidden 2, neuron 7', 'output f1' for a neuron in plan order."""
    column = max(k for k in range(len(plan.sizes)) if plan.neuron_offset(k) <= neuron)
    index = neuron - plan.neuron_offset(column)
    if column == 0:
        return f"input {plan.input_names()[index]}"
    if column == len(plan.sizes) - 1:
        return f"output f{index + 1}"
    return f"hidden {column}, neuron {index + 1}"


_FLAGS = (
    imgui.WindowFlags_.no_docking
    | imgui.WindowFlags_.no_collapse
    | imgui.WindowFlags_.no_saved_settings
    | imgui.WindowFlags_.no_scrollbar
)


def draw(app, over: tuple[float, float, float, float]) -> None:
    """The selected neuron's window, placed over the screen rect `over` (x0, y0, x1, y1)."""
    session, neuron = app.session, app.selected_neuron
    images = session.heatmaps
    imgui.set_next_window_pos(imgui.ImVec2(over[0], over[1]), imgui.Cond_.always)
    imgui.set_next_window_size(imgui.ImVec2(over[2] - over[0], over[3] - over[1]), imgui.Cond_.always)
    expanded, still_open = imgui.begin(f"Neuron: {neuron_name(session.trainer.plan, neuron)}###neuron", True, _FLAGS)
    app.remember_window("Neuron")
    if expanded:
        lo, hi = (float(v) for v in images.neurons.ranges()[neuron])
        top = max(abs(lo), abs(hi))
        imgui.text_colored(MUTED, f"range {lo:.4g} to {hi:.4g} over the domain; white is 0")
        bar, labels = em(0.8), em(3.6)
        domain = app.config.domain
        margin = max(imgui.calc_text_size(f"{v:.3g}").x for v in domain[2:]) + em(0.5)  # y's labels
        avail = imgui.get_content_region_avail()
        side = max(
            min(avail.x - margin - bar - labels - em(0.6), avail.y - imgui.get_text_line_height() - em(0.3)), em(3)
        )
        imgui.set_cursor_pos_x(imgui.get_cursor_pos_x() + margin)
        origin = imgui.get_cursor_screen_pos()
        u0, v0, u1, v1 = images.neurons.tile(neuron)
        tile = (images.neurons.side, images.neurons.side)
        texture = app.renderer.texture(images.neurons.atlas)
        clamped_image(texture, imgui.ImVec2(side, side), imgui.ImVec2(u0, v0), imgui.ImVec2(u1, v1), tile)
        app.remember("neuron image")
        axis_labels(domain, origin, side, x_axis=False)
        axis_labels(domain, origin, side, x_axis=True)
        imgui.same_line()
        colorbar(app.renderer, images, BAR_COLUMNS["signed"], -top, top, side, bar)
    imgui.end()
    if not still_open:
        app.selected_neuron = None
