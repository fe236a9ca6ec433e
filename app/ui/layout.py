"""The window's layout: a dock space over the whole window holding the panels of the panel table
(panels/table.py) in columns, built again from a tuple of ratios whenever the window's size changes,
so the layout follows the window at any size. The ratios are the panels' default shares until the
user drags a splitter, then the user's, saved (docs/guide/window.md, 'Menus, files and settings').
Panels cannot be undocked, so none can end up floating out of reach."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from imgui_bundle import imgui
from imgui_bundle.imgui import internal as imgui_internal

from .style import em

DOCK_SPACE = "main dock space"
DRAGGED = 0.01  # a ratio that moved this much since the last build was dragged by the user

Ratios = tuple[float, ...]
Share = Callable[[float, Any], float]  # (pixels available, the app) -> the default fraction of them


@dataclass(frozen=True)
class Panel:
    """One row of the panel table: a docked window and where it goes."""

    title: str
    draw: Callable[[Any], None]  # draws the panel's body, given the app state
    column: int  # 0 is the leftmost column
    # The default share of the column's height from this panel's top down; None: an even share
    # with the panels below it. The column's last panel takes what is left.
    height: Share | None = None
    # On a column's first panel: the column's default share of the width from its left edge to
    # the right; None: an even share with the columns right of it. The last column takes the rest.
    width: Share | None = None
    flags: int = 0  # imgui window flags


def _clamp(ratio: float, low: float = 0.1, high: float = 0.9) -> float:
    return min(max(ratio, low), high)


def fraction(value: float) -> Share:
    return lambda space, app: value


def ems(count: float, low: float, high: float) -> Share:
    """`count` font heights of the space, between `low` and `high` of it."""
    return lambda space, app: _clamp(em(count) / max(space, 1.0), low, high)


def fits(pixels: Callable[[Any], float], low: float, high: float) -> Share:
    """What the panel's content asks for (`pixels(app)`), between `low` and `high` of the space."""
    return lambda space, app: _clamp(pixels(app) / max(space, 1.0), low, high)


def content_height(title: str, before_drawn_em: float, low: float, high: float) -> Share:
    """The most height panel `title`'s content took since the window took its size (note_content),
    between `low` and `high` of the space; before its first frame, `before_drawn_em` font
    heights. The most, so that a line that comes and goes (a figure that wraps now and then)
    does not move the panels below it up and down. A split gives its first node that share of
    the space less the splitter, rounded down: the half pixel keeps the content's last pixel."""

    def share(space: float, app) -> float:
        pixels = app.dock.tallest.get(title, em(before_drawn_em)) + 0.5
        return _clamp(pixels / max(space - imgui.get_style().docking_separator_size, 1.0), low, high)

    return share


def drawn_height() -> float:
    """The height the current window needs to show all it has drawn so far: from its top (its
    tab) to the lowest item's bottom, and the window's padding below; what ImGui measures its
    content by (the cursor's lowest point), whatever the scrolling."""
    window = imgui_internal.get_current_window()
    return window.dc.cursor_max_pos.y + window.scroll.y - window.pos.y + imgui.get_style().window_padding.y


def note_content(layout: Layout, title: str) -> None:
    """Called in panel `title`'s window after its content: the height that shows all of it."""
    height = layout.content[title] = drawn_height()
    layout.tallest[title] = max(layout.tallest.get(title, 0.0), height)


def columns(panels: Sequence[Panel]) -> list[list[Panel]]:
    by_column: dict[int, list[Panel]] = {}
    for panel in panels:
        by_column.setdefault(panel.column, []).append(panel)
    return [by_column[column] for column in sorted(by_column)]


def ratio_count(panels: Sequence[Panel]) -> int:
    stacks = columns(panels)
    return len(stacks) - 1 + sum(len(stack) - 1 for stack in stacks)


def restored(value) -> Ratios | None:
    """Ratios read back from the saved settings (which may have been edited), or None."""
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(r, (int, float)) and math.isfinite(r) and 0.05 <= r <= 0.95 for r in value):
        return None
    return tuple(float(r) for r in value)


@dataclass
class Layout:
    ratios: Ratios | None = None  # the user's, once they drag a splitter; else defaults
    built_size: tuple | None = None  # the dock space was last built for this size...
    built_ratios: Ratios | None = None  # ...from these ratios...
    measured: Ratios | None = None  # ...and measured these ratios once it settled
    settle: int = 0  # frames until a new build is measured
    content: dict[str, float] = field(default_factory=dict)  # panel title -> its content's height...
    tallest: dict[str, float] = field(default_factory=dict)  # ...and the most it took at this size


def default_ratios(panels: Sequence[Panel], width: float, height: float, app) -> Ratios:
    stacks, ratios = columns(panels), []
    space = width
    for index, stack in enumerate(stacks[:-1]):
        share = stack[0].width
        ratio = share(space, app) if share else 1.0 / (len(stacks) - index)
        ratios.append(ratio)
        space *= 1.0 - ratio
    for stack in stacks:
        space = height
        for index, panel in enumerate(stack[:-1]):
            ratio = panel.height(space, app) if panel.height else 1.0 / (len(stack) - index)
            ratios.append(ratio)
            space *= 1.0 - ratio
    return tuple(ratios)


def measure(panels: Sequence[Panel], windows: dict, pos: imgui.ImVec2, size: imgui.ImVec2) -> Ratios | None:
    """The ratios the panels' rects show, from the last frame."""
    if not all(panel.title in windows for panel in panels) or size.x <= 0 or size.y <= 0:
        return None
    stacks, ratios = columns(panels), []
    right, bottom = pos.x + size.x, pos.y + size.y
    for stack in stacks[:-1]:
        left = min(windows[panel.title][0] for panel in stack)
        ratios.append((max(windows[panel.title][2] for panel in stack) - left) / max(right - left, 1.0))
    for stack in stacks:
        for panel in stack[:-1]:
            top = windows[panel.title][1]
            ratios.append((windows[panel.title][3] - top) / max(bottom - top, 1.0))
    return tuple(ratios)


def _build(panels: Sequence[Panel], dock_id: int, size: imgui.ImVec2, ratios: Ratios) -> None:
    imgui_internal.dock_builder_remove_node(dock_id)
    imgui_internal.dock_builder_add_node(dock_id, imgui_internal.DockNodeFlagsPrivate_.dock_space)
    imgui_internal.dock_builder_set_node_size(dock_id, size)
    split = imgui_internal.dock_builder_split_node_py
    stacks = columns(panels)
    widths, heights = iter(ratios[: len(stacks) - 1]), iter(ratios[len(stacks) - 1 :])
    rest = dock_id
    for index, stack in enumerate(stacks):
        if index < len(stacks) - 1:
            column, rest = split(rest, imgui.Dir.left, _clamp(next(widths)))[1:]
        else:
            column = rest
        for panel in stack[:-1]:
            node, column = split(column, imgui.Dir.up, _clamp(next(heights)))[1:]
            imgui_internal.dock_builder_dock_window(panel.title, node)
        imgui_internal.dock_builder_dock_window(stack[-1].title, column)
    imgui_internal.dock_builder_finish(dock_id)


def _moved(ratios: Ratios, built: Ratios | None, size: imgui.ImVec2) -> bool:
    """True where the default ratios moved since the last build by half a pixel or more (a
    panel's content grew or shrank: the gradient check's result, the heatmaps' size). Never
    asked of the user's ratios, which move only as the user drags them."""
    if built is None or len(built) != len(ratios):
        return True
    return max(abs(a - b) for a, b in zip(ratios, built)) * max(size.x, size.y) >= 0.5


def dock_space(layout: Layout, panels: Sequence[Panel], windows: dict, reset: bool, app) -> None:
    """This frame's dock space: built again on a reset, a new window size, a first frame, or
    default ratios that moved with a panel's content."""
    viewport = imgui.get_main_viewport()
    pos, size = viewport.work_pos, viewport.work_size
    dock_id = imgui.get_id(DOCK_SPACE)
    if layout.ratios is not None and len(layout.ratios) != ratio_count(panels):
        layout.ratios = None  # saved for another set of panels
    now = measure(panels, windows, pos, size)
    if layout.built_size == (size.x, size.y) and layout.settle == 0 and now is not None:
        if layout.measured is not None and max(abs(a - b) for a, b in zip(now, layout.measured)) > DRAGGED:
            layout.ratios = now  # the user dragged a splitter
        layout.measured = now
    layout.settle = max(layout.settle - 1, 0)
    if reset:
        layout.ratios = None
    if reset or layout.built_size != (size.x, size.y):
        layout.tallest = dict(layout.content)  # the contents as they are now, at the new size
    ratios = layout.ratios or default_ratios(panels, size.x, size.y, app)
    # Defaults that moved wait while the mouse is held or a widget is in use: a build mid-drag
    # or mid-edit would end it
    busy = imgui.is_mouse_down(0) or imgui.is_any_item_active()
    if (
        reset
        or layout.built_size != (size.x, size.y)
        or imgui_internal.dock_builder_get_node(dock_id) is None
        or (layout.ratios is None and not busy and _moved(ratios, layout.built_ratios, size))
    ):
        _build(panels, dock_id, size, ratios)
        layout.built_size, layout.built_ratios, layout.measured, layout.settle = (size.x, size.y), ratios, None, 2
    imgui.dock_space_over_viewport(dock_id, viewport, imgui.DockNodeFlags_.no_undocking)
