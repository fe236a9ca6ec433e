"""What persists between window sessions, in one JSON file in the app's cache folder: the last
config (read here, by the CLI) and the view (the window's layout and preferences, which
app/ui/settings.py fills in and reads)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..config import config as cfg
from ..config.records import from_dict
from ..errors import UserError
from ..gpu.device import cache_dir
from ..truth import image_truth
from .atomic import write_atomic


def settings_path() -> Path:
    return cache_dir() / "settings.json"


def load(path: Path | None = None) -> dict:
    """The saved settings, or {} when there are none or they can't be read (never fatal)."""
    path = path or settings_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # missing, not UTF-8, not JSON, nested too deep
        return {}
    return data if isinstance(data, dict) else {}


def saved_config(data: dict) -> cfg.Config | None:
    try:
        config = from_dict(data["config"], source="saved settings") if "config" in data else None
    except UserError as error:
        print(f"note: ignoring the saved config ({error})", file=sys.stderr)
        return None
    if config is not None and config.image:  # the image file may be gone or changed since
        try:
            image_truth.pixels_of(config.image)
        except UserError as error:
            print(f"note: the saved image target is not used ({error})", file=sys.stderr)
            config = config.replace(image=None, domain=list(cfg.Config().domain))
    return _without_lost_csv(config) if config is not None else None


def _without_lost_csv(config: cfg.Config) -> cfg.Config:
    """The saved config, but the formulas where its CSV of points is gone or has changed: the
    window opens anyway, and says why."""
    if not (config.dataset and "csv" in config.dataset):
        return config
    from .. import datasets

    try:
        datasets.load_csv(config.dataset)
    except UserError as error:
        print(f"note: the saved dataset is left out ({error})", file=sys.stderr)
        return config.replace(dataset=None, domain=cfg.Config().domain)
    return config


def save(config: cfg.Config | None, view: dict, path: Path | None = None) -> None:
    """Writes `config` and `view`; with config None the config saved before is kept. Atomic: a
    crash mid-way leaves the previous file."""
    path = path or settings_path()
    data = {"view": view}
    if config is not None:
        data["config"] = config.to_dict()
    elif "config" in (previous := load(path)):
        data["config"] = previous["config"]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, (json.dumps(data, indent=2) + "\n").encode())
    except OSError as error:  # a read-only home costs the saved layout, not the session
        print(f"note: could not save settings to {path}: {error}", file=sys.stderr)
