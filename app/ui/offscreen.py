"""The app without a window: frames rendered into a texture through the same frame() path.
Used by `--headless --screenshot`, the frame benchmark and the UI tests (which inject input)."""

from __future__ import annotations

import time

from imgui_bundle import imgui

from app.trainer import Trainer
from app.ui.frame import frame
from app.ui.renderer import UiRenderer, create_target, save_png
from app.ui.state import AppState


class OffscreenApp:
    def __init__(self, trainer: Trainer, width: int = 1280, height: int = 800,
                 backend: str | None = None):
        self.renderer = UiRenderer(trainer.device, width, height, backend=backend)
        self.app = AppState(trainer.device, trainer, self.renderer)
        self.target = create_target(trainer.device, width, height)
        self._last = time.perf_counter()

    def frame(self, count: int = 1) -> None:
        for _ in range(count):
            now = time.perf_counter()
            frame(self.app, self.target, max(now - self._last, 1e-4))
            self._last = now

    # ---- injected input (tests) ---------------------------------------------------------
    def move(self, x: float, y: float) -> None:
        self.renderer.make_current()
        imgui.get_io().add_mouse_pos_event(x, y)
        self.frame()

    def click(self, x: float, y: float) -> None:
        """Hover, press, release: one frame each, as a real click arrives."""
        self.move(x, y)
        io = imgui.get_io()
        io.add_mouse_button_event(0, True)
        self.frame()
        self.renderer.make_current()
        imgui.get_io().add_mouse_button_event(0, False)
        self.frame()

    def save(self, path: str) -> None:
        save_png(self.target, path)

    def close(self) -> None:
        if self.app.rebuild is not None:
            self.app.rebuild.cancel()
        self.renderer.destroy()


def render_screenshot(trainer: Trainer, path: str, width: int = 1280, height: int = 800) -> None:
    """The full UI after a headless run, paused so it shows exactly the trained network."""
    ui = OffscreenApp(trainer, width, height)
    try:
        ui.app.running = False
        ui.app.load_history()
        ui.frame(3)  # the first frames measure text and settle the layout
        ui.save(path)
    finally:
        ui.close()
    print(f"screenshot: {path}")
