"""The app without a window: frames rendered into a texture through the same frame() path.
Used by `--headless --screenshot`, the frame benchmark and the UI tests (which inject input)."""

from __future__ import annotations

import time
from collections.abc import Callable

from imgui_bundle import imgui

from ..loop.session import Session
from .frame import frame
from .renderer import UiRenderer, create_target, save_png
from .state import AppState


class OffscreenApp:
    def __init__(self, session: Session, width: int = 1280, height: int = 800):
        self.renderer = UiRenderer(session.gpu.device, width, height)
        self.app = AppState(session, self.renderer)
        self.target = create_target(session.gpu.device, width, height)
        self._last = time.perf_counter()

    @property
    def session(self) -> Session:
        return self.app.session

    def resize(self, width: int, height: int) -> None:
        """As a window resized by the user: later frames are drawn at the new size."""
        self.target = create_target(self.session.gpu.device, width, height)

    def frame(self, count: int = 1, force: bool = False) -> None:
        """`count` frames; each draws the UI where app.redraw wants it, or every one with `force`
        (the target then always shows the latest frame)."""
        for _ in range(count):
            now = time.perf_counter()
            size = (self.target.width, self.target.height)
            frame(self.app, size, lambda: self.target, max(now - self._last, 1e-4), force)
            self._last = now

    # ---- injected input (tests) ---------------------------------------------------------
    def move(self, x: float, y: float) -> None:
        self.renderer.make_current()
        imgui.get_io().add_mouse_pos_event(x, y)
        self.app.redraw.note_input()
        self.frame()

    def click(self, x: float, y: float) -> None:
        """Hover, press, release: one frame each, as a real click arrives."""
        self.move(x, y)
        self.renderer.make_current()
        imgui.get_io().add_mouse_button_event(0, True)
        self.app.redraw.note_input()
        self.frame()
        self.renderer.make_current()
        imgui.get_io().add_mouse_button_event(0, False)
        self.app.redraw.note_input()
        self.frame()

    def press(self, key: imgui.Key) -> None:
        """Key down, key up: one frame each, as a real key press arrives."""
        for down in (True, False):
            self.renderer.make_current()
            imgui.get_io().add_key_event(key, down)
            self.app.redraw.note_input()
            self.frame()

    def frames_until(self, done: Callable[[], bool], seconds: float = 60.0, force: bool = False) -> bool:
        """Frames until `done()` or `seconds` on the clock, whichever is first; returns done().
        Tests wait on the clock, not on a count of frames: how much a frame holds (pieces of a
        step, ranges of an evaluation) follows the machine's speed and load."""
        deadline = time.monotonic() + seconds
        while not done() and time.monotonic() < deadline:
            self.frame(force=force)
        return done()

    def frames_until_still(self, *names: str, most: int = 10) -> None:
        """Frames until the named items' rectangles are where they were a frame before. A panel
        that first grows its window past its height gets a scrollbar the frame after, which
        narrows it: wrapped text may take one more line and move the items below it."""
        before = None
        for _ in range(most):
            self.frame()
            now = [self.app.rects.get(name) for name in names]
            if now == before:
                return
            before = now

    def save(self, path: str) -> None:
        save_png(self.target, path)

    def close(self) -> None:
        self.session.cancel_rebuild()
        self.renderer.destroy()


def render_screenshot(session: Session, path: str, width: int = 1280, height: int = 800) -> None:
    """The full UI after a headless run, paused so that it shows exactly the trained network,
    with the run's loss history."""
    ui = OffscreenApp(session, width, height)
    try:
        ui.app.running = False
        ui.frame(3, force=True)  # the first frames measure text and settle the layout
        ui.save(path)
    finally:
        ui.close()
