"""Files dropped on the window (or on the served page, which uploads them): which of File's open
actions each opens, by its suffix. A mesh or an SVG opens as a shape; an image or a CSV as a shape
while a shape trains, else as the image target or the points; a .ckpt loads."""

from __future__ import annotations

from pathlib import Path

ALWAYS = {".ckpt": "load", ".obj": "shape", ".ply": "shape", ".stl": "shape", ".off": "shape", ".svg": "shape"}
OTHERWISE = {".png": "image", ".jpg": "image", ".jpeg": "image", ".csv": "csv"}  # as shapes while one trains
KINDS = "a mesh (.obj .ply .stl .off), an SVG, an image (.png .jpg), a CSV or a .ckpt"


def drop_action(path: str, shape_trains: bool) -> str | None:
    """The File action (app/ui/files.py ACTIONS) that opens `path`, or None for a kind it cannot."""
    suffix = Path(path).suffix.lower()
    if suffix in ALWAYS:
        return ALWAYS[suffix]
    if suffix in OTHERWISE:
        return "shape" if shape_trains else OTHERWISE[suffix]
    return None


def refusal(path: str) -> str:
    return f"cannot open {Path(path).name}: drop {KINDS}"
