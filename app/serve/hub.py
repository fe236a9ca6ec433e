"""What the frame loop (main thread) and the server (its own thread and asyncio loop) share: the
input that viewers send, the newest encoded frame, messages for the viewer in control, and who
that is. Only the newest frame is kept: a slow viewer skips frames, nothing queues up."""

from __future__ import annotations

import asyncio
import itertools
import queue
import threading
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Frame:
    number: int  # increases by one for each frame published
    data: bytes  # the encoded image
    width: int
    height: int


@dataclass
class Viewer:
    number: int
    wake: asyncio.Event  # set (in the server's loop) when a frame or a message is waiting
    messages: list = field(default_factory=list)  # JSON-able dicts for this viewer, oldest first
    size: tuple[int, int, float] | None = None  # (width, height, devicePixelRatio) its page reported


ACTING_EVENTS = ("button", "key")  # input that acts in the frame that takes it: a frame then trains less
MAX_MESSAGES = 64  # a viewer that reads nothing keeps at most this many small messages


class Hub:
    def __init__(self) -> None:
        self.inputs: queue.SimpleQueue = queue.SimpleQueue()  # (viewer number, event dict)
        # Set when a button or a key arrives; the frame loop clears it as it takes the input.
        self.acting_input = threading.Event()
        self._lock = threading.Lock()
        self._frame: Frame | None = None
        self._numbers = itertools.count(1)
        self._viewers: dict[int, Viewer] = {}
        self.controller: int | None = None
        self.loop: asyncio.AbstractEventLoop | None = None  # the server's, once it runs
        self.bytes_sent = 0  # frames' bytes, all viewers together

    def put_input(self, viewer: int, event: dict) -> None:
        """An event from a page (or an upload done), for the frame loop."""
        self.inputs.put((viewer, event))
        if event.get("t") in ACTING_EVENTS:
            self.acting_input.set()

    # ---- the frame loop's side ----------------------------------------------------------
    def publish(self, data: bytes, width: int, height: int) -> None:
        with self._lock:
            number = self._frame.number + 1 if self._frame else 1
            self._frame = Frame(number, data, width, height)
        self._wake_all()

    def tell_controller(self, message: dict) -> None:
        """A message (a download, a file to pick, the clipboard) for the viewer in control."""
        with self._lock:
            viewer = self._viewers.get(self.controller) if self.controller is not None else None
            if viewer is not None:
                viewer.messages = [*viewer.messages, message][-MAX_MESSAGES:]
        self._wake_all()

    def controller_size(self) -> tuple[int, int, float] | None:
        with self._lock:
            viewer = self._viewers.get(self.controller) if self.controller is not None else None
            return viewer.size if viewer is not None else None

    def viewer_count(self) -> int:
        with self._lock:
            return len(self._viewers)

    # ---- the server's side (its asyncio loop) ------------------------------------------
    def newest(self) -> Frame | None:
        with self._lock:
            return self._frame

    def join(self) -> Viewer:
        """A new viewer; the first one (or the first after all left) takes control."""
        viewer = Viewer(next(self._numbers), asyncio.Event())
        with self._lock:
            self._viewers[viewer.number] = viewer
            if self.controller is None:
                self.controller = viewer.number
        self._announce()
        return viewer

    def leave(self, viewer: Viewer) -> None:
        """Control passes to the viewer that has watched longest."""
        with self._lock:
            self._viewers.pop(viewer.number, None)
            if self.controller == viewer.number:
                self.controller = min(self._viewers) if self._viewers else None
        self._announce()

    def take_control(self, viewer: Viewer) -> None:
        with self._lock:
            if viewer.number in self._viewers:
                self.controller = viewer.number
        self._announce()

    def take_messages(self, viewer: Viewer) -> list:
        with self._lock:
            messages, viewer.messages = viewer.messages, []
            return messages

    def _announce(self) -> None:
        """Every viewer learns whether it controls and how many watch."""
        with self._lock:
            for viewer in self._viewers.values():
                state = {"t": "control", "you": viewer.number == self.controller, "viewers": len(self._viewers)}
                viewer.messages = [m for m in viewer.messages if m.get("t") != "control"] + [state]
        self._wake_all()

    def _wake_all(self) -> None:
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        with self._lock:
            events = [viewer.wake for viewer in self._viewers.values()]
        for event in events:
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # the loop closed meanwhile: the server is stopping
                return
