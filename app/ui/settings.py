"""The view part of the saved settings (app.saved holds the file and the config part): the
window layout (ImGui's ini text), a few view preferences and the user's own target expressions
(the target menu's "yours")."""

from __future__ import annotations

from imgui_bundle import imgui

from .. import saved
from ..errors import UserError
from ..targets import parse_target
from ..ui.target_edits import MAX_MINE


def restore_view(app, data: dict) -> None:
    view = data.get("view", {})
    if not isinstance(view, dict):
        return
    if isinstance(view.get("ini"), str):
        imgui.load_ini_settings_from_memory(view["ini"])
    if isinstance(view.get("image_em"), (int, float)) and 3 <= view["image_em"] <= 20:
        app.layout.image_em = float(view["image_em"])
    outputs = view.get("outputs")
    if isinstance(outputs, list) and all(isinstance(o, int) for o in outputs):
        app.layout.outputs = [o for o in outputs if 0 <= o < app.config.output_dim] or None
    if isinstance(view.get("vsync"), bool):
        app.vsync = view["vsync"]
    mine = view.get("my_targets")
    if isinstance(mine, list):
        app.targets.mine = [text for text in mine[:MAX_MINE] if _valid_target(text)]


def _valid_target(text) -> bool:
    """Only what the grammar accepts comes back from the file (it may have been edited)."""
    try:
        parse_target(text)
    except UserError:
        return False
    return True


def save(app) -> None:
    """Saves the view and the config worth restoring (never one that just diverged)."""
    view = {
        "ini": imgui.save_ini_settings_to_memory(),
        "image_em": app.layout.image_em,
        "vsync": app.vsync,
        "outputs": None if app.layout.outputs is None else list(app.layout.outputs),
        "my_targets": list(app.targets.mine),
    }
    saved.save(app.session.restorable_config(), view)
