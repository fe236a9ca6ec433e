"""Frame-time benchmark: the default app at 1280x800, frames rendered offscreen through the
same frame() path as the window (no present, so no vsync wait).

    python -m app.ui.frame_bench [--frames N] [--renderer ours|slangpy|both] [--rounds R]
                                 [--json PATH] [--device auto] [--batch-size B] [--steps-per-frame S]

--batch-size and --steps-per-frame make training the bottleneck, to see the share of GPU time
that training gets in a frame.

--renderer picks the UI backend (app.ui.renderer): "ours" (app.ui.imgui_draw), "slangpy"
(slangpy.ui.imgui_bundle through sgl's ui.Context) or "both" (the default). Each backend drives
its own app on its own trainer; with both, the frames are measured in R alternating rounds
(ours, slangpy, ours, ...) so that drifting machine load (a shared VM, lavapipe's threads)
falls on both alike. Medians over all of a backend's frames."""

from __future__ import annotations

import argparse
import json
import statistics
import time

from app.config import Config
from app.device import create_device, describe
from app.trainer import Trainer
from app.ui.offscreen import OffscreenApp
from app.ui.renderer import BACKENDS
from app.ui.timing import PARTS

RENDERER_NAMES = {"ours": "ours (app.ui.imgui_draw)", "slangpy": "slangpy.ui.imgui_bundle (sgl ui.Context)"}
MODES = {"paused": False, "training": True}


class _Samples:
    def __init__(self):
        self.times, self.gpu = [], {part: [] for part in PARTS}

    def run(self, ui: OffscreenApp, frames: int) -> None:
        for _ in range(frames):
            start = time.perf_counter()
            ui.frame()
            self.times.append(time.perf_counter() - start)
            for part, ms in ui.app.stats.gpu_ms.items():
                self.gpu[part].append(ms)

    def result(self, ui: OffscreenApp, running: bool) -> dict:
        ms = statistics.median(self.times) * 1000
        result = {"ms_per_frame": ms, "mean_ms": statistics.fmean(self.times) * 1000, "frames_per_s": 1000 / ms,
                  "frames": len(self.times), "steps_per_frame": ui.app.steps_per_frame if running else 0,
                  "batch_size": ui.app.trainer.config.batch_size}
        if all(self.gpu.values()):
            result["gpu_ms"] = {part: statistics.median(values) for part, values in self.gpu.items()}
        return result


def _bench(device, args, backends) -> dict:
    config = Config().replace(batch_size=args.batch_size)
    apps = {b: OffscreenApp(Trainer(device, config), args.width, args.height, backend=b)
            for b in backends}
    for ui in apps.values():
        if args.steps_per_frame is not None:
            ui.app.steps_per_frame = args.steps_per_frame
    results = {b: {"renderer": RENDERER_NAMES[b]} for b in backends}
    try:
        for mode, running in MODES.items():
            samples = {b: _Samples() for b in backends}
            for ui in apps.values():
                ui.app.running = running
                ui.frame(5)  # settle: layout, first evaluation, caches
            rounds = args.rounds if len(backends) > 1 else 1
            for r in range(rounds):
                for b in backends:
                    samples[b].run(apps[b], args.frames // rounds + (r < args.frames % rounds))
            for b in backends:
                results[b][mode] = samples[b].result(apps[b], running)
    finally:
        for ui in apps.values():
            ui.close()
    return results


def _print(result: dict) -> None:
    print(f"renderer {result['renderer']}:")
    for mode in MODES:
        r = result[mode]
        line = f"{mode:>9}: {r['ms_per_frame']:6.2f} ms/frame  {r['frames_per_s']:6.1f} frames/s"
        if mode == "training":
            line += f"  ({r['steps_per_frame']} steps/frame, batch {r['batch_size']})"
        if "gpu_ms" in r:
            line += "  GPU " + ", ".join(f"{k} {v:.2f} ms" for k, v in r["gpu_ms"].items())
            total = sum(r["gpu_ms"].values())
            if mode == "training" and total > 0:
                line += f"  (training {100 * r['gpu_ms']['training'] / total:.0f}% of GPU time)"
        print(line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=200, help="frames per mode and backend")
    parser.add_argument("--renderer", choices=[*BACKENDS, "both"], default="both")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds when measuring both")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=800)
    parser.add_argument("--batch-size", type=int, default=Config().batch_size)
    parser.add_argument("--steps-per-frame", type=int, help="default: the app's")
    args = parser.parse_args()
    device = create_device(args.device)
    backends = BACKENDS if args.renderer == "both" else (args.renderer,)
    results = {"device": describe(device), "size": [args.width, args.height],
               "renderers": _bench(device, args, backends)}
    print(f"device: {results['device']['adapter']} ({results['device']['type']}), {args.width}x{args.height}, "
          f"{args.frames} frames each, median")
    for result in results["renderers"].values():
        _print(result)
    if len(backends) > 1:
        ours, theirs = (results["renderers"][b] for b in BACKENDS)
        for mode in MODES:
            line = f"{mode:>9}: ours/slangpy {ours[mode]['ms_per_frame'] / theirs[mode]['ms_per_frame']:.2f}x ms/frame"
            if "gpu_ms" in ours[mode] and "gpu_ms" in theirs[mode]:
                line += f", {ours[mode]['gpu_ms']['ui'] / theirs[mode]['gpu_ms']['ui']:.2f}x GPU ui"
            print(line)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
