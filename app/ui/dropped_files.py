"""Files dropped on the window (or on the served page, which uploads them): which of File's open
actions each opens, by its suffix. A mesh or an SVG opens as a shape; an image or a CSV as a shape
while a shape trains, else as the image target or the points; a .ckpt loads."""

from __future__ import annotations

from pathlib import Path

from ..truth.sdf_truth import is_file_spec
from ..truth.shapes import SILHOUETTE_SUFFIXES

CHECKPOINT_SUFFIX = ".ckpt"
KINDS = "a mesh (.obj .ply .stl .off), an SVG, an image (.png .jpg), a CSV or a .ckpt"


def drop_action(path: str, shape_trains: bool) -> str | None:
    """The File action (app/ui/files.py ACTIONS) that opens `path`, or None for a kind it cannot.
    A shape's file kinds are the shapes' own (sdf_truth.is_file_spec); of them, images and CSVs
    open as the image target or points unless a shape trains."""
    suffix = Path(path).suffix.lower()
    if suffix == CHECKPOINT_SUFFIX:
        return "load"
    if not is_file_spec(path):
        return None
    if shape_trains:
        return "shape"
    return "image" if suffix in SILHOUETTE_SUFFIXES else "csv" if suffix == ".csv" else "shape"


def refusal(path: str) -> str:
    return f"cannot open {Path(path).name}: drop {KINDS}"
