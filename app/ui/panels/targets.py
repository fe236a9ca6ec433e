"""The targets, typed live in the heatmaps panel: each heatmap row's title is its target's text
field (Enter applies it, text not entered stays marked "not applied"; a rejected one is marked
at its column, with the message under it), a menu of presets and the user's own expressions, a
button to remove the output; "+ output" under the rows; and the choice of a Slang file instead,
whose compiler messages show here. The state and its rules are in app/ui/target_edits.py."""

from __future__ import annotations

from pathlib import Path

from imgui_bundle import imgui

from ...truth.targets import MAX_TARGET_LENGTH, MAX_TARGETS, TargetError
from ..style import BAD, MUTED, em


def _mark_column(text: str, column: int, field_min: imgui.ImVec2, field_max: imgui.ImVec2) -> None:
    """A red caret under the field at `column` (1-based) of `text`."""
    pad = imgui.get_style().frame_padding.x
    x = field_min.x + pad + imgui.calc_text_size(text[: max(column - 1, 0)]).x
    x = min(x, field_max.x - pad)
    y, h = field_max.y, em(0.35)
    imgui.get_window_draw_list().add_triangle_filled(
        imgui.ImVec2(x, y - h),
        imgui.ImVec2(x - h, y + h * 0.6),
        imgui.ImVec2(x + h, y + h * 0.6),
        imgui.get_color_u32(BAD),
    )


def _menu(app, output: int) -> None:
    edits = app.targets
    if not imgui.begin_popup(f"target menu {output}"):
        return
    imgui.text_colored(MUTED, "presets")
    for name, expressions in edits.presets:
        label = name if len(expressions) > 1 else f"{name}:  {expressions[0]}"
        if len(expressions) > 1:
            label += f"  (all {len(expressions)} outputs)"
        if imgui.selectable(label, False)[0]:
            edits.choose(output, expressions)
        app.remember(f"preset {name}")
    if edits.mine:
        imgui.separator()
        imgui.text_colored(MUTED, "yours")
        for text in edits.mine:
            if imgui.selectable(f"{text}##mine", False)[0]:
                edits.choose(output, [text])
    imgui.end_popup()


def row_title(app, width: float):
    """The heatmap rows' title callback: an editable expression, or a Slang file's target."""
    edits, config = app.targets, app.config

    def draw(output: int) -> None:
        if config.slang_target:
            name = Path(config.slang_target["file"]).name
            imgui.text(f"f{output + 1} = target(p, {output})")
            imgui.same_line()
            imgui.text_colored(MUTED, f"in {name}")
            return
        imgui.push_id(f"target {output}")
        imgui.align_text_to_frame_padding()
        imgui.text(f"f{output + 1} =")
        imgui.same_line()
        buttons = 2 * imgui.get_frame_height() + 2 * imgui.get_style().item_spacing.x
        imgui.set_next_item_width(max(width - imgui.get_cursor_pos_x() - buttons, em(8)))
        text = edits.texts[output] if output < len(edits.texts) else config.targets[output]
        entered, text = imgui.input_text("##expression", text, imgui.InputTextFlags_.enter_returns_true)
        app.remember(f"target f{output + 1}")
        field_min, field_max = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        # Enter applies; Escape goes back to the applied target; a click elsewhere keeps the
        # text in the field, unapplied and marked so (docs/guide/targets.md, "Targets typed live")
        if entered:
            edits.submit(output, text[: MAX_TARGET_LENGTH + 1])
        elif imgui.is_item_deactivated() and imgui.is_key_pressed(imgui.Key.escape):
            edits.revert(output)
        elif output < len(edits.texts) and text != edits.texts[output]:
            edits.edit(output, text[: MAX_TARGET_LENGTH + 1])
        if imgui.is_item_hovered():
            imgui.set_tooltip("Enter applies the expression; Escape goes back to the current one")
        imgui.same_line()
        if imgui.arrow_button("presets", imgui.Dir.down):
            imgui.open_popup(f"target menu {output}")
        app.remember(f"target menu f{output + 1}")
        if imgui.is_item_hovered():
            imgui.set_tooltip("presets and your own expressions")
        _menu(app, output)
        imgui.same_line()
        imgui.begin_disabled(len(edits.texts) <= 1)
        if imgui.button("-", imgui.ImVec2(imgui.get_frame_height(), 0)):
            edits.remove(output)
        imgui.end_disabled()
        app.remember(f"remove f{output + 1}")
        if imgui.is_item_hovered(imgui.HoveredFlags_.allow_when_disabled):
            imgui.set_tooltip(f"remove f{output + 1}")
        error = edits.errors.get(output)
        if error is not None:
            if isinstance(error, TargetError) and error.column is not None:
                _mark_column(edits.texts[output], error.column, field_min, field_max)
            imgui.push_text_wrap_pos(width)
            imgui.text_colored(BAD, str(error))
            imgui.pop_text_wrap_pos()
            app.remember(f"target f{output + 1} error")
        elif output in edits.unapplied:
            imgui.text_colored(MUTED, "not applied: Enter applies it, Escape goes back")
            app.remember(f"target f{output + 1} unapplied")
        imgui.pop_id()

    return draw


def draw_after_rows(app) -> None:
    """ "+ output" for expressions."""
    if app.config.slang_target:
        return
    imgui.begin_disabled(app.config.output_dim >= MAX_TARGETS)
    if imgui.button("+ output"):
        app.targets.add()
    imgui.end_disabled()
    app.remember("add output")
    if imgui.is_item_hovered(imgui.HoveredFlags_.allow_when_disabled):
        imgui.set_tooltip(f"another target to fit (up to {MAX_TARGETS}); the output layer grows by one")


def draw_source(app) -> None:
    """Expressions, or a Slang file: its path, and why it was not taken."""
    edits = app.targets
    imgui.align_text_to_frame_padding()
    imgui.text_colored(MUTED, "targets")
    imgui.same_line()
    if imgui.radio_button("expressions", not edits.using_file) and edits.using_file:
        edits.use_expressions()
    app.remember("use expressions")
    imgui.same_line()
    if imgui.radio_button("Slang file", edits.using_file) and not edits.using_file and edits.file_path.strip():
        edits.load_file(edits.file_path.strip())
    imgui.same_line()
    imgui.set_next_item_width(max(imgui.get_content_region_avail().x - em(4.5), em(8)))
    entered, path = imgui.input_text_with_hint(
        "##target file", "path/to/targets.slang, then Enter", edits.file_path, imgui.InputTextFlags_.enter_returns_true
    )
    app.remember("target file")
    if imgui.is_item_hovered():
        imgui.set_tooltip(
            "a Slang file with static const int TARGET_COUNT and\n"
            "[Differentiable] float target(float2 p, int k); it is recompiled when it changes"
        )
    edits.file_path = path
    imgui.same_line()
    if (imgui.button("Load") or entered) and path.strip():
        edits.load_file(path.strip())
    app.remember("load target file")
    if edits.file_messages:
        imgui.push_text_wrap_pos(0.0)
        for line in edits.file_messages:
            imgui.text_colored(BAD, line)
        imgui.pop_text_wrap_pos()
        app.remember("target file error")
    elif app.config.slang_target and edits.watch is not None:
        imgui.text_colored(MUTED, f"watching {Path(edits.watch.path).name}: recompiled when it changes")
