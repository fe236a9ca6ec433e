"""The HTTP and WebSocket server (aiohttp) in a thread of its own: the page, the frames, input
back, uploads and downloads. Every request needs the token (403 without it) and, where the browser
names one, this server's own Origin, so another site open in the same browser cannot drive the app."""

from __future__ import annotations

import asyncio
import hmac
import json
import math
import re
import secrets
import threading
from importlib import resources
from pathlib import Path

from aiohttp import WSMsgType, web

from ..errors import UserError, first_line
from .address import ServeAddress
from .downloads import Downloads
from .hub import Hub, Viewer

UPLOAD_LIMIT = 256 * 1024 * 1024  # bytes in one upload; the app's own readers limit each kind further
UPLOAD_ACTIONS = ("csv", "image", "shape", "load", "drop")  # File's actions that read a file (app/ui/files.py)
MAX_INPUT_MESSAGE = 1024 * 1024  # a pasted text's bytes, say: more is refused
PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",  # the token in the URL goes nowhere else
    "Content-Security-Policy": "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src blob: data:; connect-src 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
}


def page_html() -> bytes:
    return resources.files(__package__).joinpath("page", "index.html").read_bytes()


class Server:
    def __init__(self, hub: Hub, address: ServeAddress, downloads: Downloads, uploads: Path):
        self.hub, self.address, self.downloads, self.uploads = hub, address, downloads, uploads
        self.port = address.port
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._failure: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None

    # ---- the app's side ---------------------------------------------------------------------
    def start(self) -> None:
        """Binds and serves in a thread; a UserError where it cannot bind."""
        self._thread = threading.Thread(target=self._run, name="serve", daemon=True)
        self._thread.start()
        self._started.wait()
        if self._failure is not None:
            raise UserError(self._failure)

    def stop(self) -> None:
        loop, stopping = self._loop, self._stopping
        if loop is not None and stopping is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(stopping.set)
            except RuntimeError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def url(self) -> str:
        scheme = "https" if self.address.tls else "http"
        host = f"[{self.address.host}]" if ":" in self.address.host else self.address.host
        return f"{scheme}://{host}:{self.port}/?token={self.address.token}"

    # ---- the server's thread ----------------------------------------------------------------
    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._serve())
        except Exception as error:  # an address that does not resolve, say: one line, not a traceback
            self._failure = (
                self._failure or f"cannot serve on {self.address.host}:{self.address.port}: {first_line(error)}"
            )
        finally:
            self._started.set()
            loop.close()

    async def _serve(self) -> None:
        self._stopping = asyncio.Event()
        app = web.Application(middlewares=[self._token_check], client_max_size=UPLOAD_LIMIT)
        app.router.add_get("/", self._page)
        app.router.add_get("/ws", self._socket)
        app.router.add_post("/upload", self._upload)
        app.router.add_get("/download/{key}/{name}", self._download)
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
        await runner.setup()
        site = web.TCPSite(runner, self.address.host, self.address.port, ssl_context=self.address.tls)
        try:
            await site.start()
        except OSError as error:
            self._failure = (
                f"cannot serve on {self.address.host}:{self.address.port}: {error.strerror or first_line(error)}"
            )
            await runner.cleanup()
            return
        self.port = runner.addresses[0][1]
        self.hub.loop = asyncio.get_running_loop()
        self._started.set()
        await self._stopping.wait()
        await runner.cleanup()

    @web.middleware
    async def _token_check(self, request: web.Request, handler):
        given = request.query.get("token", "")
        if not hmac.compare_digest(given.encode(), self.address.token.encode()):
            return web.Response(status=403, text="forbidden: this URL needs the token the server printed\n")
        if not self._origin_allowed(request):
            return web.Response(status=403, text="forbidden: a page of another site may not drive this app\n")
        return await handler(request)

    async def _page(self, request: web.Request) -> web.Response:
        return web.Response(body=page_html(), content_type="text/html", charset="utf-8", headers=PAGE_HEADERS)

    def _origin_allowed(self, request: web.Request) -> bool:
        """A browser names the page's origin on a WebSocket and a POST (and on any request of
        another site's page): it must be this server's own. A request with no Origin is a
        navigation, a download or no browser's (the token still applies)."""
        origin = request.headers.get("Origin")
        if origin is None:
            return True
        scheme = "https" if self.address.tls else "http"
        return origin == f"{scheme}://{request.host}"

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        # No permessage-deflate: JPEG frames do not shrink, and aiohttp deflates a large frame in a
        # shielded task that fails unretrieved (a traceback) when the viewer leaves mid-send.
        socket = web.WebSocketResponse(max_msg_size=MAX_INPUT_MESSAGE, heartbeat=20.0, compress=False)
        await socket.prepare(request)
        viewer = self.hub.join()
        await socket.send_json({"t": "hello", "viewer": viewer.number})
        sender = asyncio.ensure_future(self._send(socket, viewer))
        try:
            async for message in socket:
                if message.type == WSMsgType.TEXT:
                    self._received(viewer, message.data)
        finally:
            sender.cancel()
            self.hub.leave(viewer)
        return socket

    def _received(self, viewer: Viewer, text: str) -> None:
        try:
            event = json.loads(text)
        except (ValueError, RecursionError):  # '[' nested 100,000 deep fits in one message
            return
        if not isinstance(event, dict):
            return
        if event.get("t") == "take":
            self.hub.take_control(viewer)
            return
        if event.get("t") == "upload":  # made by /upload alone, once the file is kept
            return
        if event.get("t") == "size":
            viewer.size = _size_of(event) or viewer.size
        if self.hub.controller == viewer.number:  # watchers' input goes nowhere
            self.hub.put_input(viewer.number, event)

    async def _send(self, socket: web.WebSocketResponse, viewer: Viewer) -> None:
        """The newest frame and the viewer's messages, as they come. send_bytes waits while the
        socket's buffer is full, and only the newest frame is taken then: a viewer that reads
        slowly, or not at all, skips frames instead of queueing them."""
        sent = 0
        viewer.wake.set()
        try:
            while not socket.closed:
                await viewer.wake.wait()
                viewer.wake.clear()
                for message in self.hub.take_messages(viewer):
                    await socket.send_json(message)
                frame = self.hub.newest()
                if frame is not None and frame.number != sent:
                    await socket.send_bytes(frame.data)
                    sent = frame.number
                    self.hub.bytes_sent += len(frame.data)
        except ConnectionError:  # the viewer left mid-send: its handler ends the socket
            return

    async def _upload(self, request: web.Request) -> web.Response:
        """A file for one of File's open actions, from the viewer in control: saved under the
        uploads folder and handed to the frame loop, which checks it as a local file."""
        action = request.query.get("action", "")
        viewer = request.query.get("viewer", "")
        if action not in UPLOAD_ACTIONS:
            return web.json_response({"error": f"uploads are for {', '.join(UPLOAD_ACTIONS)}"}, status=400)
        if not viewer.isdigit() or int(viewer) != self.hub.controller:
            return web.json_response({"error": "only the viewer in control can upload"}, status=409)
        try:
            data = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return web.json_response({"error": f"uploads are limited to {UPLOAD_LIMIT // 2**20} MiB"}, status=413)
        folder = self.uploads / secrets.token_hex(8)
        path = folder / safe_name(request.query.get("name", ""))
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        except OSError as error:
            return web.json_response({"error": f"cannot keep the upload: {error.strerror or error}"}, status=507)
        self.hub.put_input(int(viewer), {"t": "upload", "action": action, "path": str(path)})
        return web.json_response({"ok": True, "bytes": len(data)})

    async def _download(self, request: web.Request) -> web.StreamResponse:
        path = self.downloads.find(request.match_info["key"], request.match_info["name"])
        if path is None:
            return web.Response(status=404, text="no such download\n")
        disposition = f'attachment; filename="{safe_name(path.name)}"'
        return web.FileResponse(path, headers={"Content-Disposition": disposition, "Cache-Control": "no-store"})


def safe_name(name: str) -> str:
    """A file name from the browser as a plain name of letters, digits, '.', '-' and '_': no folder,
    no hidden file."""
    base = re.sub(r"[^A-Za-z0-9._-]", "_", name.replace("\\", "/").rsplit("/", 1)[-1]).lstrip(".")
    suffix = Path(base).suffix[:16]  # kept where a long name is cut: a shape's kind follows it
    return base[: 120 - len(suffix)] + suffix if len(base) > 120 else base or "upload"


def _size_of(event: dict) -> tuple[int, int, float] | None:
    """A page's size in device pixels and its ratio; None unless all are finite numbers (Python's
    JSON reads NaN and Infinity, which the frame loop could not round)."""
    values = (event.get("w"), event.get("h"), event.get("dpr", 1.0))
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values):
        return None
    width, height, ratio = values
    return int(width), int(height), float(ratio)
