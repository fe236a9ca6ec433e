"""A viewer's input events (JSON from the page) given to ImGui as a window's events are: the mouse,
the wheel, keys by their KeyboardEvent.code, typed text and pasted text. Malformed events are
dropped: a page cannot make a frame fail."""

from __future__ import annotations

import math

from imgui_bundle import imgui

from ..ui import fonts

_NAMED = {
    "Enter": "enter", "NumpadEnter": "keypad_enter", "Escape": "escape", "Backspace": "backspace", "Tab": "tab",
    "Space": "space", "ArrowLeft": "left_arrow", "ArrowRight": "right_arrow", "ArrowUp": "up_arrow",
    "ArrowDown": "down_arrow", "Home": "home", "End": "end", "PageUp": "page_up", "PageDown": "page_down",
    "Insert": "insert", "Delete": "delete", "Minus": "minus", "Equal": "equal", "BracketLeft": "left_bracket",
    "BracketRight": "right_bracket", "Backslash": "backslash", "Semicolon": "semicolon", "Quote": "apostrophe",
    "Comma": "comma", "Period": "period", "Slash": "slash", "Backquote": "grave_accent", "CapsLock": "caps_lock",
    "ShiftLeft": "left_shift", "ShiftRight": "right_shift", "ControlLeft": "left_ctrl", "ControlRight": "right_ctrl",
    "AltLeft": "left_alt", "AltRight": "right_alt", "MetaLeft": "left_super", "MetaRight": "right_super",
    "NumpadAdd": "keypad_add", "NumpadSubtract": "keypad_subtract", "NumpadMultiply": "keypad_multiply",
    "NumpadDivide": "keypad_divide", "NumpadDecimal": "keypad_decimal", "ContextMenu": "menu",
}  # fmt: skip
KEYS: dict[str, imgui.Key] = {code: getattr(imgui.Key, name) for code, name in _NAMED.items()}
KEYS.update({f"Key{c}": getattr(imgui.Key, c.lower()) for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"})
KEYS.update({f"Digit{d}": getattr(imgui.Key, f"_{d}") for d in range(10)})
KEYS.update({f"Numpad{d}": getattr(imgui.Key, f"keypad{d}") for d in range(10)})
KEYS.update({f"F{n}": getattr(imgui.Key, f"f{n}") for n in range(1, 13)})
MODIFIERS = (
    ("ctrl", imgui.Key.mod_ctrl),
    ("shift", imgui.Key.mod_shift),
    ("alt", imgui.Key.mod_alt),
    ("meta", imgui.Key.mod_super),
)
MAX_TEXT = 100_000  # characters of one typed or pasted text


def _number(value, low: float, high: float) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return min(max(float(value), low), high)


def apply(app, event: dict) -> None:
    """One event from the viewer in control, into the app's ImGui context (current already)."""
    io = imgui.get_io()
    kind = event.get("t")
    if kind == "move":
        x, y = _number(event.get("x"), -1e6, 1e6), _number(event.get("y"), -1e6, 1e6)
        if x is not None and y is not None:
            io.add_mouse_pos_event(x, y)
    elif kind == "leave":
        io.add_mouse_pos_event(-imgui.FLT_MAX, -imgui.FLT_MAX)
    elif kind == "button":
        button = event.get("b")
        if type(button) is int and button in (0, 1, 2) and isinstance(event.get("down"), bool):  # not 1.0, True
            io.add_mouse_button_event(button, event["down"])
    elif kind == "wheel":
        dx, dy = _number(event.get("dx"), -100, 100), _number(event.get("dy"), -100, 100)
        if dx is not None and dy is not None:
            io.add_mouse_wheel_event(dx, dy)
    elif kind == "key":
        _key(app, event)
    elif kind == "text":
        _text(event.get("s"))
    elif kind == "paste":
        text = event.get("s")
        if isinstance(text, str) and text:  # the page's clipboard, pasted as Ctrl+V pastes ImGui's
            imgui.set_clipboard_text(text[:MAX_TEXT])
            fonts.want(text[:MAX_TEXT])
            for down in (True, False):
                io.add_key_event(imgui.Key.mod_ctrl, down)
                io.add_key_event(imgui.Key.v, down)
    elif kind == "focus" and isinstance(event.get("on"), bool):
        io.add_focus_event(event["on"])
    else:
        return
    app.redraw.note_input()


def _key(app, event: dict) -> None:
    io = imgui.get_io()
    down = event.get("down")
    code = event.get("code")
    key = KEYS.get(code) if isinstance(code, str) else None  # a list or dict is no key, nor hashable
    if not isinstance(down, bool):
        return
    for name, modifier in MODIFIERS:
        if isinstance(event.get(name), bool):
            io.add_key_event(modifier, event[name])
    if key is None:
        return
    io.add_key_event(key, down)
    if down and key == imgui.Key.f12:  # as the window's F12
        app.request_screenshot()
    if down and key == imgui.Key.q and event.get("ctrl") is True:  # Ctrl+Q quits, as in the window
        app.quit = True


def _text(text) -> None:
    if not isinstance(text, str) or not text:
        return
    text = text[:MAX_TEXT]
    fonts.want(text)  # a character of another script: its font is merged before the next frame
    imgui.get_io().add_input_characters_utf8(text)
