"""A served sweep's window as a scripted viewer sees it (`visual-trainer sweep ... --serve PORT`):
the URL line, the frames through the WebSocket the page opens, how much of each shows trials, and
whether the window's process and port are gone. For tests/test_sweep.py's grid sweep, served, and
tests/test_sweep_serve.py's interrupted ones."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import aiohttp
import numpy as np
import simplejpeg

URL = re.compile(r"^serving: (http://127\.0\.0\.1:(\d+)/\?token=[A-Za-z0-9_-]+)$")
SIZE = (1024, 640)  # the page's, as the viewer reports it


async def sweep_frames(url: str, first_only: bool) -> list[bytes]:
    """The frames a viewer gets through the WebSocket the page opens: the first, or all until the
    server closes it."""
    base, _, token = url.partition("/?token=")
    frames = []
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(f"{base.replace('http', 'ws', 1)}/ws?token={token}") as socket_:
            await socket_.send_json({"t": "size", "w": SIZE[0], "h": SIZE[1], "dpr": 1})
            controls = []
            while True:
                message = await socket_.receive(timeout=240)
                if message.type == aiohttp.WSMsgType.TEXT and json.loads(message.data)["t"] == "control":
                    controls.append(json.loads(message.data)["you"])
                elif message.type == aiohttp.WSMsgType.BINARY:
                    frames.append(message.data)
                    if first_only:
                        break
                elif message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSING):
                    break
    assert controls and controls[-1] is True, "the only viewer controls"
    return frames


def frame_pixels(frame: bytes) -> np.ndarray:
    pixels = simplejpeg.decode_jpeg(frame)
    assert pixels.shape == (SIZE[1], SIZE[0], 3), "the size this viewer asked for"
    return pixels.astype(int)


def drawn_share(pixels: np.ndarray) -> float:
    """How much of the sweep window's lower part (the table, the scatter, the parallel coordinates
    once there are trials) is not its background."""
    height, width, _ = pixels.shape
    body = pixels[int(height * 0.3) : int(height * 0.9), int(width * 0.1) : int(width * 0.9)]
    colours, counts = np.unique(body.reshape(-1, 3) // 8, axis=0, return_counts=True)
    background = colours[counts.argmax()]
    return float(np.mean(np.abs(body // 8 - background).max(axis=2) > 1))


def refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except ConnectionRefusedError:
        return True
    return False


def windows_of(folder: Path) -> list[int]:
    """Processes serving `folder`'s sweep window."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--open-sweep" in command and str(folder.resolve()).encode() in command:
            found.append(int(entry.name))
    return found
