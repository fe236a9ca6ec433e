"""The cooperative-vector roads to a tensor-core trainer (coopvec-atomic, RTXNS's way; coopvec-stored,
bit-reproducible), on 2-64-64-64-4 in half beside the app's own trainer, each road's gradients first
checked against float64 numpy; and the cooperative-matrix-2 road's primitive (chain_probe.py). Needs
Feature.cooperative_vector (Vulkan on NVIDIA), else exits 2. docs/benchmarks.md, 'Other roads'."""

from __future__ import annotations

import sys

import slangpy as spy

from ..config.config import Config, validate
from ..gpu.device import describe
from ..gpu.gpu import create_gpu
from . import chain_probe, options
from .coopvec_road import CHECK_TOLERANCE, CoopVecRoad, check
from .runners import time_app


def _rate(run, batch: int, seconds: float) -> float:
    """Samples/s: the better of two runs of about `seconds` (the first also warms the GPU's clocks)."""
    probe = run(4) / 4
    steps = max(4, int(seconds / max(probe, 1e-6)))
    return batch * steps / min(run(steps), run(steps))


def _road_rows(device: spy.Device) -> tuple[list[dict], list[tuple[str, str]]]:
    """Each road's check, with fp32 gradients where the driver gives right ones, else fp16."""
    rows, roads = [], []
    for road in ("atomic", "stored"):
        for grad_type in ("float", "half"):
            try:
                checked = check(device, road, grad_type)
            except Exception as error:  # a driver without this accumulation type, say
                print(f"coopvec-{road} ({grad_type} gradients): unavailable: {str(error).splitlines()[0]}", flush=True)
                continue
            ok = max(checked["relative_error_per_layer"]) < CHECK_TOLERANCE and checked.get("bit_identical_rerun", True)
            print(f"coopvec-{road} ({grad_type} gradients): check {'passed' if ok else 'FAILED'} {checked}", flush=True)
            rows.append({"road": f"coopvec-{road}", "gradients": grad_type, "check": checked, "ok": ok})
            if ok:
                roads.append((road, grad_type))
                break
    return rows, roads


def _timed_road(device: spy.Device, road: str, grad_type: str, batch: int, seconds: float, app_rate: float) -> dict:
    trainer = CoopVecRoad(device, road, batch, grad_type)
    rate = _rate(trainer.time, batch, seconds)
    parts = {
        part: batch / _rate(lambda n, part=part: trainer.time(n, part), batch, seconds) * 1e6
        for part in ("learn", "weight_gradients")
    }
    print(
        f"coopvec-{road} ({grad_type} gradients), batch {batch}: {rate:.3g} samples/s, {rate / app_rate:.2f}x the "
        f"app; {batch / rate * 1e6:.0f} us a step: the per-sample kernel (with the weights' conversion) "
        f"{parts['learn']:.0f} us, the weight gradients' {parts['weight_gradients']:.0f} us",
        flush=True,
    )
    return {
        "road": f"coopvec-{road}",
        "gradients": grad_type,
        "batch": batch,
        "samples_per_second": rate,
        "step_us": batch / rate * 1e6,
        "per_sample_kernel_us": parts["learn"],
        "weight_gradients_us": parts["weight_gradients"],
    }


def main(argv=None) -> int:
    parser = options.parser("bench.roads", __doc__)
    parser.add_argument("--batch", type=int, action="append", help="batch sizes (default 2^16 and 2^20)")
    parser.add_argument("--seconds", type=float, default=2.0, help="time each row for about this long")
    args = parser.parse_args(argv)
    batches = args.batch or [1 << 16, 1 << 20]
    gpu = create_gpu(args.device)
    device = gpu.device
    print(describe(device), flush=True)
    if not device.has_feature(spy.Feature.cooperative_vector):
        print("error: this device has no cooperative vectors (Feature.cooperative_vector)", file=sys.stderr)
        return 2
    figures = {"device": describe(device), "rows": []}
    chains = chain_probe.measure(device)
    for road, result in chains.items():
        print(f"64x64 layer chain, {road}: {result}", flush=True)
    figures["chains"] = chains
    rows, roads = _road_rows(device)
    figures["rows"] += rows
    for batch in batches:
        config = validate(Config(batch_size=batch, precision="half", encoding="raw", hidden=[64, 64, 64]))
        app_rate = _rate(lambda n, config=config: time_app(gpu, config, n)[0], batch, args.seconds)
        print(f"app (fused trainer), 2-64-64-64-4 half, batch {batch}: {app_rate:.3g} samples/s", flush=True)
        figures["rows"].append({"road": "app", "batch": batch, "samples_per_second": app_rate})
        for road, grad_type in roads:
            figures["rows"].append(_timed_road(device, road, grad_type, batch, args.seconds, app_rate))
    options.write_json(args.json, figures)
    return 0 if len(roads) == 2 else 1


if __name__ == "__main__":
    raise SystemExit(main())
