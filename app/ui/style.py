"""Look: dark theme, rounded widgets, one font scale. Sizes elsewhere are in em units."""

from __future__ import annotations

from imgui_bundle import imgui

# The panels' background, drawn by clearing the frame to it: docked panels draw none of their own
# (app/ui/frame.py), since a full-window fill is costly on a CPU driver.
WINDOW_BG = (0.09, 0.10, 0.12, 1.0)
TRANSPARENT = imgui.ImVec4(0.0, 0.0, 0.0, 0.0)


def em(value: float = 1.0) -> float:
    """`value` font heights in pixels: the unit for every size in the UI."""
    return value * imgui.get_font_size()


def px(value: float) -> float:
    """`value` pixels at the UI's scale (a page's devicePixelRatio, the window's font scale), for
    sizes ImGui's style does not scale: plot lines and markers."""
    return value * imgui.get_style().font_scale_main


def apply_style(font_scale: float) -> None:
    imgui.style_colors_dark()
    style = imgui.get_style()
    style.font_scale_main = font_scale
    style.window_rounding = 4.0
    style.frame_rounding = 3.0
    style.grab_rounding = 3.0
    style.window_padding = imgui.ImVec2(8, 8)
    style.item_spacing = imgui.ImVec2(8, 5)
    # A border on every frame: an unchecked checkbox was invisible on the dark background.
    style.frame_border_size = 1.0
    style.set_color_(imgui.Col_.border, imgui.ImVec4(0.36, 0.39, 0.45, 0.8))
    style.set_color_(imgui.Col_.window_bg, imgui.ImVec4(*WINDOW_BG))
    style.set_color_(imgui.Col_.child_bg, imgui.ImVec4(0.11, 0.12, 0.14, 1.0))
    style.set_color_(imgui.Col_.title_bg_active, imgui.ImVec4(0.16, 0.29, 0.48, 1.0))
    # Narrow, half-transparent grabs: a slider's value text stays readable where the grab is.
    style.grab_min_size = 6.0
    style.set_color_(imgui.Col_.slider_grab, imgui.ImVec4(0.40, 0.60, 0.95, 0.55))
    style.set_color_(imgui.Col_.slider_grab_active, imgui.ImVec4(0.50, 0.70, 1.00, 0.75))


MUTED = imgui.ImVec4(0.62, 0.65, 0.70, 1.0)
GOOD = imgui.ImVec4(0.45, 0.85, 0.50, 1.0)
WARN = imgui.ImVec4(1.0, 0.70, 0.30, 1.0)
BAD = imgui.ImVec4(1.0, 0.40, 0.40, 1.0)


def too_small(width_em: float, height_em: float, what: str) -> bool:
    """True, with a note in the panel, when it is too small to draw `what` legibly."""
    avail = imgui.get_content_region_avail()
    if avail.x >= em(width_em) and avail.y >= em(height_em):
        return False
    imgui.push_text_wrap_pos(0.0)
    imgui.text_colored(
        MUTED, f"Too small to show {what}: widen or heighten this panel (drag its edge), or View > Reset layout."
    )
    imgui.pop_text_wrap_pos()
    return True


def field_error(app, field: str) -> None:
    """The message for `field`'s last rejected value, right under it, wrapped; gone once the
    field takes a valid value."""
    message = app.field_errors.get(field)
    if message:
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(BAD, message)
        imgui.pop_text_wrap_pos()
        app.remember(f"{field} error")


def fit_text(text: str, width: float) -> str:
    """`text`, cut short with an ellipsis where it is wider than `width` pixels (a CSV's column
    names may be of any length)."""
    if imgui.calc_text_size(text).x <= width:
        return text
    while len(text) > 1 and imgui.calc_text_size(text + "...").x > width:
        text = text[:-1]
    return text + "..."


def begin_centred_modal(title: str) -> bool:
    """Opens the modal `title` (once), centred on the window as it appears and sized to its
    content; True while it is open (end it with imgui.end_popup)."""
    if not imgui.is_popup_open(title):
        imgui.open_popup(title)
    viewport = imgui.get_main_viewport()
    imgui.set_next_window_pos(viewport.get_center(), imgui.Cond_.appearing, imgui.ImVec2(0.5, 0.5))
    flags = imgui.WindowFlags_.always_auto_resize | imgui.WindowFlags_.no_saved_settings
    return imgui.begin_popup_modal(title, None, flags)[0]
