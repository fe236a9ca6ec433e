"""Sliders whose Ctrl+click text entry sets the quantity the slider shows. ImGui's own Ctrl+click
edits the slider's underlying value: an index into the batch sizes' powers of two (typing 4096
crashed the window), log10 of the learning rate (typing 0.001 set lr = 1). Here Ctrl+click opens a
text field holding the shown text; Enter parses it, and a value refused is a message under it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from imgui_bundle import imgui

from .style import field_error


class NotANumber(ValueError):
    """Text typed into a slider that is not the kind of number it takes (the message is shown)."""


@dataclass
class Typing:
    """The slider being typed into: its name, and whether the field still needs the focus."""

    name: str
    text: str
    focus: bool = True


def whole(label: str) -> Callable[[str], int]:
    """A parser of whole numbers, written with or without thousands separators ("4,096")."""

    def parse(text: str) -> int:
        cleaned = text.strip().replace(",", "").replace("_", "")
        try:
            value = float(cleaned)
        except ValueError:
            raise NotANumber(f"{label}: {text.strip()!r} is not a number") from None
        if not value.is_integer():
            raise NotANumber(f"{label} must be a whole number (got {text.strip()})")
        return int(value)

    return parse


def real(label: str, unit: str = "") -> Callable[[str], float]:
    """A parser of numbers (a `unit` after the number, as the slider shows it, is allowed)."""

    def parse(text: str) -> float:
        cleaned = text.strip()
        if unit and cleaned.endswith(unit):
            cleaned = cleaned[: -len(unit)].strip()
        try:
            return float(cleaned.replace(",", "").replace("_", ""))
        except ValueError:
            raise NotANumber(f"{label}: {text.strip()!r} is not a number") from None

    return parse


def typed_slider(
    app,
    name: str,
    label: str,
    slider: Callable[[int], tuple[bool, Any]],
    shown: str,
    parse: Callable[[str], Any],
    apply: Callable[[Any], None],
) -> None:
    """Draws `slider(flags)` (it draws the ImGui slider with these flags and returns ImGui's
    (changed, value)), or, after a Ctrl+click on it, a text field holding `shown`. The value the
    slider sets, or the one typed, goes to `apply`, which may reject it with a message in
    app.field_errors[name]; a typed value that does not parse is reported there too."""
    typing = app.typing
    if typing is not None and typing.name == name:
        _entry(app, typing, label, parse, apply)
    else:
        changed, value = slider(imgui.SliderFlags_.no_input)
        app.remember(name, label)
        if imgui.is_item_activated() and imgui.get_io().key_ctrl:
            app.typing = Typing(name, shown)  # the click that opened the field sets nothing
        elif changed:
            apply(value)
    field_error(app, name)


def _entry(app, typing: Typing, label: str, parse, apply) -> None:
    if typing.focus:
        imgui.set_keyboard_focus_here()
        typing.focus = False
    flags = imgui.InputTextFlags_.enter_returns_true | imgui.InputTextFlags_.auto_select_all
    entered, typing.text = imgui.input_text(f"{label}##typed", typing.text, flags)
    app.remember(typing.name, label)
    if imgui.is_item_hovered():
        imgui.set_tooltip("type a value and press Enter (Escape: keep the slider's)")
    if entered:
        app.typing = None
        try:
            value = parse(typing.text)
        except NotANumber as error:
            app.field_errors[typing.name] = str(error)
            return
        apply(value)
    elif imgui.is_item_deactivated():  # Escape, or a click elsewhere
        app.typing = None
