"""What persists between sessions: the last config, the window layout (ImGui ini) and a few
view preferences, in one JSON file in the app's cache folder."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

from imgui_bundle import imgui

from app import config as cfg
from app.device import cache_dir
from app.errors import UserError


def settings_path() -> Path:
    return cache_dir() / "settings.json"


def load(path: Optional[Path] = None) -> dict:
    """The saved settings, or {} when there are none or they can't be read (never fatal)."""
    path = path or settings_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def saved_config(data: dict) -> Optional[cfg.Config]:
    try:
        return cfg.from_dict(data["config"], source="saved settings") if "config" in data else None
    except UserError as error:
        print(f"note: ignoring saved config ({error})", file=sys.stderr)
        return None


def restore_view(app, data: dict) -> None:
    view = data.get("view", {})
    if isinstance(view.get("ini"), str):
        imgui.load_ini_settings_from_memory(view["ini"])
    if isinstance(view.get("steps_per_frame"), int) and 1 <= view["steps_per_frame"] <= 256:
        app.steps_per_frame = view["steps_per_frame"]
    if isinstance(view.get("image_em"), (int, float)) and 3 <= view["image_em"] <= 20:
        app.layout.image_em = float(view["image_em"])
    outputs = view.get("outputs")
    if isinstance(outputs, list) and all(isinstance(o, int) for o in outputs):
        valid = [o for o in outputs if 0 <= o < app.config.output_dim]
        app.layout.outputs = valid or None


def save(app, vsync: bool, path: Optional[Path] = None) -> None:
    path = path or settings_path()
    view = {"ini": imgui.save_ini_settings_to_memory(), "steps_per_frame": app.steps_per_frame,
            "image_em": app.layout.image_em, "vsync": vsync,
            "outputs": None if app.layout.outputs is None else list(app.layout.outputs)}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"config": app.config.to_dict(), "view": view}, indent=2) + "\n")
    except OSError as error:  # a read-only home costs the saved layout, not the session
        print(f"note: could not save settings to {path}: {error}", file=sys.stderr)
