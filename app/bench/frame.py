"""Frame-time benchmark: the app at 1280x800, frames rendered offscreen through the window's own frame()
(no present, so no vsync wait), beside a headless run of the same network: frame times paused and
training, GPU time per part, CPU time recording, and the window's samples/s over headless. It drives
the offscreen UI, so it imports app.ui. docs/benchmarks.md, 'Frame time'."""

from __future__ import annotations

import contextlib
import statistics
import time

from ..config.config import ENCODINGS, PRECISIONS, Config, validate
from ..config.files import load_file
from ..gpu.device import describe
from ..gpu.gpu import create_gpu
from ..gpu.timing import PARTS
from ..loop.session import Session
from ..truth import image_truth
from ..ui.offscreen import OffscreenApp
from ..ui.opening import HEATMAP_GRID
from . import options


def _frames(ui: OffscreenApp, frames: int, force: bool = False) -> dict:
    times, gpu, cpu = [], {part: [] for part in PARTS}, {"record_ms": [], "wait_ms": []}
    samples, drawn = ui.session.trainer.samples_seen, ui.app.redraw.count
    start = time.perf_counter()
    for _ in range(frames):
        begin = time.perf_counter()
        ui.frame(force=force)
        times.append(time.perf_counter() - begin)
        for part, ms in ui.app.stats.gpu_ms.items():
            gpu[part].append(ms)
        for key, values in cpu.items():
            values.append(getattr(ui.app.stats, key))
    wall = time.perf_counter() - start
    times.sort()
    result = {
        "ms_per_frame": statistics.median(times) * 1000,
        "p95_ms": times[int(0.95 * (len(times) - 1))] * 1000,
        "frames": frames,
        "samples": ui.session.trainer.samples_seen - samples,
        "seconds": wall,
        "samples_per_second": (ui.session.trainer.samples_seen - samples) / wall,
        "frames_per_second": frames / wall,
        "ui_drawn_per_second": (ui.app.redraw.count - drawn) / wall,
        "training": ui.app.stats.training,
        **{key: statistics.median(values) for key, values in cpu.items()},
    }
    if all(gpu.values()):
        result["gpu_ms"] = {part: statistics.median(values) for part, values in gpu.items()}
    return result


def _headless(gpu, config: Config, seconds: float) -> dict:
    """`config` trained headless for about `seconds`: its samples, its seconds and their rate."""
    session = Session(gpu, config)
    session.eval_every = 1 << 30
    session.advance(2)
    start, samples = time.perf_counter(), session.trainer.samples_seen
    while time.perf_counter() - start < seconds:
        session.advance(session.chunk_size(1 << 62))
    wall, samples = time.perf_counter() - start, session.trainer.samples_seen - samples
    return {"samples": samples, "seconds": wall, "samples_per_second": samples / wall}


def _config(args) -> Config:
    config = load_file(args.config) if args.config else Config()
    if args.image:
        info, _ = image_truth.load(args.image)
        config = config.replace(image=info, domain=image_truth.aspect_domain(info["width"], info["height"]))
    changes = {"hidden": args.hidden, "batch_size": args.batch_size}
    changes |= {"precision": args.precision, "encoding": args.encoding}
    return validate(config.replace(**{key: value for key, value in changes.items() if value is not None}))


def _training(ui: OffscreenApp, frames: int) -> dict:
    ui.app.running = True
    ui.frame(60)  # the frame budget learns the costs
    return _frames(ui, frames)


@contextlib.contextmanager
def _settled_window(gpu, config: Config, width: int, height: int):
    """The app's window on `config`, offscreen, paused and settled; closed after."""
    ui = OffscreenApp(Session(gpu, config, grid=HEATMAP_GRID, heatmaps=True), width, height)
    try:
        ui.app.running = False
        ui.frame(10)  # settle: layout, first evaluation, caches
        yield ui
    finally:
        ui.close()


def window_row(gpu, network: str, config: Config, frames: int, seconds: float) -> dict:
    """The bench's window row (app/bench/speed.py): `config` trained in the window at 1280x800,
    `frames` training frames, beside a headless run of `seconds`."""
    with _settled_window(gpu, config, 1280, 800) as ui:
        training = _training(ui, frames)
    headless = _headless(gpu, config, seconds)
    return dict(
        trainer="app-window",
        network=network,
        batch=config.batch_size,
        precision=config.precision,
        samples=training["samples"],
        seconds=training["seconds"],
        samples_per_second=training["samples_per_second"],
        headless=headless,
        headless_samples_per_second=headless["samples_per_second"],
        window_over_headless=training["samples_per_second"] / headless["samples_per_second"],
        frames_per_second=training["frames_per_second"],
        record_ms=training["record_ms"],
    )


def print_window_row(row: dict) -> None:
    print(
        f"{row['trainer']:>28} {row['network']:>13} {row['precision']:>5} batch {row['batch']:>9}: "
        f"{row['samples_per_second']:10.3g} samples/s in the window, {row['headless_samples_per_second']:.3g} "
        f"headless: {row['window_over_headless']:.2f} of headless ({row['frames_per_second']:.0f} frames/s, "
        f"{row['record_ms']:.1f} ms of CPU recording a frame)",
        flush=True,
    )


def run(args) -> dict:
    gpu = create_gpu(args.device)
    config = _config(args)
    with _settled_window(gpu, config, args.width, args.height) as ui:
        paused = _frames(ui, args.frames)
        paused_drawn = _frames(ui, args.frames, force=True)
        training = _training(ui, args.frames)
    headless = _headless(gpu, config, args.seconds)
    return {
        "device": describe(gpu.device),
        "size": [args.width, args.height],
        "network": config.hidden,
        "precision": config.precision,
        "encoding": config.encoding,
        "image": [config.image["width"], config.image["height"]] if config.image else None,
        "final_psnr": ui.session.image.psnr if ui.session.image is not None else None,
        "batch_size": config.batch_size,
        "paused": paused,
        "paused_drawn": paused_drawn,
        "training": training,
        "headless": headless,
        "headless_samples_per_second": headless["samples_per_second"],
        "window_over_headless": training["samples_per_second"] / headless["samples_per_second"],
    }


def _print(result: dict) -> None:
    print(
        f"device: {result['device']['adapter']} ({result['device']['type']}), {result['size'][0]}x{result['size'][1]}, "
        f"hidden {result['network']} ({result['encoding']}, {result['precision']}), batch {result['batch_size']}"
        + (
            f", image {result['image'][0]}x{result['image'][1]}, final PSNR {result['final_psnr']:.2f} dB"
            if result["image"]
            else ""
        )
    )
    for mode in ("paused", "paused_drawn", "training"):
        r = result[mode]
        line = (
            f"{mode:>12}: {r['ms_per_frame']:6.2f} ms/frame median, {r['p95_ms']:6.2f} ms p95, "
            f"{r['frames_per_second']:5.1f} frames/s, UI drawn {r['ui_drawn_per_second']:5.1f}/s"
        )
        if "gpu_ms" in r:
            line += "  GPU " + ", ".join(f"{k} {v:.2f} ms" for k, v in r["gpu_ms"].items())
        print(line + f"  CPU recording {r['record_ms']:.2f} ms, waiting {r['wait_ms']:.2f} ms")
    print(
        f"window training: {result['training']['samples_per_second']:.4g} samples/s ({result['training']['training']})"
    )
    print(f"headless:        {result['headless_samples_per_second']:.4g} samples/s")
    print(f"window / headless: {result['window_over_headless']:.2f}")


def main(argv=None) -> int:
    parser = options.parser("bench.frame", __doc__)
    parser.add_argument("--frames", type=int, default=200, help="frames per mode")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=800)
    parser.add_argument("--batch-size", type=int, help="samples a step (default: the config's)")
    parser.add_argument("--hidden", type=lambda text: [int(w) for w in text.split(",")], help="e.g. 16,16")
    parser.add_argument("--precision", choices=PRECISIONS, help="default: the config's")
    parser.add_argument("--encoding", choices=ENCODINGS, help="default: the config's")
    parser.add_argument("--config", help="a config file or summary.json to start from")
    parser.add_argument("--image", help="a PNG or JPEG image to fit")
    parser.add_argument("--seconds", type=float, default=2.0, help="length of the headless run")
    args = parser.parse_args(argv)
    result = run(args)
    _print(result)
    options.write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
