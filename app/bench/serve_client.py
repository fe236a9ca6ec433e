"""A scripted viewer of the served window (app/bench/serve.py): an aiohttp WebSocket client with an
asyncio loop in a thread of its own, which counts the frames and bytes it receives, sends input as
the page does, and keeps the frames that arrive while a measurement records them."""

from __future__ import annotations

import asyncio
import threading
import time

import aiohttp


class ScriptedViewer:
    def __init__(self, url: str):
        """`url`: the one the server prints, http://HOST:PORT/?token=..."""
        base, _, query = url.partition("/?")
        self.socket_url = base.replace("http", "ws", 1) + "/ws?" + query
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="scripted viewer", daemon=True)
        self._socket: aiohttp.ClientWebSocketResponse | None = None
        self._session: aiohttp.ClientSession | None = None
        self._reader: asyncio.Future | None = None
        self._arrived = threading.Condition()
        self.frames = 0  # frames received
        self.bytes = 0  # their bytes
        self.newest: bytes | None = None  # the newest frame's JPEG
        self._recording: list[tuple[float, bytes]] | None = None

    # ---- from the measuring thread ------------------------------------------------------------
    def connect(self, width: int, height: int, timeout: float = 60.0) -> None:
        """Opens the socket and reports the page's size, as a page of `width` x `height` does."""
        self._thread.start()
        self._call(self._connect(), timeout)
        self.send({"t": "size", "w": width, "h": height, "dpr": 1.0})

    def send(self, *events: dict) -> None:
        """Events, in order, as the page sends them (JSON text messages)."""
        self._call(self._send(events), 10.0)

    def counts(self) -> tuple[int, int, float]:
        """(frames, bytes, now): read together."""
        with self._arrived:
            return self.frames, self.bytes, time.perf_counter()

    def wait_frames(self, count: int, timeout: float) -> bool:
        """Until `count` more frames have arrived; False at the timeout."""
        deadline = time.perf_counter() + timeout
        with self._arrived:
            goal = self.frames + count
            while self.frames < goal:
                left = deadline - time.perf_counter()
                if left <= 0:
                    return False
                self._arrived.wait(left)
        return True

    def record(self) -> list[tuple[float, bytes]]:
        """From now on, every frame that arrives is kept as (arrival time, JPEG bytes) in the list
        returned (growing as they come) until stop_recording()."""
        with self._arrived:
            self._recording = []
            return self._recording

    def stop_recording(self) -> None:
        with self._arrived:
            self._recording = None

    def wait_arrival(self, after: int, timeout: float) -> bool:
        """Until the recording holds more than `after` frames; False at the timeout."""
        deadline = time.perf_counter() + timeout
        with self._arrived:
            while self._recording is not None and len(self._recording) <= after:
                left = deadline - time.perf_counter()
                if left <= 0:
                    return False
                self._arrived.wait(left)
        return True

    def cpu_seconds(self) -> float:
        """CPU time the viewer's own thread has used (receiving, parsing, sending)."""
        return self._call(self._thread_time(), 10.0)

    def close(self) -> None:
        if self._thread.is_alive():
            try:
                self._call(self._close(), 10.0)
            finally:
                self._loop.call_soon_threadsafe(self._loop.stop)
                self._thread.join(timeout=5)

    def _call(self, coroutine, timeout: float):
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    # ---- in the viewer's loop -----------------------------------------------------------------
    async def _connect(self) -> None:
        self._session = aiohttp.ClientSession()
        self._socket = await self._session.ws_connect(self.socket_url, max_msg_size=0, autoping=True)
        self._reader = asyncio.ensure_future(self._read())

    async def _send(self, events) -> None:
        for event in events:
            await self._socket.send_json(event)

    async def _read(self) -> None:
        async for message in self._socket:
            if message.type == aiohttp.WSMsgType.BINARY:
                now = time.perf_counter()
                with self._arrived:
                    self.frames += 1
                    self.bytes += len(message.data)
                    self.newest = message.data
                    if self._recording is not None:
                        self._recording.append((now, message.data))
                    self._arrived.notify_all()

    async def _thread_time(self) -> float:
        return time.thread_time()

    async def _close(self) -> None:
        if self._socket is not None:
            await self._socket.close()
        if self._reader is not None:
            self._reader.cancel()
        if self._session is not None:
            await self._session.close()
