"""Saving the frame just drawn as a PNG, for the desktop window and the served one alike."""

from __future__ import annotations

import slangpy as spy

from ..errors import first_line
from ..files.atomic import made_whole
from .renderer import save_png


def save_screenshot(app, target: spy.Texture, path: str) -> bool:
    """`target` as a PNG at `path`, which appears whole (a script watching for it never reads half of
    it); the window says whether it was saved. A failure (a full disk, say) leaves the session going."""
    try:
        made_whole(path, lambda temporary: save_png(target, str(temporary)))
    except Exception as error:
        app.say(f"screenshot not saved: {first_line(error)}")
        return False
    app.say(f"screenshot saved: {path}")
    return True
