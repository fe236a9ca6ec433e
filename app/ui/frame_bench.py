"""Frame-time benchmark: the default app at 1280x800, frames rendered offscreen through the
same frame() path as the window (no present, so no vsync wait).

    python -m app.ui.frame_bench [--frames N] [--json PATH] [--device auto]"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from app.config import Config
from app.device import create_device, describe
from app.trainer import Trainer
from app.ui.offscreen import OffscreenApp
from app.ui.timing import PARTS


def _measure(ui: OffscreenApp, frames: int, running: bool) -> dict:
    ui.app.running = running
    ui.frame(5)  # settle: layout, first evaluation, caches
    times, gpu = [], {part: [] for part in PARTS}
    for _ in range(frames):
        start = time.perf_counter()
        ui.frame()
        times.append(time.perf_counter() - start)
        for part, ms in ui.app.stats.gpu_ms.items():
            gpu[part].append(ms)
    ms = statistics.median(times) * 1000
    result = {"ms_per_frame": ms, "mean_ms": statistics.fmean(times) * 1000, "frames_per_s": 1000 / ms,
              "steps_per_frame": ui.app.steps_per_frame if running else 0}
    if all(gpu.values()):
        result["gpu_ms"] = {part: statistics.median(values) for part, values in gpu.items()}
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=200)
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=800)
    args = parser.parse_args()
    device = create_device(args.device)
    ui = OffscreenApp(Trainer(device, Config()), args.width, args.height, args.device)
    try:
        results = {"device": describe(device), "size": [args.width, args.height],
                   "renderer": "slangpy.ui.imgui_bundle (sgl ui.Context)",
                   "paused": _measure(ui, args.frames, False), "training": _measure(ui, args.frames, True)}
    finally:
        ui.close()
    print(f"device: {results['device']['adapter']} ({results['device']['type']}), {args.width}x{args.height}, "
          f"{args.frames} frames each, median")
    for mode in ("paused", "training"):
        r = results[mode]
        line = f"{mode:>9}: {r['ms_per_frame']:6.2f} ms/frame  {r['frames_per_s']:6.1f} frames/s"
        if mode == "training":
            line += f"  ({r['steps_per_frame']} steps/frame, batch {Config().batch_size})"
        if "gpu_ms" in r:
            line += "  GPU " + ", ".join(f"{k} {v:.2f} ms" for k, v in r["gpu_ms"].items())
        print(line)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
