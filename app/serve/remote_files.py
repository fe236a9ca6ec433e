"""File's actions between the browser and the server: what the app saves is offered to the
viewer in control as a download, and an open action asks its page for a file to upload (the
upload then goes through the same action as a path typed on the server)."""

from __future__ import annotations

from pathlib import Path

from .downloads import Downloads
from .hub import Hub

ACCEPT = {
    "csv": ".csv",
    "image": ".png,.jpg,.jpeg",
    "shape": ".svg,.png,.jpg,.jpeg,.csv",
    "load": ".ckpt",
}  # the <input type=file> filters of File's open actions (app/ui/files.py)


class RemoteFiles:
    """The app's `remote`: app/ui/files.py calls it where the window would use a local dialog."""

    uploads = tuple(ACCEPT)

    def __init__(self, hub: Hub, downloads: Downloads):
        self.hub, self.downloads = hub, downloads

    def ask_upload(self, action: str) -> None:
        self.hub.tell_controller({"t": "pick", "action": action, "accept": ACCEPT.get(action, "")})

    def offer_download(self, path: Path) -> None:
        url = self.downloads.offer(path)
        self.hub.tell_controller({"t": "download", "url": url, "name": Path(path).name})
