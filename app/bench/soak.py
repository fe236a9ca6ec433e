"""Soak benchmark (figures, not a test): does a long session leak?

    python -m app.bench.soak [--steps 1000000] [--frames 10000] [--change-every 300]
                             [--batch-size 256] [--device auto] [--json PATH]

1. Headless: --steps training steps through Session.advance, as `--headless` runs them.
2. Window: --frames frames of the full UI at 1280x800, rendered offscreen through the same
   frame() as the window, training, with the architecture changed through the network panel's
   Apply path every --change-every frames, cycling through ARCHITECTURES.

It prints host RSS and the trainer's GPU memory at the start and the end of each part, and checks
them against the bound it holds to: RSS may grow by what the loss history needs (16 bytes a
step, amortised doubling: up to 32) plus SLACK_BYTES; once every architecture has been built
once (its kernels stay cached by design), the window's RSS may grow by SLACK_BYTES only; the
trainer's GPU memory for one architecture must not change. A benchmark is a top-level tool, not
core: the second part drives the offscreen UI, so it imports app.ui."""

from __future__ import annotations

import gc
import os
import resource
import time

from ..bench import options
from ..config import Config
from ..device import describe
from ..gpu import create_gpu
from ..session import Session
from ..ui.offscreen import OffscreenApp
from ..ui.window import HEATMAP_GRID

ARCHITECTURES = ([16], [24, 12], [8, 8, 8], [32])
SLACK_BYTES = 16 << 20  # allocator noise, caches that fill once (Python, numpy, the driver)


def rss_bytes() -> int:
    """Resident set size now (Linux: /proc), else the peak so far."""
    gc.collect()
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _history_bytes(session: Session) -> int:
    return sum(s._x.nbytes + s._y.nbytes for run in session.history.runs for s in (run.train, run.eval))


def headless(gpu, steps: int, batch_size: int) -> dict:
    session = Session(gpu, Config(batch_size=batch_size))
    session.eval_every = 10_000
    session.advance(200)  # first submits settle the allocator, the ring and the caches
    start_rss, start_gpu, start_history = rss_bytes(), session.trainer.gpu_bytes(), _history_bytes(session)
    begin = time.perf_counter()
    while session.trainer.step < steps:
        session.advance(session.chunk_size(steps))
    seconds = time.perf_counter() - begin
    end_rss, end_gpu = rss_bytes(), session.trainer.gpu_bytes()
    history = _history_bytes(session) - start_history
    return {
        "steps": session.trainer.step,
        "batch_size": batch_size,
        "seconds": seconds,
        "steps_per_second": (session.trainer.step - 200) / seconds,
        "eval_loss": session.eval_loss,
        "rss_start": start_rss,
        "rss_end": end_rss,
        "history_bytes": history,
        "gpu_start": start_gpu,
        "gpu_end": end_gpu,
        "within_bound": end_rss - start_rss <= history + SLACK_BYTES and end_gpu == start_gpu,
    }


def _change_architecture(ui: OffscreenApp, hidden: list[int]) -> None:
    """What a user does in the network panel: edit the draft, press Apply."""
    ui.app.draft = ui.app.draft.replace(hidden=hidden)
    ui.app.start_rebuild()


def window(gpu, frames: int, change_every: int, batch_size: int) -> dict:
    ui = OffscreenApp(Session(gpu, Config(batch_size=batch_size), grid=HEATMAP_GRID, heatmaps=True), 1280, 800)
    gpu_by_architecture: dict[str, list[int]] = {}
    marks, begin = {}, time.perf_counter()
    try:
        ui.frame(30)
        marks["start"] = rss_bytes()
        changes = 0
        for frame in range(1, frames + 1):
            ui.frame()
            if frame % change_every == 0:
                trainer = ui.session.trainer
                gpu_by_architecture.setdefault(trainer.plan.title, []).append(trainer.gpu_bytes())
                changes += 1
                _change_architecture(ui, ARCHITECTURES[changes % len(ARCHITECTURES)])
                if changes == len(ARCHITECTURES):
                    marks["all built"] = rss_bytes()  # each architecture's kernels are now cached
        while ui.session.rebuild is not None:
            ui.frame()
        marks["end"] = rss_bytes()
        steps = ui.session.trainer.step
    finally:
        ui.close()
    seconds = time.perf_counter() - begin
    steady = marks.get("all built", marks["start"])
    return {
        "frames": frames,
        "change_every": change_every,
        "architecture_changes": changes,
        "seconds": seconds,
        "ms_per_frame": 1000 * seconds / frames,
        "last_run_steps": steps,
        "rss_start": marks["start"],
        "rss_all_built": marks.get("all built"),
        "rss_end": marks["end"],
        "gpu_by_architecture": gpu_by_architecture,
        "within_bound": marks["end"] - steady <= SLACK_BYTES
        and all(len(set(sizes)) == 1 for sizes in gpu_by_architecture.values()),
    }


def _mb(value: int) -> str:
    return f"{value / 2**20:.1f} MB"


def _print(result: dict) -> None:
    print(f"device: {result['device']['adapter']} ({result['device']['type']})")
    h = result["headless"]
    print(
        f"headless: {h['steps']:,} steps of {h['batch_size']} samples in {h['seconds']:.0f} s "
        f"({h['steps_per_second']:.0f} steps/s), eval loss {h['eval_loss']:.3g}"
    )
    print(
        f"  host RSS {_mb(h['rss_start'])} -> {_mb(h['rss_end'])} ({_mb(h['rss_end'] - h['rss_start'])}; "
        f"loss history {_mb(h['history_bytes'])}), trainer GPU {_mb(h['gpu_start'])} -> {_mb(h['gpu_end'])}; "
        f"bound {'held' if h['within_bound'] else 'EXCEEDED'}"
    )
    w = result["window"]
    print(
        f"window: {w['frames']:,} frames in {w['seconds']:.0f} s ({w['ms_per_frame']:.1f} ms/frame), "
        f"{w['architecture_changes']} architecture changes"
    )
    built = _mb(w["rss_all_built"]) if w["rss_all_built"] else "-"
    print(
        f"  host RSS {_mb(w['rss_start'])} -> {built} (all architectures built) -> {_mb(w['rss_end'])}; "
        f"bound {'held' if w['within_bound'] else 'EXCEEDED'}"
    )
    for title, sizes in w["gpu_by_architecture"].items():
        print(f"  trainer GPU {title}: {', '.join(sorted({_mb(s) for s in sizes}))} over {len(sizes)} visits")


def main() -> int:
    parser = options.parser("bench.soak", __doc__)
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--frames", type=int, default=10_000)
    parser.add_argument("--change-every", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=256)
    args = parser.parse_args()
    gpu = create_gpu(args.device)
    result = {
        "device": describe(gpu.device),
        "slack_bytes": SLACK_BYTES,
        "headless": headless(gpu, args.steps, args.batch_size),
        "window": window(gpu, args.frames, args.change_every, args.batch_size),
    }
    _print(result)
    options.write_json(args.json, result)
    return 0 if result["headless"]["within_bound"] and result["window"]["within_bound"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
