"""The window's layout: a dock space over the whole window (below the menu bar), split into the
five panels. The layout is four ratios: the left column's width, the Training panel's share of
it, the heatmaps' share of the rest and the diagram's share of the right column. Whenever the
window's size changes, the dock space is built again from them, so the layout follows the
window at any size instead of squeezing the last panel to nothing. Until the user drags a
splitter the ratios are the defaults for the current size (sizes in em); after, they are the
user's, kept in the saved settings, until View > Reset layout. Panels cannot be undocked, so
none can end up floating out of reach."""

from __future__ import annotations

from dataclasses import dataclass

from imgui_bundle import imgui
from imgui_bundle.imgui import internal as imgui_internal

from ..ui.style import em

TRAINING, NETWORK, HEATMAPS, DIAGRAM, LOSS = "Training", "Network", "Heatmaps", "Network diagram", "Loss"
PANELS = (TRAINING, NETWORK, HEATMAPS, DIAGRAM, LOSS)
DOCK_SPACE = "main dock space"
DRAGGED = 0.01  # a ratio that moved this much since the last build was dragged by the user

Ratios = tuple[float, float, float, float]  # left, training, middle, diagram


@dataclass
class Layout:
    ratios: Ratios | None = None  # the user's, once they drag a splitter; else defaults
    built_size: tuple | None = None  # the dock space was last built for this size...
    measured: Ratios | None = None  # ...and measured these ratios once it settled
    settle: int = 0  # frames until a new build is measured


def _clamp(ratio: float, low: float = 0.1, high: float = 0.9) -> float:
    return min(max(ratio, low), high)


def default_ratios(width: float, height: float, heatmap_width: float) -> Ratios:
    left = _clamp(em(22) / max(width, 1.0), 0.2, 0.45)
    middle = _clamp(heatmap_width / max(width * (1 - left), 1.0), 0.3, 0.6)
    return left, _clamp(em(34) / max(height, 1.0), 0.45, 0.75), middle, 0.5


def measure(windows: dict, pos: imgui.ImVec2, size: imgui.ImVec2) -> Ratios | None:
    """The ratios the panels' rects show, from the last frame."""
    if not all(name in windows for name in PANELS) or size.x <= 0 or size.y <= 0:
        return None
    training, heatmaps, diagram = windows[TRAINING], windows[HEATMAPS], windows[DIAGRAM]
    left = (training[2] - pos.x) / size.x
    middle = (heatmaps[2] - heatmaps[0]) / max(size.x - (training[2] - pos.x), 1.0)
    return left, (training[3] - pos.y) / size.y, middle, (diagram[3] - pos.y) / size.y


def _build(dock_id: int, size: imgui.ImVec2, ratios: Ratios) -> None:
    left_ratio, training_ratio, middle_ratio, diagram_ratio = ratios
    imgui_internal.dock_builder_remove_node(dock_id)
    imgui_internal.dock_builder_add_node(dock_id, imgui_internal.DockNodeFlagsPrivate_.dock_space)
    imgui_internal.dock_builder_set_node_size(dock_id, size)
    split = imgui_internal.dock_builder_split_node_py
    left, rest = split(dock_id, imgui.Dir.left, _clamp(left_ratio))[1:]
    training, network = split(left, imgui.Dir.up, _clamp(training_ratio))[1:]
    heatmaps, right = split(rest, imgui.Dir.left, _clamp(middle_ratio))[1:]
    diagram, loss = split(right, imgui.Dir.up, _clamp(diagram_ratio))[1:]
    for name, node in (
        (TRAINING, training),
        (NETWORK, network),
        (HEATMAPS, heatmaps),
        (DIAGRAM, diagram),
        (LOSS, loss),
    ):
        imgui_internal.dock_builder_dock_window(name, node)
    imgui_internal.dock_builder_finish(dock_id)


def dock_space(layout: Layout, windows: dict, heatmap_width: float, reset: bool) -> None:
    """This frame's dock space: built again on a reset, a new window size or a first frame."""
    viewport = imgui.get_main_viewport()
    pos, size = viewport.work_pos, viewport.work_size
    dock_id = imgui.get_id(DOCK_SPACE)
    now = measure(windows, pos, size)
    if layout.built_size == (size.x, size.y) and layout.settle == 0 and now is not None:
        if layout.measured is not None and max(abs(a - b) for a, b in zip(now, layout.measured)) > DRAGGED:
            layout.ratios = now  # the user dragged a splitter
        layout.measured = now
    layout.settle = max(layout.settle - 1, 0)
    if reset:
        layout.ratios = None
    if reset or layout.built_size != (size.x, size.y) or imgui_internal.dock_builder_get_node(dock_id) is None:
        _build(dock_id, size, layout.ratios or default_ratios(size.x, size.y, heatmap_width))
        layout.built_size, layout.measured, layout.settle = (size.x, size.y), None, 2
    imgui.dock_space_over_viewport(dock_id, viewport, imgui.DockNodeFlags_.no_undocking)
