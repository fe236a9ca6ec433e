"""The desktop window: a spy.Window and a swapchain on the training device, driven by frame().
Only wiring lives here: events in, frames out, settings saved on the way out."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import slangpy as spy
from slangpy.ui import imgui_bundle as spy_imgui

from ..files.start import Start
from ..gpu.gpu import Gpu
from . import fonts, settings, x_errors
from .frame import frame
from .opening import Launch, open_app
from .placement import Placement, launch_placement, saved_placement, screen_size
from .renderer import UiRenderer, create_target
from .restore import save_on_exit
from .screenshot import save_screenshot
from .state import AppState

MINIMISED_SLEEP_S = 0.05
IDLE_FRAME_S = 1 / 60  # a frame that drew nothing, paused, lasts at least this long
LOST_AFTER_FAILURES = 5
EXIT_SIGNALS = (signal.SIGINT, signal.SIGTERM)  # Ctrl+C, kill: end the loop, autosave, exit 0


@dataclass
class WindowOptions:
    width: int | None = None  # None: as the window last closed, else 1280 x 800 (app/ui/placement.py)
    height: int | None = None
    screenshot: str | None = None  # where --screenshot-after saves (else the F12 folder)
    screenshot_after: int | None = None  # for tests and scripted screenshots of the real window
    on_frame: Callable[[AppState], None] | None = None  # called after each frame (the soak)
    save_settings: bool = True  # a scripted run leaves the user's saved settings alone
    launch: Launch = field(default_factory=lambda: Launch())  # vsync, the autosave offered, the notice


class _Window:
    def __init__(self, options: WindowOptions, app: AppState, renderer: UiRenderer, placement: Placement):
        self.app, self.renderer, self.options = app, renderer, options
        x_errors.install()  # a window destroyed mid-present must not end the process (exit 1)
        self.window = spy.Window(
            width=placement.width, height=placement.height, title="Slang Visual Trainer", resizable=True
        )
        if placement.x is not None:
            self.window.position = spy.int2(placement.x, placement.y)
        self.opened = placement
        self.surface = app.gpu.device.create_surface(self.window)
        self.size = (0, 0)
        self.vsync = app.vsync
        self.lost = False  # destroyed from outside: nothing of it may be touched again
        self.failures = 0  # frames in a row that could not be presented
        self.window.on_mouse_event = self._mouse
        self.window.on_keyboard_event = self._keyboard
        self.window.on_drop_files = self._drop_files

    def _mouse(self, event: spy.MouseEvent) -> None:
        self.renderer.make_current()
        self.app.redraw.note_input()
        spy_imgui.handle_mouse_event(event)

    def _drop_files(self, paths) -> None:
        self.app.redraw.note_input()
        self.app.files.drop(paths)

    def _keyboard(self, event: spy.KeyboardEvent) -> None:
        self.renderer.make_current()
        self.app.redraw.note_input()
        if event.type == spy.KeyboardEventType.key_press and event.key == spy.KeyCode.f12:
            self.app.request_screenshot()
        # Ctrl+Q from the window's own key event, not only from ImGui's key state (menu.py): right
        # after the first frames on a CPU driver, ImGui missed a Ctrl+Q sent by xdotool and then
        # every later one (the app never quit; tests/test_ui_window_autosave.py, cold shader cache)
        if event.is_key_press() and event.key == spy.KeyCode.q and event.has_modifier(spy.KeyModifier.ctrl):
            self.app.quit = True
        if event.type == spy.KeyboardEventType.input:  # a typed character's font, merged before the next frame
            fonts.want(chr(event.codepoint))
        spy_imgui.handle_keyboard_event(event)

    def placement(self) -> Placement:
        """Where the window is now, to open there next time; where it opened, if it is gone or
        minimised (nothing of it to read)."""
        if self.lost or self.window.width == 0 or self.window.height == 0:
            return self.opened
        position = self.window.position
        return Placement(self.window.width, self.window.height, position.x, position.y)

    def close(self) -> None:
        if self.lost:  # closing a window X has destroyed makes Xlib end the process
            return
        self.surface.unconfigure()
        self.window.close()

    @property
    def format(self) -> spy.Format:
        """The swapchain's format: one without sRGB encoding, as the offscreen target is. The UI
        renderer writes sRGB-encoded colours itself; an sRGB swapchain (the surface's preferred
        one on Mesa) encoded them once more, and every colour on screen came out washed out
        (the dark panels' 23, 26, 31 as 85, 89, 97)."""
        formats = self.surface.info.formats
        for candidate in (spy.Format.bgra8_unorm, spy.Format.rgba8_unorm):
            if candidate in formats:
                return candidate
        return self.surface.info.preferred_format

    def configure(self) -> bool:
        """(Re)creates the swapchain after a resize or vsync toggle; False while minimised."""
        size = (self.window.width, self.window.height)
        if size[0] == 0 or size[1] == 0:
            return False
        if size != self.size or self.vsync != self.app.vsync:
            self.app.gpu.device.wait()
            self.surface.configure(width=size[0], height=size[1], format=self.format, vsync=self.app.vsync)
            self.size, self.vsync = size, self.app.vsync
            self.app.redraw.invalidate()  # new swapchain images hold nothing yet
        return True

    def render(self, delta_time: float) -> bool:
        """One frame; False where it kept what the window shows (nothing presented)."""
        path = self.app.screenshot_path
        if path:  # this frame goes to a texture that can be saved; the window keeps the last one
            self.app.screenshot_path = None
            target = create_target(self.app.gpu.device, *self.size)
            frame(self.app, self.size, lambda: target, delta_time, force=True)
            self.app.redraw.invalidate()  # the window did not get that frame
            if not save_screenshot(self.app, target, path):
                return False  # nothing drawn for the window: the loop waits out an idle frame
            print(f"screenshot: {path}", flush=True)
            return True
        try:
            image = frame(self.app, self.size, lambda: quietly(self.surface.acquire_next_image), delta_time)
            if image is None:
                return False
            quietly(self.surface.present)
            self.failures = 0
            return True
        except RuntimeError:
            # A resize between configure() and present() leaves the swapchain out of date
            # (VK_ERROR_OUT_OF_DATE_KHR, logged by sgl in red unless quietly): make it again and
            # skip the frame. A window destroyed from outside fails every time.
            self.failures += 1
            self.size = (0, 0)
            try:
                self.configure()
            except RuntimeError:
                self.failures = LOST_AFTER_FAILURES
            self.lost = self.failures >= LOST_AFTER_FAILURES
            return False


def quietly(call):
    """`call()` with sgl's log silenced: a swapchain out of date after a resize is expected, and
    handled here (the swapchain is made again), not an error to print."""
    logger = spy.Logger.get()
    level, logger.level = logger.level, spy.LogLevel.fatal
    try:
        return call()
    finally:
        logger.level = level


def run_window(gpu: Gpu, start: Start, options: WindowOptions, saved: dict) -> int:
    """Opens the window on `gpu` training from `start`; `saved` is the last session's settings."""
    view = saved.get("view", {})
    placement = launch_placement(saved_placement(view), options.width, options.height, screen_size())
    app = open_app(gpu, start, (placement.width, placement.height), saved, options.launch)
    session, renderer = app.session, app.renderer
    win = _Window(options, app, renderer, placement)
    interrupted = []
    previous = {sig: signal.signal(sig, lambda *_: interrupted.append(True)) for sig in EXIT_SIGNALS}
    try:
        _loop(win, app, interrupted)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        session.cancel_rebuild()
        gpu.device.wait()
        print(save_on_exit(app), file=sys.stderr, flush=True)  # closed, interrupted or crashed
        if options.save_settings:
            settings.save(app, win.placement())
        # Tear down in dependency order: left to interpreter shutdown, the swapchain, window
        # and device can be freed in any order, which crashed now and then at exit.
        renderer.destroy()
        if win.lost:
            # X destroyed the window: any windowing call on it, the destructors' too, makes Xlib
            # end the process with a fatal BadWindow. The settings are saved; end here.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)
        win.close()
        gpu.device.close()
    return 0


def _loop(win: _Window, app: AppState, interrupted: list) -> None:
    last, frames = time.perf_counter(), 0
    while not win.window.should_close() and not interrupted and not app.quit and not win.lost:
        win.window.process_events()
        if x_errors.window_gone():  # X said our window is gone: touching it again is fatal
            win.lost = True
            break
        if not win.configure():
            time.sleep(MINIMISED_SLEEP_S)  # minimised: nothing to draw, don't spin
            last = time.perf_counter()
            continue
        now = time.perf_counter()
        if win.options.screenshot_after is not None and frames == win.options.screenshot_after:
            if win.options.screenshot:
                app.screenshot_path = win.options.screenshot
            else:
                app.request_screenshot()
        if not win.render(max(now - last, 1e-4)) and not app.running:
            # Nothing drawn and nothing training: no vsync wait paces the loop, so wait out the
            # rest of a 60 Hz frame instead of spinning (input is still handled every frame).
            time.sleep(max(0.0, IDLE_FRAME_S - (time.perf_counter() - now)))
        last, frames = now, frames + 1
        if win.options.on_frame is not None:
            win.options.on_frame(app)
    if interrupted:
        print("interrupted: closing", file=sys.stderr)
    if win.lost:
        print("the window was closed from outside: the settings are saved", file=sys.stderr)
