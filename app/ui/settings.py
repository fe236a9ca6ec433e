"""The view part of the saved settings (app.files.saved holds the file and the config part): the
window's size and position (read back by app/ui/placement.py), its layout (ImGui's ini text and
the panels' ratios once the user has dragged a splitter), a few view preferences and the user's own target expressions (the target menu's "yours").
`--fresh` starts from none of it: the CLI then passes no saved settings."""

from __future__ import annotations

from imgui_bundle import imgui

from ..errors import UserError
from ..files import saved
from ..truth.targets import parse_target
from . import layout
from .placement import Placement
from .target_edits import MAX_MINE


def restore_view(app, data: dict) -> None:
    view = data.get("view", {})
    if not isinstance(view, dict):
        return
    app.renderer.make_current()
    if isinstance(view.get("ini"), str):
        imgui.load_ini_settings_from_memory(view["ini"])
    app.dock.ratios = layout.restored(view.get("panel_ratios"))  # checked against the panels when built
    # The heatmaps' size the user set ("heatmap_em"); none: it follows the window. Earlier
    # versions saved their fixed size as "image_em" whether set or not: it is left behind.
    chosen = view.get("heatmap_em")
    if isinstance(chosen, (int, float)) and 3 <= chosen <= 20:
        app.layout.image_em, app.layout.fitted = float(chosen), False
    outputs = view.get("outputs")
    if isinstance(outputs, list) and all(isinstance(o, int) for o in outputs):
        app.layout.outputs = [o for o in outputs if 0 <= o < app.config.output_dim] or None
    if isinstance(view.get("vsync"), bool):
        app.vsync = view["vsync"]
    mine = view.get("my_targets")
    if isinstance(mine, list):
        app.targets.mine = [text for text in mine[:MAX_MINE] if _valid_target(text)]


def _valid_target(text) -> bool:
    """Only what the grammar accepts comes back from the file (it may have been edited): any of
    x, y and z, as the user may have saved a 3D run's."""
    try:
        parse_target(text, dims=3)
    except UserError:
        return False
    return True


def save(app, window: Placement | None = None) -> None:
    """Saves the view, with the `window`'s size and position where there is one (the real
    window's, app/ui/placement.py), and the config worth restoring (never one that just diverged)."""
    app.renderer.make_current()
    ratios = app.dock.ratios
    view = {
        "ini": imgui.save_ini_settings_to_memory(),
        "panel_ratios": None if ratios is None else list(ratios),
        "heatmap_em": None if app.layout.fitted else app.layout.image_em,
        "vsync": app.vsync,
        "outputs": None if app.layout.outputs is None else list(app.layout.outputs),
        "my_targets": list(app.targets.mine),
        "window": None if window is None else window.to_dict(),
    }
    # Closed while the restored network was still being built: that network, not the placeholder.
    saved.save(app.restoring or app.session.restorable_config(), view)
