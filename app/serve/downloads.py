"""Files the app offers to the browser (a checkpoint saved, a Slang export, a screenshot, a
network.json): each under a random key, so that a download URL names only a file the app chose
and never reaches another path on the server."""

from __future__ import annotations

import secrets
import threading
from pathlib import Path
from urllib.parse import quote


class Downloads:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._offered: dict[str, Path] = {}

    def offer(self, path: Path) -> str:
        """The URL path (without the token) at which `path` can be downloaded."""
        key = secrets.token_urlsafe(12)
        with self._lock:
            self._offered[key] = Path(path)
        return f"/download/{key}/{quote(Path(path).name)}"

    def find(self, key: str, name: str) -> Path | None:
        """The file offered under `key`, if `name` is its own name and it is still a file."""
        with self._lock:
            path = self._offered.get(key)
        if path is None or path.name != name or not path.is_file():
            return None
        return path
