"""Soak benchmark: does a session left running grow in memory or slow down? Headless steps, offscreen
frames of the full UI and the real window, with the architecture changed every --change-every
frames; it exits 1 when host RSS, the p99 frame time or a network's GPU memory passes its bound
(what it reports, the bounds and the figures: docs/benchmarks.md, 'Soak')."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from ..config.config import Config
from ..files.start import Start
from ..gpu.device import describe
from ..gpu.gpu import create_gpu
from ..loop.session import Session
from ..ui.offscreen import OffscreenApp
from ..ui.opening import HEATMAP_GRID
from ..ui.window import WindowOptions, run_window
from . import options
from .soak_measure import Samples, percentiles, x_display

ARCHITECTURES = ([16], [24, 12], [8, 8, 8], [32])
WARMUP_STEPS = 50_000  # fills the loss record's arrays and the command-buffer pool
WARMUP_FRAMES = 60  # per architecture, building each once before the frames are counted
HEADLESS_BOUND = 32 << 20
FRAMES_BOUND = 16 << 20
P99_TOLERANCE = 0.10
SAMPLES = 20  # RSS samples over a part


def headless(gpu, steps: int, batch_size: int) -> dict:
    session = Session(gpu, Config(batch_size=batch_size))
    session.eval_every = 10_000
    while session.trainer.step < WARMUP_STEPS:
        session.advance(session.chunk_size(WARMUP_STEPS))
    start, samples = session.trainer.step, Samples(steps // SAMPLES)
    samples.take(0)
    start_gpu, begin = session.trainer.gpu_bytes(), time.perf_counter()
    while session.trainer.step < start + steps:
        session.advance(session.chunk_size(start + steps))
        samples.take(session.trainer.step - start)
    seconds = time.perf_counter() - begin
    samples.take(steps, force=True)
    first, last = samples.rows[0], samples.rows[-1]
    return {
        "steps": steps,
        "batch_size": batch_size,
        "seconds": seconds,
        "steps_per_second": steps / seconds,
        "eval_loss": session.eval_loss,
        "rss_start": first["rss"],
        "rss_end": last["rss"],
        "gpu_start": first["gpu"],
        "gpu_end": last["gpu"],
        "trainer_gpu_start": start_gpu,
        "trainer_gpu_end": session.trainer.gpu_bytes(),
        "history_bytes": session.history.nbytes,
        "peak_in_flight": gpu.peak_in_flight,
        "samples": samples.rows,
        "within_bound": last["rss"] - first["rss"] <= HEADLESS_BOUND and session.trainer.gpu_bytes() == start_gpu,
    }


def _apply(app, hidden: list[int]) -> None:
    """What a user does in the network panel: edit the draft, press Apply."""
    app.draft = app.draft.replace(hidden=list(hidden))
    app.start_rebuild()


class WarmUp:
    """Builds every architecture of the cycle once, each for WARMUP_FRAMES frames at least, and
    comes back to the first; `frame(app)` says when that is done."""

    def __init__(self, architectures=ARCHITECTURES) -> None:
        self.architectures, self.visited, self.since = architectures, 1, 0

    def frame(self, app) -> bool:
        self.since += 1
        if app.session.rebuild is not None or self.since < WARMUP_FRAMES:
            return False
        if self.visited > len(self.architectures):
            return True
        _apply(app, self.architectures[self.visited % len(self.architectures)])
        self.visited, self.since = self.visited + 1, 0
        return False


class Changes:
    """The architecture cycle every `every` frames; the trainer's GPU memory on each visit."""

    def __init__(self, every: int, architectures=ARCHITECTURES):
        self.every, self.count, self.architectures = every, 0, architectures
        self.gpu_by_architecture: dict[str, list[int]] = {}

    def after_frame(self, app, frame: int) -> None:
        if frame % self.every:
            return
        trainer = app.session.trainer
        self.gpu_by_architecture.setdefault(trainer.plan.title, []).append(trainer.gpu_bytes())
        self.count += 1
        _apply(app, self.architectures[self.count % len(self.architectures)])


def _frame_figures(times: list[float], samples: Samples, changes: Changes) -> dict:
    tenth = max(1, len(times) // 10)
    start, end = percentiles(times[:tenth]), percentiles(times[-tenth:])
    first, last = samples.rows[0], samples.rows[-1]
    p99_held = end["p99_ms"] is not None and end["p99_ms"] <= (1 + P99_TOLERANCE) * start["p99_ms"]
    gpu_held = all(len(set(sizes)) == 1 for sizes in changes.gpu_by_architecture.values())
    return {
        "frames": len(times),
        "architecture_changes": changes.count,
        "ms_per_frame": 1000 * sum(times) / max(1, len(times)),
        "frame_time_start": start,
        "frame_time_end": end,
        "rss_start": first["rss"],
        "rss_end": last["rss"],
        "gpu_start": first["gpu"],
        "gpu_end": last["gpu"],
        "trainer_gpu_by_architecture": changes.gpu_by_architecture,
        "samples": samples.rows,
        "rss_within_bound": last["rss"] - first["rss"] <= FRAMES_BOUND,
        "p99_within_bound": p99_held,
        "within_bound": last["rss"] - first["rss"] <= FRAMES_BOUND and p99_held and gpu_held,
    }


def offscreen(gpu, frames: int, change_every: int, batch_size: int, size: tuple[int, int]) -> dict:
    config = Config(batch_size=batch_size, hidden=list(ARCHITECTURES[0]))
    ui = OffscreenApp(Session(gpu, config, grid=HEATMAP_GRID, heatmaps=True), *size)
    changes, samples, times, warm_up = Changes(change_every), Samples(frames // SAMPLES), [], WarmUp()
    try:
        while not warm_up.frame(ui.app):
            ui.frame()
        samples.take(0)
        for frame in range(1, frames + 1):
            begin = time.perf_counter()
            ui.frame()
            times.append(time.perf_counter() - begin)
            changes.after_frame(ui.app, frame)
            samples.take(frame)
        while ui.session.rebuild is not None:
            ui.frame()
        samples.take(frames, force=True)
    finally:
        ui.close()
    return {"size": list(size), "change_every": change_every, **_frame_figures(times, samples, changes)}


def window(gpu, seconds: float, change_every: int, batch_size: int, size: tuple[int, int]) -> dict:
    """The real window for `seconds` after its warm-up; frame time is the time between frames."""
    changes, samples, stamps, warm_up = Changes(change_every), Samples(1 + int(seconds / SAMPLES)), [], WarmUp()
    end = []

    def on_frame(app) -> None:
        if not end:
            if warm_up.frame(app):
                end.append(time.perf_counter() + seconds)
                samples.take(0)
            return
        stamps.append(time.perf_counter())
        changes.after_frame(app, len(stamps))
        samples.take(int(stamps[-1] - end[0] + seconds))
        if stamps[-1] >= end[0]:
            samples.take(int(seconds), force=True)  # the end, while the window still runs
            app.quit = True

    start = Start(Config(batch_size=batch_size, hidden=list(ARCHITECTURES[0])))
    options = WindowOptions(width=size[0], height=size[1], on_frame=on_frame, save_settings=False)
    run_window(gpu, start, options, saved={})
    times = [b - a for a, b in zip(stamps, stamps[1:])]
    return {
        "seconds": seconds,
        "size": list(size),
        "change_every": change_every,
        **_frame_figures(times, samples, changes),
    }


def _mb(value: int | None) -> str:
    if value is None:
        return "n/a"
    return f"{value / 2**20:.1f} MB" if abs(value) >= 2**20 else f"{value / 2**10:.0f} KB"


def _print_frames(name: str, f: dict) -> None:
    start, end = f["frame_time_start"], f["frame_time_end"]
    print(
        f"{name}: {f['frames']:,} frames at {f['size'][0]}x{f['size'][1]} ({f['ms_per_frame']:.1f} ms/frame), "
        f"{f['architecture_changes']} architecture changes"
    )
    print(
        f"  host RSS {_mb(f['rss_start'])} -> {_mb(f['rss_end'])} ({_mb(f['rss_end'] - f['rss_start'])}); "
        f"GPU {_mb(f['gpu_start'])} -> {_mb(f['gpu_end'])}; RSS bound {'held' if f['rss_within_bound'] else 'EXCEEDED'}"
    )
    print(
        f"  frame time p50 {start['p50_ms']:.2f} -> {end['p50_ms']:.2f} ms, p99 {start['p99_ms']:.2f} -> "
        f"{end['p99_ms']:.2f} ms; p99 bound {'held' if f['p99_within_bound'] else 'EXCEEDED'}"
    )
    for title, sizes in f["trainer_gpu_by_architecture"].items():
        print(f"  trainer GPU {title}: {', '.join(sorted({_mb(s) for s in sizes}))} over {len(sizes)} visits")


def _print(result: dict) -> None:
    print(f"device: {result['device']['adapter']} ({result['device']['type']})")
    if "headless" in result:
        h = result["headless"]
        print(
            f"headless: {h['steps']:,} steps of {h['batch_size']} samples in {h['seconds']:.0f} s "
            f"({h['steps_per_second']:.0f} steps/s), eval loss {h['eval_loss']:.3g}, peak {h['peak_in_flight']} "
            f"command buffers in flight"
        )
        print(
            f"  host RSS {_mb(h['rss_start'])} -> {_mb(h['rss_end'])} ({_mb(h['rss_end'] - h['rss_start'])}; "
            f"loss history {_mb(h['history_bytes'])} in all); GPU {_mb(h['gpu_start'])} -> {_mb(h['gpu_end'])}; "
            f"trainer GPU {_mb(h['trainer_gpu_start'])} -> {_mb(h['trainer_gpu_end'])}; "
            f"bound {'held' if h['within_bound'] else 'EXCEEDED'}"
        )
    for name in ("offscreen", "window"):
        if name in result:
            _print_frames(name, result[name])


def main(argv=None) -> int:
    parser = options.parser("bench.soak", __doc__)
    parser.add_argument("--part", choices=("all", "headless", "offscreen", "window"), default="all")
    parser.add_argument("--steps", type=int, default=10_000_000)
    parser.add_argument("--frames", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=1800.0, help="the real window's duration")
    parser.add_argument("--change-every", type=int, default=3000, help="frames between architecture changes")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=800)
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    if args.part == "window" and not os.environ.get("DISPLAY"):
        # The window runs in a child process on an Xvfb kept here: a process that outlives its X
        # server is ended by Xlib at exit, before it can print its figures.
        with x_display():
            return subprocess.run([sys.executable, "-m", __spec__.name, *argv]).returncode
    gpu = create_gpu(args.device)
    size = (args.width, args.height)
    result = {"device": describe(gpu.device), "date": time.strftime("%Y-%m-%d")}
    if args.part in ("all", "headless"):
        result["headless"] = headless(gpu, args.steps, args.batch_size)
    if args.part in ("all", "offscreen"):
        result["offscreen"] = offscreen(gpu, args.frames, args.change_every, args.batch_size, size)
    if args.part == "window":
        result["window"] = window(gpu, args.seconds, args.change_every, args.batch_size, size)
    _print(result)
    options.write_json(args.json, result)
    parts = [result[name] for name in ("headless", "offscreen", "window") if name in result]
    return 0 if all(part["within_bound"] for part in parts) else 1


if __name__ == "__main__":
    raise SystemExit(main())
