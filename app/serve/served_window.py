"""`--serve`: the window's AppState drawn offscreen by the same frame(), each changed frame sent to
the browsers watching, their input given to ImGui; the loop the desktop window runs, with a
texture for a swapchain and a WebSocket for an X display."""

from __future__ import annotations

import queue
import signal
import sys
import time
from dataclasses import dataclass, field

from imgui_bundle import imgui

from ..files.start import Start
from ..gpu.device import cache_dir
from ..gpu.gpu import Gpu
from ..ui import settings
from ..ui.frame import frame
from ..ui.opening import Launch, open_app
from ..ui.placement import saved_placement
from ..ui.renderer import create_target
from ..ui.restore import save_on_exit
from ..ui.screenshot import save_screenshot
from . import remote_input
from .address import ServeAddress
from .downloads import Downloads
from .frame_encoder import FrameEncoder
from .hub import ACTING_EVENTS, Hub
from .remote_files import RemoteFiles
from .server import Server

FRAME_S = 1 / 60  # with vsync on (the default), frames as a 60 Hz display would pace them
# While the main network trains on a GPU and someone watches, fewer, longer frames: each frame's UI,
# read-back and JPEG are paid half as often, and its training fills the rest (docs/benchmarks.md,
# 'Frames to the browser'). Input brings shorter frames for RESPONSIVE_S, so a click shows soon.
TRAINING_FRAME_S = 1 / 32
RESPONSIVE_FRAME_S = 1 / 60
RESPONSIVE_S = 0.25
IDLE_FRAME_S = 1 / 60  # nothing drawn and nothing training: the loop waits out the frame
# Paused with no input for a while: the UI is built a few times a second, not 60 (each build is
# Python's work), and input wakes the loop at once, so a click is answered as soon.
QUIET_AFTER_S = 1.0
QUIET_FRAME_S = 0.1
# Paused with nobody watching: frames only poll (a rebuild, a sweep's new trials), a few a second,
# leaving the CPU to what trains beside it (a sweep's trials: app/sweep/live.py).
UNWATCHED_FRAME_S = 0.25
SIZE_LIMITS = ((320, 200), (7680, 4320))  # the smallest and largest UI a page may ask for
EXIT_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# How often Python hands the GIL between threads (default 5 ms): the encoder and the server get it
# sooner from the frame loop, so a frame reaches the page sooner (docs/benchmarks.md, 'Frames to the browser').
SWITCH_INTERVAL_S = 0.001


@dataclass
class ServeOptions:
    address: ServeAddress
    size: tuple[int, int] = (1280, 800)  # until the viewer in control reports its page's size
    launch: Launch = field(default_factory=Launch)
    save_settings: bool = True
    autosave_untrained: bool = True  # False: a session that trained no step is not kept at exit


def run_served(gpu: Gpu, start: Start, options: ServeOptions, saved: dict) -> int:
    hub, downloads = Hub(), Downloads()
    server = Server(hub, options.address, downloads, cache_dir() / "uploads")
    server.start()  # a port in use fails here, before the network is built
    print(f"serving: {server.url}", flush=True)
    warning = options.address.warning(server.port)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    try:
        app = open_app(gpu, start, options.size, saved, options.launch)
    except BaseException:
        server.stop()
        raise
    app.remote = RemoteFiles(hub, downloads)
    served = ServedWindow(app, hub, options.size)
    interrupted: list = []
    previous = {sig: signal.signal(sig, lambda *_: interrupted.append(True)) for sig in EXIT_SIGNALS}
    try:
        served.loop(interrupted)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        app.session.cancel_rebuild()
        gpu.device.wait()
        if options.autosave_untrained or app.session.trainer.step > 0:
            print(save_on_exit(app), file=sys.stderr, flush=True)
        if options.save_settings:
            settings.save(app, saved_placement(saved.get("view", {})))  # the desktop window's placement stays
        served.encoder.stop()
        server.stop()
        app.renderer.destroy()
        gpu.device.close()
    return 0


class ServedWindow:
    def __init__(self, app, hub: Hub, size: tuple[int, int]):
        self.app, self.hub = app, hub
        self.size = size
        self.target = create_target(app.gpu.device, *size)
        self.encoder = FrameEncoder(hub)
        self.viewers = 0
        self.clipboard = ""
        self.held: list[dict] = []  # input for the next frame (_take_input)
        self.frames = 0  # frames looped, drawn or not
        self.input_at = time.perf_counter()  # when input last came, or a viewer joined or resized
        self.readbacks = 0  # drawn frames read back for the encoder
        self.readback_seconds = 0.0  # (app/bench/serve.py)
        self.acting = False  # a click's or a key's frames are being built
        app.frames.input_waiting = self._input_waiting

    def loop(self, interrupted: list) -> None:
        switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        try:
            self._loop(interrupted)
        finally:
            sys.setswitchinterval(switch_interval)

    def _loop(self, interrupted: list) -> None:
        app, last = self.app, time.perf_counter()
        while not interrupted and not app.quit:
            now = time.perf_counter()
            acted = self._take_input()
            self._follow_viewers()
            frame_s = self._frame_seconds(now)
            app.frames.budget.frame_seconds = frame_s
            self.acting = acted
            if acted:  # a click or a key acts in this frame, which drew what it saw before
                self._frame(max(now - last, 1e-4), draw=False)
                now, last = time.perf_counter(), now
            drawn = self._frame(max(now - last, 1e-4))
            self.acting = False
            last = now
            self._share_clipboard()
            pace = frame_s if app.vsync or not app.running else 0.0
            if not drawn and not app.running:
                pace = IDLE_FRAME_S
            if not app.running and now - self.input_at > QUIET_AFTER_S:
                pace = QUIET_FRAME_S
            if not self.viewers and not app.running:
                pace = UNWATCHED_FRAME_S
            self._wait_for_input(pace - (time.perf_counter() - now))
        if interrupted:
            print("interrupted: closing", file=sys.stderr)

    def _frame_seconds(self, now: float) -> float:
        """This frame's length while the main network trains on a GPU for a viewer: TRAINING_FRAME_S,
        or RESPONSIVE_FRAME_S for RESPONSIVE_S after input; else a 60 Hz display's. A CPU driver's
        frames are paced by their UI already (app/ui/redraw.py)."""
        app = self.app
        if not (self.viewers and app.trains_main and not app.gpu.software):
            return FRAME_S
        return RESPONSIVE_FRAME_S if now - self.input_at <= RESPONSIVE_S else TRAINING_FRAME_S

    def _wait_for_input(self, seconds: float) -> None:
        """Sleeps out the frame's pace, ending as input arrives."""
        if seconds <= 0 or self.held:
            return
        try:
            self.held.append(self.hub.inputs.get(timeout=seconds)[1])
        except queue.Empty:
            return

    def _input_waiting(self) -> bool:
        """Whether a button or a key waits to act, or acts in the frame being built: the frame then
        trains for its first buffer of steps only (FrameDriver.input_waiting), so the frame that
        answers it comes sooner. Pointer moves alone do not cut training short."""
        if self.acting or self.hub.acting_input.is_set():
            return True
        return any(event.get("t") in ACTING_EVENTS for event in self.held)

    def _take_input(self) -> bool:
        """The events that arrived since the last frame, in order, up to a move after a button or a
        release after a move: those wait for the next frame. ImGui ends a drag on a release before
        it applies the moves of the same frame, and defers a move after a button by a frame itself:
        a drag that arrived whole (a slow frame, a network's bunching) lost its moves. An upload
        acts as its path typed into the path field would. Returns whether a release or a key
        press was taken: input that acts while the frame's UI is built."""
        app = self.app
        app.renderer.make_current()
        moved = pressed = acted = False
        self.hub.acting_input.clear()  # what arrives from here on sets it again
        while self.held or not self.hub.inputs.empty():
            self.input_at = time.perf_counter()
            event = self.held.pop(0) if self.held else self.hub.inputs.get_nowait()[1]
            kind = event.get("t")
            if (kind == "move" and pressed) or (kind == "button" and event.get("down") is False and moved):
                self.held.insert(0, event)
                return acted
            moved, pressed = moved or kind == "move", pressed or kind == "button"
            release = kind == "button" and event.get("down") is False
            key_press = kind == "key" and event.get("down") is True
            acted = acted or release or key_press
            if event.get("t") == "upload":
                self._uploaded(event["action"], event["path"])
            else:
                remote_input.apply(app, event)
        return acted

    def _uploaded(self, action: str, path: str) -> None:
        files = self.app.files
        if action == "drop":  # a file dropped on the page: opened by its kind (app/ui/dropped_files.py)
            files.open_dropped([path])
        elif files.prompt is not None and files.prompt.action == action:
            files.prompt.text = path
            files.submit_prompt()  # closes the field when taken, else shows why under it
        else:
            files.act(action, path)

    def _follow_viewers(self) -> None:
        """The UI takes the controlling page's size and pixel ratio; a first viewer gets a frame
        at once, changed or not."""
        count = self.hub.viewer_count()
        if count > self.viewers:
            self.encoder.resend()
            self.app.redraw.invalidate()
            self.input_at = time.perf_counter()
        self.viewers = count
        reported = self.hub.controller_size()
        if reported is None:
            return
        (low_w, low_h), (high_w, high_h) = SIZE_LIMITS
        width, height, ratio = reported
        size = (min(max(width, low_w), high_w), min(max(height, low_h), high_h))
        scale = min(max(round(ratio * 4) / 4, 1.0), 4.0)  # quarter steps: fonts rasterised at few sizes
        self.app.renderer.set_scale(scale)
        if size != self.size:
            self.app.gpu.device.wait()
            self.size = size
            self.target = create_target(self.app.gpu.device, *size)
            self.app.redraw.invalidate()
            self.encoder.resend()
            self.input_at = time.perf_counter()

    def _frame(self, delta_time: float, draw: bool = True) -> bool:
        """One frame: the UI built, and drawn and sent where someone watches. `draw` False builds
        it only: a click's frame, whose drawing would show the button as it was before the click,
        is followed at once by one that shows what the click did (a frame sooner to the page)."""
        app = self.app
        path = app.screenshot_path if draw else None
        if path:
            app.screenshot_path = None
        # Nobody watching: the UI is built (input, polls) but not drawn; a viewer who joins gets a frame
        target = self.target if draw and (self.viewers or path) else None
        drawn = frame(app, self.size, lambda: target, delta_time, force=bool(path)) is not None
        self.frames += 1
        if path:
            self._screenshot(path)
        if drawn and self.viewers:
            began = time.perf_counter()
            pixels = self.target.to_numpy()
            self.readback_seconds += time.perf_counter() - began
            self.readbacks += 1
            self.encoder.submit(pixels)
        return drawn

    def _screenshot(self, path: str) -> None:
        """F12 or View > Save screenshot: the frame just drawn, kept on the server and downloaded."""
        if save_screenshot(self.app, self.target, path):
            self.app.remote.offer_download(path)

    def _share_clipboard(self) -> None:
        """What the UI copied (Ctrl+C in a field) goes to the page's clipboard."""
        self.app.renderer.make_current()
        text = imgui.get_clipboard_text() or ""
        if text != self.clipboard:
            self.clipboard = text
            self.hub.tell_controller({"t": "clipboard", "s": text})
