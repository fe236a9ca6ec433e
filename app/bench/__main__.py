"""python -m app.bench [--quick] [--json PATH]: training speed of the app's trainer beside the
tutorial's atomic design and PyTorch eager, in one run on one device."""

from __future__ import annotations

import argparse
import json
import os
import sys

import time

from app.bench.runners import AtomicReference, time_app, time_torch, torch_available
from app.bench.startup import cold_and_warm
from app.config import Config, validate
from app.device import describe
from app.gpu import create_gpu
from app.trainer import Trainer

FULL_SIZES = [1 << 12, 1 << 16, 1 << 20, 1 << 24]
QUICK_SIZES = [1 << 10, 1 << 12]
WIDE = dict(encoding="raw", hidden=[64, 64, 64])  # 2 -> 64 -> 64 -> 64 -> 4


def _steps_for(seconds_per_step: float, budget: float, cap: int) -> int:
    return max(2, min(cap, int(budget / max(seconds_per_step, 1e-6))))


def _measure(name: str, batch: int, precision: str, run, budget: float, cap: int) -> dict:
    """Runs twice: a 2-step probe sizes the timed run to about `budget` seconds."""
    probe = run(2) / 2
    steps = _steps_for(probe, budget, cap)
    seconds = run(steps)
    return {"trainer": name, "batch": batch, "precision": precision,
            "samples_per_second": batch * steps / seconds, "steps_per_second": steps / seconds}


def _app_runner(gpu, config, gpu_bytes: list[int]):
    """A runner for _measure that also notes the trainer's GPU memory in `gpu_bytes`."""
    def run(steps: int) -> float:
        seconds, used = time_app(gpu, config, steps)
        gpu_bytes.append(used)
        return seconds
    return run


def run_benchmarks(quick: bool, device_kind: str = "auto") -> dict:
    gpu = create_gpu(device_kind)
    info = describe(gpu.device)
    software = gpu.software
    sizes = QUICK_SIZES if quick else FULL_SIZES
    budget = 0.3 if quick else 2.0
    cap = 50 if quick else 4000
    results, gpu_bytes = [], []
    atomic = AtomicReference(gpu)
    use_torch = torch_available()
    for batch in sizes:
        if software and batch > (1 << 20):
            print(f"skip batch {batch}: over a minute a step on a software driver", file=sys.stderr)
            continue
        for precision in ("float", "half"):
            config = validate(Config(batch_size=batch, precision=precision))
            results.append(_measure("app", batch, precision, _app_runner(gpu, config, gpu_bytes), budget, cap))
        results.append(_measure("atomic-reference", batch, "float", lambda n: atomic.time(batch, n), budget, cap))
        if use_torch:
            results.append(_measure("torch", batch, "float", lambda n: time_torch([4, 16, 4], batch, n), budget, cap))
            results.append(_measure("torch", batch, "half", lambda n: time_torch([4, 16, 4], batch, n, True), budget, cap))
        _print_rows(results[-5 if use_torch else -3:])
    wide_batch = QUICK_SIZES[-1] if quick else (1 << 16 if software else 1 << 20)
    wide = validate(Config(batch_size=wide_batch, **WIDE))
    results.append(dict(_measure("app", wide_batch, "float", _app_runner(gpu, wide, gpu_bytes), budget, cap), network="2-64-64-64-4"))
    if use_torch:
        results.append(dict(_measure("torch", wide_batch, "float", lambda n: time_torch([2, 64, 64, 64, 4], wide_batch, n), budget, cap),
                            network="2-64-64-64-4"))
    extras = _extras(gpu, quick, device_kind)
    extras["peak_trainer_gpu_bytes"] = max(gpu_bytes)
    return {"device": info, "results": results, "extras": extras}


def _extras(gpu, quick: bool, device_kind: str) -> dict:
    extras: dict = {}
    if not quick:  # (the window's first frame is measured only where there is a display)
        os.environ["VISUAL_TRAINER_BENCH_DEVICE"] = device_kind
        extras.update(cold_and_warm())
    base = validate(Config())
    Trainer(gpu, base).train(1)
    Trainer(gpu, base.replace(hidden=[24, 12])).train(1)
    start = time.perf_counter()
    Trainer(gpu, base).train(1)  # back to an architecture this process compiled
    extras["rebuild_seconds_compiled_architecture"] = time.perf_counter() - start
    return extras


def _print_rows(rows: list[dict]) -> None:
    reference = {r["batch"]: r["samples_per_second"] for r in rows if r["trainer"] == "atomic-reference"}
    for r in rows:
        ratio = r["samples_per_second"] / reference[r["batch"]] if r["batch"] in reference else float("nan")
        print(f"{r['trainer']:>17} {r.get('network', '4-16-4'):>13} {r['precision']:>5} batch {r['batch']:>9}: "
              f"{r['samples_per_second']:12.4g} samples/s {r['steps_per_second']:10.1f} steps/s  "
              f"x{ratio:8.1f} vs atomic", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes, few steps (under a minute)")
    parser.add_argument("--json", help="write the results to this file")
    parser.add_argument("--device", default="auto", choices=("auto", "vulkan", "cuda", "d3d12", "metal"))
    args = parser.parse_args(argv)
    report = run_benchmarks(args.quick, args.device)
    print(f"device: {report['device']['type']} {report['device']['adapter']}")
    _print_rows(report["results"][-2:] if report["results"][-1].get("network") else [])
    for key, value in report["extras"].items():
        print(f"{key}: {value:.4g}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(report, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
