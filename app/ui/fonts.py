"""The UI's font: DroidSans, with the system's fonts merged in for the characters it lacks (a CSV
column named 高さ) as texts that hold them are first wanted (app/ui/font_search.py finds them).
ImGui (1.92+) bakes a glyph into the atlas when it is first drawn, so a merged font costs only the
glyphs drawn. Where no font has a character, label() names an output by its number as well."""

from __future__ import annotations

from pathlib import Path

import imgui_bundle
from imgui_bundle import imgui

from ..datasets.source import problem_of
from .font_search import Face, faces_for

FONT_PIXELS = 15.0
UNDRAWN = "?"  # in place of a character no font has
_WANTED: set[str] = set()  # every character beyond ASCII that a text of the UI held


def want(*texts: str) -> None:
    """Texts the UI draws: their characters' fonts are merged before the next frame."""
    for text in texts:
        if not text.isascii():
            _WANTED.update(text)


def want_config(config) -> None:
    """The names a config brings (its outputs, classes, files), wanted before a frame shows them."""
    want(*config.target_labels())
    if config.dataset is not None:
        want(*problem_of(config.dataset).names, Path(config.dataset.get("csv", "")).name)
    if config.slang_target is not None:
        want(Path(config.slang_target["file"]).name)


def draws(text: str) -> bool:
    """Whether the current font draws every character of `text` (inside a frame)."""
    want(text)
    if text.isascii():
        return True
    font = imgui.get_font()
    return all(font.is_glyph_in_font(ord(c)) for c in set(text))


def drawable(text: str) -> str:
    """`text` with UNDRAWN for each character the current font cannot draw (ImGui's own stand-in,
    U+FFFD, looks the same for every character)."""
    if draws(text):
        return text
    font = imgui.get_font()
    return "".join(c if c.isascii() or font.is_glyph_in_font(ord(c)) else UNDRAWN for c in text)


def label(name: str, number: int, kind: str = "output", named: bool = False) -> str:
    """`name` (with `named`, "`kind` `name`") where the font draws it; else "`kind` `number`
    (`name` drawable)", so that two names no font has still differ: "output 2 (??)"."""
    if draws(name):
        return f"{kind} {name}" if named else name
    return f"{kind} {number} ({drawable(name)})"


class UiFont:
    """The font of one ImGui context: DroidSans, and the faces merged into it so far."""

    def __init__(self) -> None:
        io = imgui.get_io()
        path = Path(imgui_bundle.__file__).parent / "assets" / "fonts" / "DroidSans.ttf"
        if path.is_file():  # else ImGui's built-in 13 px bitmap font, which is hard to read
            io.font_default = io.fonts.add_font_from_file_ttf(str(path), FONT_PIXELS)
        self.font = io.font_default or io.fonts.fonts[0]
        self._checked: set[str] = set()
        self.merged: list[Face] = []

    def update(self) -> None:
        """Between frames (merging during one would discard the glyphs it is drawing with): the
        faces that have characters wanted since the last call, merged into the font."""
        new = _WANTED - self._checked
        if not new:
            return
        self._checked |= new
        lacking = [c for c in new if not self.font.is_glyph_in_font(ord(c))]
        for face in dict.fromkeys(faces_for(lacking).values()):
            if face in self.merged:
                continue
            config = imgui.ImFontConfig()
            config.merge_mode, config.dst_font, config.font_no = True, self.font, face.index
            try:
                merged = imgui.get_io().fonts.add_font_from_file_ttf(face.path, FONT_PIXELS, config)
            except Exception:  # ImGui's assertions, as Python errors: its characters show as UNDRAWN
                continue
            if merged is not None:
                self.merged.append(face)
