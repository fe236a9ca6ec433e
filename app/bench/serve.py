"""Frames to the browser: the app served as `--serve` serves it (app/serve/), at 1280x800, watched by
a scripted WebSocket viewer in this process: frames/s and bytes/s it receives while training and
paused, the training against headless and the offscreen window (app/bench/frame.py's method), click
to frame latency on Pause, where a frame's time goes, and codecs on the frames sent.
docs/benchmarks.md, 'Frames to the browser'."""

from __future__ import annotations

import random
import secrets
import statistics
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import simplejpeg

from ..config.config import PRECISIONS, Config, validate
from ..files.start import Start
from ..gpu.device import describe
from ..gpu.gpu import create_gpu
from ..serve.address import TOKEN_BYTES, ServeAddress
from ..serve.downloads import Downloads
from ..serve.hub import Hub
from ..serve.remote_files import RemoteFiles
from ..serve.served_window import ServedWindow
from ..serve.server import Server
from ..ui import redraw
from ..ui.opening import Launch, open_app
from . import frame, frame_codecs, options
from .serve_client import ScriptedViewer

NETWORKS = {  # name: config fields
    "2-64-64-64-4": dict(encoding="raw", hidden=[64, 64, 64], precision="half"),  # the issue's
    "4-16-4": dict(),  # the tutorial's: the default config
}
SETTLE_S = 1.0  # before the paused phase: the last frames arrive
SETTLE_TIMEOUT_S = 30.0  # for a click's frames to arrive, at the most (a loaded CPU driver)
LATENCY_TIMEOUT_S = 5.0


def _config(args) -> Config:
    fields = dict(NETWORKS[args.network])
    if args.precision:
        fields["precision"] = args.precision
    if args.batch_size:
        fields["batch_size"] = args.batch_size
    return validate(Config(**fields))


# ---- the measuring thread: the viewer's script, while the main thread runs the served loop -------
def _snapshot(viewer: ScriptedViewer, served: ServedWindow) -> dict:
    frames, received, now = viewer.counts()
    encoder = served.encoder
    return dict(
        time=now,
        frames=frames,
        bytes=received,
        samples=served.app.session.trainer.samples_seen,
        loop=served.frames,
        drawn=served.app.redraw.count,
        readbacks=served.readbacks,
        readback_s=served.readback_seconds,
        encoded=encoder.encoded,
        unchanged=encoder.unchanged,
        encode_s=encoder.encode_seconds,
        cpu_s=time.process_time(),
        viewer_cpu_s=viewer.cpu_seconds(),
    )


def _rates(before: dict, after: dict, served: ServedWindow) -> dict:
    wall = after["time"] - before["time"]

    def per_second(key: str) -> float:
        return (after[key] - before[key]) / wall

    def per_item(seconds: str, count: str) -> float | None:
        items = after[count] - before[count]
        return 1000 * (after[seconds] - before[seconds]) / items if items else None

    stats = served.app.stats
    return {
        "seconds": wall,
        "frames_per_second": per_second("frames"),
        "bytes_per_second": per_second("bytes"),
        "samples_per_second": per_second("samples"),
        "loop_per_second": per_second("loop"),
        "ui_drawn_per_second": per_second("drawn"),
        "encoded_per_second": per_second("encoded"),
        "unchanged_per_second": per_second("unchanged"),
        "readback_ms": per_item("readback_s", "readbacks"),
        "encode_ms": per_item("encode_s", "encoded"),
        "process_cores": per_second("cpu_s"),
        "viewer_cores": per_second("viewer_cpu_s"),
        "frame_ms": stats.frame_ms,
        "work_ms": stats.work_ms,
        "record_ms": stats.record_ms,
        "wait_ms": stats.wait_ms,
    }


def _phase(viewer: ScriptedViewer, served: ServedWindow, seconds: float, keep: int = 0) -> tuple[dict, list]:
    """Rates over `seconds`; with `keep`, that many frames' pixels as sent, spread over the time."""
    kept: list[np.ndarray] = []
    before = _snapshot(viewer, served)
    for _ in range(max(keep, 1)):
        time.sleep(seconds / max(keep, 1))
        pixels = served.encoder.last_sent
        if keep and pixels is not None and not any(pixels is other for other in kept):
            kept.append(pixels)
    return _rates(before, _snapshot(viewer, served), served), kept


class _Button:
    """The Pause button as the frames show it: its rectangle (app.rects), and how it looks hovered
    while training ("Pause") and while paused ("Play"), learned from two clicks. Its colour tells a
    press; its label's edges, compared at horizontal shifts of up to SHIFT pixels, tell the state
    whatever the button's width and colour (a scrollbar that comes and goes narrows the panel)."""

    SHIFT = 16

    def __init__(self, rect: tuple[float, float, float, float]):
        x0, y0, x1, y1 = rect
        self.centre = ((x0 + x1) / 2, (y0 + y1) / 2)
        self.box = (int(np.ceil(y0)) + 2, int(y1) - 2, int(np.ceil(x0)) + 2, int(x1) - 2)  # inside its edge
        self.looks: dict[bool, np.ndarray] = {}  # running: the button's pixels

    def look(self, jpeg: bytes) -> np.ndarray:
        top, bottom, left, right = self.box
        return simplejpeg.decode_jpeg(jpeg, colorspace="RGB")[top:bottom, left:right].astype(np.float32)

    def distance(self, look: np.ndarray, running: bool) -> float:
        """How far `look`'s colours are from the button's while `running` or paused."""
        return float(np.mean(np.abs(look - self.looks[running])))

    def label_distance(self, look: np.ndarray, running: bool) -> float:
        """How far `look`'s label is from the one shown while `running` or paused."""
        edges, reference = _edges(look), _edges(self.looks[running])
        shift, width = self.SHIFT, edges.shape[1]
        middle = edges[:, shift : width - shift]
        return min(
            float(np.mean(np.abs(middle - reference[:, shift + dx : width - shift + dx])))
            for dx in range(-shift, shift + 1)
        )

    def shows(self, look: np.ndarray, running: bool) -> bool:
        """Whether `look`'s label is the one shown while `running` (or paused), clearly."""
        return self.label_distance(look, running) < 0.75 * self.label_distance(look, not running)

    @property
    def gap(self) -> float:
        return float(np.mean(np.abs(self.looks[True] - self.looks[False])))

    @property
    def label_gap(self) -> float:
        return self.label_distance(self.looks[True], False)

    def click(self) -> list[dict]:
        x, y = self.centre
        return [
            {"t": "move", "x": x, "y": y},
            {"t": "button", "b": 0, "down": True},
            {"t": "button", "b": 0, "down": False},
        ]


def _edges(look: np.ndarray) -> np.ndarray:
    """The horizontal changes of brightness over their mean: text, whatever its contrast with the
    background's colour (hovered, held)."""
    changes = np.abs(np.diff(look.mean(axis=2), axis=1))
    return changes / (changes.mean() + 1e-3)


def _timed_click(viewer: ScriptedViewer, button: _Button, running: bool, press_s: float) -> tuple:
    """A click on the button while the app is `running` or not, held `press_s` as a hand holds it:
    seconds from the press to the first frame whose button differs (pressed), and from the release
    (where a button acts) to the first frame that shows the new state; None where none came."""
    frames = viewer.record()
    move, press, release = button.click()
    pressed = time.perf_counter()
    viewer.send(move, press)
    time.sleep(press_s)
    released = time.perf_counter()
    viewer.send(release)
    changed = shown = None
    seen = 0
    while shown is None and time.perf_counter() - released < LATENCY_TIMEOUT_S:
        viewer.wait_arrival(seen, released + LATENCY_TIMEOUT_S - time.perf_counter())
        while seen < len(frames) and shown is None:
            arrival, jpeg = frames[seen]
            seen += 1
            look = button.look(jpeg)
            if changed is None and button.distance(look, running) > 0.25 * button.gap:
                changed = arrival - pressed
            if button.shows(look, not running):
                shown = arrival - released
    viewer.stop_recording()
    return changed, shown


def _until(done, what: str, seconds: float = SETTLE_TIMEOUT_S) -> None:
    deadline = time.perf_counter() + seconds
    while not done():
        if time.perf_counter() > deadline:
            raise RuntimeError(f"{what} within {seconds:g} s")
        time.sleep(0.01)


def _settle(viewer: ScriptedViewer, served: ServedWindow, running: bool) -> None:
    """Until the app is `running` or paused, has drawn twice since, sent a frame after that, and the
    viewer holds the newest frame sent: the frames show the state."""
    app, encoder = served.app, served.encoder
    _until(lambda: app.running == running, f"the app was not {'training' if running else 'paused'}")
    drawn = app.redraw.count
    _until(lambda: app.redraw.count >= drawn + 2, "the UI was not drawn again")
    handled = encoder.encoded + encoder.unchanged
    _until(lambda: encoder.encoded + encoder.unchanged > handled, "no frame was encoded")
    _until(lambda: served.hub.newest().data == viewer.newest, "the viewer did not get the newest frame")


def _latency(viewer: ScriptedViewer, served: ServedWindow, clicks: int, press_s: float) -> dict:
    """Pause and Play clicked `clicks` times each, at random moments of the training."""
    button = _Button(served.app.rects["pause"])
    viewer.send(button.click()[0])  # hovered from here on, as a user's pointer over it
    for running in (True, False, True):  # learns both looks; ends training, as before
        _settle(viewer, served, running)
        button.looks[running] = button.look(viewer.newest)
        if len(button.looks) < 2 or not running:
            viewer.send(*button.click())
    if button.gap < 1.0 or button.label_gap < 0.2:
        raise RuntimeError("the frames show Pause and Play alike: the button's rectangle is not where it is drawn")
    times: dict[str, list] = {"pause_changed": [], "pause_shown": [], "play_changed": [], "play_shown": []}
    rng = random.Random(1)
    for _ in range(clicks):
        for running, name in ((True, "pause"), (False, "play")):
            time.sleep(rng.uniform(0.2, 0.5))  # a random moment of a frame
            changed, shown = _timed_click(viewer, button, running, press_s)
            times[f"{name}_changed"].append(changed)
            times[f"{name}_shown"].append(shown)
            _settle(viewer, served, not running)
    result = {"clicks": clicks, "press_ms": 1000 * press_s, "button_gap": button.gap, "label_gap": button.label_gap}
    for name, values in times.items():
        found = sorted(value for value in values if value is not None)
        result[name] = {
            "missed": len(values) - len(found),
            "p50_ms": 1000 * statistics.median(found) if found else None,
            "p95_ms": 1000 * found[min(len(found) - 1, int(round(0.95 * (len(found) - 1))))] if found else None,
            "max_ms": 1000 * found[-1] if found else None,
            "values_ms": [None if value is None else round(1000 * value, 1) for value in values],
        }
    viewer.send(*button.click())  # paused for the last phase
    _settle(viewer, served, False)
    return result


def _script(served: ServedWindow, url: str, args, result: dict, interrupted: list) -> None:
    viewer = ScriptedViewer(url)
    try:
        viewer.connect(*served.size)
        app = served.app
        deadline = time.perf_counter() + args.ready_timeout
        while app.restoring is not None or not app.running or "pause" not in app.rects or viewer.frames == 0:
            if time.perf_counter() > deadline:
                raise RuntimeError(f"the served app was not training within {args.ready_timeout:g} s")
            time.sleep(0.1)
        time.sleep(args.warmup)
        result["training"], result["kept"] = _phase(viewer, served, args.seconds, keep=args.codec_frames)
        result["latency"] = _latency(viewer, served, args.clicks, args.press_ms / 1000)
        time.sleep(SETTLE_S)
        result["paused"], _ = _phase(viewer, served, args.paused_seconds)
    except Exception as error:
        result["error"] = f"{type(error).__name__}: {error}"
    finally:
        interrupted.append(True)
        viewer.close()


# ---- the main thread: the served app, then the window and headless ----------------------------------
def _served_run(gpu, config: Config, size: tuple[int, int], args) -> dict:
    hub, downloads = Hub(), Downloads()
    with tempfile.TemporaryDirectory() as uploads:
        address = ServeAddress("127.0.0.1", 0, secrets.token_urlsafe(TOKEN_BYTES))
        server = Server(hub, address, downloads, Path(uploads))
        server.start()
        app = open_app(gpu, Start(config), size, {}, Launch(vsync=False if args.no_vsync else None))
        app.remote = RemoteFiles(hub, downloads)
        served = ServedWindow(app, hub, size)
        result: dict = {}
        interrupted: list = []
        script = threading.Thread(target=_script, args=(served, server.url, args, result, interrupted))
        script.start()
        try:
            served.loop(interrupted)
        finally:
            interrupted.append(True)
            script.join()
            app.session.cancel_rebuild()
            gpu.device.wait()
            served.encoder.stop()
            server.stop()
            app.renderer.destroy()
    return result


def run(args) -> dict:
    if args.ui_hz:
        redraw.UI_HZ = args.ui_hz  # an experiment: the CPU driver's cap on UI redraws while training
    gpu = create_gpu(args.device)
    config = _config(args)
    size = (1280, 800)
    served = _served_run(gpu, config, size, args)
    if "error" in served:
        return {"error": served["error"]}
    kept = served.pop("kept")
    window = frame.window_row(gpu, args.network, config, args.window_frames, args.headless_seconds)
    headless = window["headless_samples_per_second"]
    return {
        "device": describe(gpu.device),
        "software": gpu.software,
        "size": list(size),
        "network": args.network,
        "precision": config.precision,
        "batch_size": config.batch_size,
        "ui_hz": redraw.UI_HZ,
        "vsync": not args.no_vsync,
        **served,
        "served_over_headless": served["training"]["samples_per_second"] / headless,
        "window": {key: window[key] for key in ("samples_per_second", "frames_per_second", "record_ms")},
        "window_over_headless": window["window_over_headless"],
        "headless_samples_per_second": headless,
        "codecs": frame_codecs.measure(kept) if kept else [],
        "codec_frames": len(kept),
        "kept_frames": kept,
    }


def _ms(row: dict, name: str) -> str:
    part = row[name]
    missed = f", {part['missed']} missed" if part["missed"] else ""
    if part["p50_ms"] is None:
        return f"none seen{missed}"
    return f"{part['p50_ms']:.0f} / {part['p95_ms']:.0f} ms (max {part['max_ms']:.0f}){missed}"


def _print(result: dict) -> None:
    device = result["device"]
    training, paused, latency = result["training"], result["paused"], result["latency"]
    target_fps = "≥ 20 (lavapipe)" if result["software"] else "≥ 30"
    print(
        f"device: {device['adapter']} ({device['type']}), {result['size'][0]}x{result['size'][1]}, "
        f"{result['network']} {result['precision']}, batch {result['batch_size']}"
        + ("" if result["vsync"] else ", no vsync")
        + (f", UI_HZ {result['ui_hz']}" if result["software"] else "")
    )
    rows = [
        ("frames/s received while training", f"{training['frames_per_second']:.1f}", target_fps),
        (
            "training served / headless",
            f"{result['served_over_headless']:.2f} ({training['samples_per_second']:.3g} against "
            f"{result['headless_samples_per_second']:.3g} samples/s)",
            "≥ 0.8",
        ),
        (
            "training window / headless (offscreen, same process)",
            f"{result['window_over_headless']:.2f} ({result['window']['samples_per_second']:.3g} samples/s, "
            f"{result['window']['frames_per_second']:.0f} frames/s)",
            "",
        ),
        ("click (release) on Pause to the frame showing Play, p50 / p95", _ms(latency, "pause_shown"), "p95 ≤ 50 ms"),
        ("press on Pause to the first frame showing it pressed, p50 / p95", _ms(latency, "pause_changed"), ""),
        ("click (release) on Play to the frame showing Pause, p50 / p95", _ms(latency, "play_shown"), ""),
        ("bytes/s while training", f"{training['bytes_per_second'] / 1e6:.2f} MB/s", ""),
        (
            "bytes/s while paused, idle",
            f"{paused['bytes_per_second']:.0f} B/s ({paused['frames_per_second']:.2f} frames/s)",
            "0",
        ),
    ]
    print("| measurement | figure | target |\n|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(
        f"where a training second goes: {training['loop_per_second']:.1f} frames looped, UI drawn "
        f"{training['ui_drawn_per_second']:.1f}, encoded {training['encoded_per_second']:.1f} "
        f"(unchanged {training['unchanged_per_second']:.1f}), received {training['frames_per_second']:.1f}; "
        f"a frame {training['frame_ms']:.1f} ms (work {training['work_ms']:.1f}, recording the training "
        f"{training['record_ms']:.1f}, waiting for the GPU {training['wait_ms']:.1f}); readback "
        f"{_or_none(training['readback_ms'])} ms, encode {_or_none(training['encode_ms'])} ms a frame; "
        f"CPU {training['process_cores']:.2f} cores (the viewer's thread {training['viewer_cores']:.2f})"
    )
    print(
        f"paused: {paused['loop_per_second']:.1f} frames looped/s, UI drawn {paused['ui_drawn_per_second']:.1f}/s, "
        f"encoded {paused['encoded_per_second']:.2f}/s, unchanged {paused['unchanged_per_second']:.2f}/s, "
        f"CPU {paused['process_cores']:.2f} cores"
    )
    frame_codecs.print_rows(result["codecs"], result["kept_frames"])


def _or_none(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def main(argv=None) -> int:
    parser = options.parser("bench.serve", __doc__)
    parser.add_argument("--network", choices=NETWORKS, default="2-64-64-64-4")
    parser.add_argument("--precision", choices=PRECISIONS, help="default: the network's (half for 2-64-64-64-4)")
    parser.add_argument("--batch-size", type=int, help="samples a step (default: the config's)")
    parser.add_argument("--seconds", type=float, default=5.0, help="the training phase's length")
    parser.add_argument("--paused-seconds", type=float, default=5.0, help="the paused phase's length")
    parser.add_argument("--clicks", type=int, default=20, help="timed clicks on Pause (and as many on Play)")
    parser.add_argument(
        "--press-ms", type=float, default=100.0, help="how long a click holds the button (0: press and release at once)"
    )
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of training before measuring")
    parser.add_argument("--codec-frames", type=int, default=6, help="frames kept for the codecs' figures")
    parser.add_argument("--window-frames", type=int, default=120, help="the offscreen window's training frames")
    parser.add_argument("--headless-seconds", type=float, default=2.0)
    parser.add_argument("--ready-timeout", type=float, default=600.0, help="seconds for the network to build")
    parser.add_argument("--no-vsync", action="store_true", help="frames unpaced, as the app's --no-vsync")
    parser.add_argument("--ui-hz", type=int, help="experiment: a CPU driver's UI redraws a second while training")
    args = parser.parse_args(argv)
    result = run(args)
    if "error" in result:
        print(f"error: {result['error']}")
        return 1
    _print(result)
    result.pop("kept_frames")
    options.write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
