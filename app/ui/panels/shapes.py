"""The shape row, in the heatmaps panel under the targets: a signed distance field to learn
instead of the targets, a built-in picked from a combo or a file through File > Open shape... (the
row's button opens the same), and why the last shape was not taken. The state and its rules are
in app/ui/shape_edits.py."""

from __future__ import annotations

from pathlib import Path

from imgui_bundle import imgui

from ...truth.shapes import BUILTINS
from ..shape_edits import shape_of
from ..style import BAD, MUTED, em

NONE = "none"


def _choices(current: str | None) -> list[tuple[str, str | None]]:
    """(label, spec) of the combo's entries: none, the built-ins, and the current shape where it is
    none of them (a file, or two built-ins joined by '+')."""
    entries: list[tuple[str, str | None]] = [(NONE, None)] + [(name, name) for name in BUILTINS]
    if current is not None and current not in BUILTINS:
        entries.append((Path(current).name, current))
    return entries


def _combo(app, entries: list[tuple[str, str | None]], current: str | None) -> int | None:
    """The combo of `entries`: the index of one other than `current` picked this frame, else None."""
    imgui.set_next_item_width(em(11))
    opened = imgui.begin_combo("##shape", next(label for label, spec in entries if spec == current))
    app.remember("shape")
    if imgui.is_item_hovered():
        imgui.set_tooltip(
            "learn a shape's signed distance instead of the targets: one output,\n"
            "negative inside, 0 on the boundary; none goes back to the targets"
        )
    if not opened:
        return None
    chosen = None
    for k, (label, spec) in enumerate(entries):
        if imgui.selectable(label, spec == current)[0] and spec != current:
            chosen = k
        app.remember(f"shape {label}")
    imgui.end_combo()
    return chosen


def draw_source(app) -> None:
    """The row: the shape learned (as the network being built has it), Open shape..., the message."""
    edits = app.shapes
    imgui.align_text_to_frame_padding()
    imgui.text_colored(MUTED, "shape")
    imgui.same_line()
    current = shape_of(app.session.building)
    entries = _choices(current)
    chosen = _combo(app, entries, current)
    if chosen is not None and edits.choose(entries[chosen][1]) is None:
        app.say(edits.building_note())
    imgui.same_line()
    imgui.begin_disabled(app.files.pending is not None)
    if imgui.button("Open shape..."):
        app.files.request("shape")
    imgui.end_disabled()
    app.remember("open shape")
    if imgui.is_item_hovered(imgui.HoveredFlags_.allow_when_disabled):
        imgui.set_tooltip(
            "an SVG's filled paths and shapes, a silhouette (PNG or JPEG: dark pixels inside)\n"
            "or boundary points with outward normals (CSV: x, y, nx, ny)"
        )
    if edits.error:
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(BAD, edits.error)
        imgui.pop_text_wrap_pos()
        app.remember("shape error")
