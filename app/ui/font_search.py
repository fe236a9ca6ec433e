"""Which of the system's fonts have the characters the UI's own font lacks (a CSV column named
高さ): fontconfig's fonts in the order the user's settings prefer (`fc-match -s`, with the
characters of each) where fontconfig is installed, else the font files under KNOWN_FOLDERS;
FOLDERS_VARIABLE names folders searched instead of both. A candidate counts only once ImGui has
loaded it and found the characters in it (FontCheck)."""

from __future__ import annotations

import bisect
import os
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from imgui_bundle import imgui

FOLDERS_VARIABLE = "VISUAL_TRAINER_FONT_DIRS"
KNOWN_FOLDERS = ("/usr/share/fonts", "/usr/local/share/fonts", "~/.local/share/fonts", "~/.fonts")
FONT_SUFFIXES = (".ttf", ".otf", ".ttc", ".otc")  # what ImGui's rasteriser reads (TrueType, CFF)
_SIGNATURES = (b"\x00\x01\x00\x00", b"OTTO", b"true", b"ttcf")
_FC_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Face:
    path: str
    index: int  # the face's number in a font collection (.ttc); 0 in a single font


@dataclass(frozen=True)
class _Candidate:
    face: Face
    ranges: tuple[tuple[int, int], ...] | None  # fontconfig's character ranges; None: not known

    def may_have(self, char: str) -> bool:
        if self.ranges is None:
            return True
        k = bisect.bisect_right(self.ranges, (ord(char), 0x10FFFF)) - 1
        return k >= 0 and self.ranges[k][0] <= ord(char) <= self.ranges[k][1]


def search_source() -> str:
    """How fonts are found now: 'folders: ...', 'fontconfig' or 'known folders'."""
    folders = os.environ.get(FOLDERS_VARIABLE)
    if folders is not None:
        return f"folders: {folders}"
    return "fontconfig" if shutil.which("fc-match") else "known folders"


def faces_for(chars: Iterable[str]) -> dict[str, Face]:
    """The face that draws each of `chars`: the first in the search's order that has it; a
    character no font has is left out."""
    missing, found = set(chars), {}
    for candidate in _candidates(search_source()):
        wanted = {c for c in missing if candidate.may_have(c)}
        if not wanted:
            continue
        for char in _FONT_CHECK.has(candidate.face, wanted):
            found[char] = candidate.face
        missing -= found.keys()
        if not missing:
            break
    return found


@lru_cache(maxsize=4)
def _candidates(source: str) -> tuple[_Candidate, ...]:
    if source.startswith("folders: "):
        return _in_folders(folder for folder in source.removeprefix("folders: ").split(os.pathsep) if folder)
    if source == "fontconfig":
        listed = _fontconfig()
        if listed is not None:
            return listed
    return _in_folders(KNOWN_FOLDERS)


def _fontconfig() -> tuple[_Candidate, ...] | None:
    """fontconfig's fonts nearest a sans-serif, each with its characters; colour fonts (emoji
    bitmaps, which ImGui draws blank) left out. None where fc-match fails."""
    command = ["fc-match", "-s", "--format", "%{file}\t%{index}\t%{color}\t%{charset}\n", "sans-serif"]
    try:
        listed = subprocess.run(command, capture_output=True, text=True, timeout=_FC_TIMEOUT_S, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    candidates = {}
    for line in listed.splitlines():
        fields = line.split("\t")
        if len(fields) != 4 or fields[2] == "True" or not fields[0].lower().endswith(FONT_SUFFIXES):
            continue
        try:
            face = Face(fields[0], int(fields[1]) & 0xFFFF)  # above 16 bits: a variable font's named instance
            ranges = tuple(_range(part) for part in fields[3].split())
        except ValueError:
            continue
        candidates.setdefault(face, _Candidate(face, ranges))
    return tuple(candidates.values())


def _range(text: str) -> tuple[int, int]:
    low, _, high = text.partition("-")
    return int(low, 16), int(high or low, 16)


def _in_folders(folders: Iterable[str]) -> tuple[_Candidate, ...]:
    """The faces of the font files under `folders`, in order of their paths."""
    candidates = []
    for folder in folders:
        root = Path(folder).expanduser()
        if not root.is_dir():
            continue
        files = sorted(p for p in root.rglob("*") if p.suffix.lower() in FONT_SUFFIXES and p.is_file())
        for path in files:
            candidates += [_Candidate(Face(str(path), index), None) for index in range(_face_count(path))]
    return tuple(candidates)


def _face_count(path: Path) -> int:
    """Faces in the file: a collection's count, 1 for a font, 0 for what is no font. ImGui's loader
    ends the process on a file it cannot open: only files read here are handed to it."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(12)
    except OSError:
        return 0
    if head[:4] not in _SIGNATURES or len(head) < 12:
        return 0
    return int.from_bytes(head[8:12], "big") if head[:4] == b"ttcf" else 1


class FontCheck:
    """Whether ImGui finds characters in a face, the face loaded into an atlas of its own;
    answers are kept, so a face is read again only for characters not asked about before."""

    def __init__(self) -> None:
        self._answers: dict[tuple[Face, str], bool] = {}

    def has(self, face: Face, chars: set[str]) -> set[str]:
        new = {c for c in chars if (face, c) not in self._answers}
        if new:
            found = self._load(face, new)
            self._answers.update(((face, c), c in found) for c in new)
        return {c for c in chars if self._answers[(face, c)]}

    @staticmethod
    def _load(face: Face, chars: set[str]) -> set[str]:
        if face.index >= _face_count(Path(face.path)):
            return set()
        atlas = imgui.ImFontAtlas()
        config = imgui.ImFontConfig()
        config.font_no = face.index
        try:
            font = atlas.add_font_from_file_ttf(face.path, 13.0, config)
        except Exception:  # ImGui's assertions, raised as Python errors (a truncated file)
            return set()
        found = set() if font is None else {c for c in chars if font.is_glyph_in_font(ord(c))}
        atlas.clear()
        return found


_FONT_CHECK = FontCheck()
