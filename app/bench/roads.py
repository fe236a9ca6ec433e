"""python -m app.bench.roads [--batch B ...] [--seconds S] [--json PATH] [--device auto]

The cooperative-vector roads to a tensor-core trainer (issue 20, item 2), measured on the
benchmark's 2-64-64-64-4 network in half precision beside the app's own trainer in one run:

- coopvec-atomic: one sample a thread; forward products and input gradients with
  `coopVecMatMul[Add]` on training-optimal weights; weight gradients with
  `coopVecOuterProductAccumulate` (RTXNS's way: atomic, so not bit-reproducible);
- coopvec-stored: the same forward and backward, every sample's activations and gradients
  stored in half, the weight gradients multiplied from them on tensor cores in fixed chunks and
  summed in a fixed order (bit-reproducible).

Each road trains with Adam (lr 0.01) on fp32 master weights, in steps of `--batch` samples
(shaders/bench/bench_roads.slang). Before timing, each road's gradients for one batch of 4096 are
checked against float64 numpy from the same half weights and points (their relative error is
printed; a variant over 3% is not timed), and the stored road's against a second run of itself
(bit for bit). Each road tries fp32 gradient sums first, then fp16; the run exits 1 when a road
has no variant that passes.

First it measures the cooperative-matrix-2 road's primitive beside the app's: a chain of
64-sample x 64 x 64 layers as workgroup-scope and as subgroup-scope products (chain_probe.py).
Needs Feature.cooperative_vector (Vulkan on NVIDIA): elsewhere it says so and exits 2."""

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
