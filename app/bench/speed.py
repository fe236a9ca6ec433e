"""Training speed of the app beside the tutorial's atomic design and PyTorch (eager, and compiled with
its whole step in a CUDA graph), in one run on one device; every app row a ratio to the best PyTorch
row of its network and batch. The rows (the CUDA column, the hash grids, the image fits, the
derivatives, the window), the compile mode and the figures: docs/benchmarks.md, 'Training speed'."""

from __future__ import annotations

import os
import sys

from ..config.config import Config, validate
from ..gpu.device import describe
from ..gpu.gpu import create_gpu
from . import derivative_rows, hashgrid_task, image_fit, options, tools, torch_hashgrid, torch_reference
from .runners import CUDA_SHARE, EAGER_SHARE, AtomicReference, app_row, measure
from .startup import cold_and_warm

NETWORKS = {  # name: (config fields, PyTorch layer sizes)
    "4-16-4": (dict(), [4, 16, 4]),
    "2-64-64-64-4": (dict(encoding="raw", hidden=[64, 64, 64]), [2, 64, 64, 64, 4]),
    "2-128-128-4": (dict(encoding="raw", hidden=[128, 128]), [2, 128, 128, 4]),
    "hashgrid": (hashgrid_task.app_fields, [32, 64, 64, 3]),  # fields made when the row runs (the photo)
    "hashgrid-tcnn": (lambda: hashgrid_task.app_fields(log2_size=hashgrid_task.TCNN_LOG2_SIZE), [32, 64, 64, 3]),
}
TORCH_REFERENCES = {  # the PyTorch twin of each network whose model is not torch_reference's MLP
    "hashgrid": torch_hashgrid.Reference(hashgrid_task.grid()),
    "hashgrid-tcnn": torch_hashgrid.Reference(hashgrid_task.grid(hashgrid_task.TCNN_LOG2_SIZE)),
}
FULL = {
    "4-16-4": [1 << 12, 1 << 16, 1 << 20, 1 << 24],
    "2-64-64-64-4": [1 << 16, 1 << 20],
    "2-128-128-4": [1 << 20],
    "hashgrid": [1 << 18],
    "hashgrid-tcnn": [1 << 18],
    derivative_rows.GROUP: [1 << 16, 1 << 20],
}
QUICK = {
    "4-16-4": [1 << 10, 1 << 12],
    "2-64-64-64-4": [1 << 12],
    "2-128-128-4": [1 << 10],
    derivative_rows.GROUP: [1 << 10],
}
# Only with --only hashgrid: its 2^19-entry tables take a CPU driver about a second a step.
QUICK_ONLY = {"hashgrid": [1 << 12], "hashgrid-tcnn": [1 << 12]}
SOFTWARE_MAX_BATCH = 1 << 20  # a CPU driver takes over a minute a step beyond
# The image-fit rows: half precision at tiny-cuda-nn's batch, for 1.5 s of training clock, the PSNR
# every 0.01 s until 30 dB and every quarter second after.
IMAGE_FIT = dict(seconds=1.5, target=30.0, every=0.25)
IMAGE_FIT_BATCH = 1 << 18
# The window row: the window's training frames (rendered offscreen through the window's frame(),
# app/bench/frame.py) against a headless run of the same network, where the window falls furthest
# behind: a small batch of a wide network, whose steps the CPU records nearly as fast as the GPU
# runs them. The target is 0.85 of headless.
WINDOW = dict(network="2-64-64-64-4", batch=1 << 12, precision="half", frames=120, seconds=1.5)
# Networks whose compiled PyTorch row is fp16 alone: the hash grids, where fp16 autocast was the
# stronger in every run and the fp32 compiles cost the run a minute and more (eager fp32 stays).
COMPILED_HALF_ONLY = {"hashgrid", "hashgrid-tcnn"}


# Seconds each timed row runs (eager PyTorch and the CUDA column a share of it: runners.py): short
# enough that the full run, window row included, keeps to its 8 minutes, long enough for hundreds
# of steps a row (docs/benchmarks.md, 'How the run keeps to its 8 minutes').
TIMED_SECONDS = 1.25


AUTOTUNE_MODE = "max-autotune-no-cudagraphs"
COMPILE_MODES = ("auto", "default", AUTOTUNE_MODE)


def _compile_mode(choice: str, sizes: list[int], batch: int, half: bool) -> str:
    """torch.compile's mode for one PyTorch row (see the module's docstring for "auto")."""
    if choice != "auto":
        return choice
    wide = max(sizes[1:-1]) >= 64
    return AUTOTUNE_MODE if half and wide and batch >= 1 << 20 else "default"


def cuda_twin(gpu, args):
    """The same NVIDIA GPU through SlangPy's CUDA backend, for the app rows' CUDA column: where the
    bench runs on Vulkan on an NVIDIA GPU, unless --no-cuda. With tensor cores where Vulkan has
    them (the CUDA backend reports none, yet runs them: app/gpu/gpu.py), so that both columns take
    the same gradient paths."""
    info = describe(gpu.device)
    if args.no_cuda or gpu.software or info["type"] != "vulkan" or "nvidia" not in info["adapter"].lower():
        return None
    try:
        return create_gpu("cuda", tensor_cores=gpu.tensor_cores)
    except Exception as error:  # no CUDA driver or toolkit here: the column is left out, and says why
        print(f"no CUDA column: {str(error).strip().splitlines()[0]}", file=sys.stderr)
        return None


def _rows_for(gpu, name: str, batch: int, args, use_torch: bool, atomic, cuda=None) -> list[dict]:
    budget, cap = (0.3, 50) if args.quick else (TIMED_SECONDS, 4000)
    if name == derivative_rows.GROUP:
        return derivative_rows.rows_for(gpu, batch, args, budget, cap)
    fields, sizes = NETWORKS[name]
    fields = fields() if callable(fields) else fields
    reference = TORCH_REFERENCES.get(name, torch_reference)
    rows = [app_row(gpu, name, batch, precision, fields, budget, cap) for precision in ("float", "half")]
    if cuda is not None:  # the CUDA column: the same rows through SlangPy's CUDA backend
        rows += [
            dict(app_row(cuda, name, batch, precision, fields, budget * CUDA_SHARE, cap), trainer="app-cuda")
            for precision in ("float", "half")
        ]
    if atomic is not None and name == "4-16-4":
        rows.append(
            dict(
                trainer="atomic-reference",
                network=name,
                batch=batch,
                precision="float",
                **measure(lambda n: atomic.time(batch, n), batch, budget, cap),
            )
        )
    if use_torch:
        for half in (False, True):
            label = "fp16" if half else "fp32"
            rows.append(
                dict(
                    trainer=f"torch-eager-{label}",
                    network=name,
                    batch=batch,
                    precision=label,
                    **measure(
                        lambda n, half=half: reference.time_eager(sizes, batch, n, half),
                        batch,
                        budget * EAGER_SHARE,
                        cap,
                    ),
                )
            )
            if not args.no_compile and (half or name not in COMPILED_HALF_ONLY):
                mode = _compile_mode(args.compile_mode, sizes, batch, half)
                graph = reference.CompiledGraph(sizes, batch, half, mode)
                rows.append(
                    dict(
                        trainer=f"torch-compiled-graph-{label}",
                        network=name,
                        batch=batch,
                        precision=label,
                        compile_mode=mode,
                        build_seconds=graph.build_seconds,
                        **measure(graph.time, batch, budget, cap * 10),
                    )
                )
    best = max((r["samples_per_second"] for r in rows if r["trainer"].startswith("torch")), default=None)
    for row in rows:
        if row["trainer"] in ("app", "app-cuda") and best:
            row["vs_best_torch"] = row["samples_per_second"] / best
    return rows


def _print(row: dict) -> None:
    ratio = f"  x{row['vs_best_torch']:.2f} best PyTorch" if "vs_best_torch" in row else ""
    kernel = f" [{row['matmul']}, {row['gradient_path']}]" if "matmul" in row else ""
    built = f"{row['compile_mode']}: compile+capture" if "compile_mode" in row else "capture"
    build = f" ({built} {row['build_seconds']:.0f} s)" if "build_seconds" in row else ""
    build += f" {row['gpu_mib']:.3g} MiB of GPU memory" if "gpu_mib" in row else ""
    build += f"  [{row['note']}]" if "note" in row else ""
    print(
        f"{row['trainer']:>28} {row['network']:>13} {row['precision']:>5} batch {row['batch']:>9}: "
        f"{row['samples_per_second']:10.3g} samples/s {row['steps_per_second']:10.1f} steps/s{ratio}{kernel}{build}",
        flush=True,
    )


def _image_fit_row(gpu, name: str) -> dict:
    """How fast the `name` grid fits the photo: its PSNR against the training clock."""
    fields = NETWORKS[name][0]()
    config = validate(Config(**fields, batch_size=IMAGE_FIT_BATCH, precision="half", lr=0.01, seed=0))
    fit = image_fit.fit(gpu, config, **IMAGE_FIT, quiet=True)
    return dict(
        trainer="app-image-fit",
        network=name,
        batch=IMAGE_FIT_BATCH,
        precision="half",
        steps=fit["steps"],
        seconds=fit["seconds"],
        samples_per_second=fit["samples_per_second"],
        seconds_to_30db=fit["seconds_to_target"],
        psnr_curve=[(round(p["seconds"], 3), round(p["psnr"], 2)) for p in fit["points"]],
    )


def _print_image_fit(row: dict) -> None:
    reached = row["seconds_to_30db"]
    marks = [next((p for p in row["psnr_curve"] if p[0] >= mark), None) for mark in (0.5, 1.0, 1.5)]
    curve = ", ".join(f"{psnr:.1f} dB at {seconds:.2f} s" for seconds, psnr in filter(None, marks))
    print(
        f"{row['trainer']:>28} {row['network']:>13} {row['precision']:>5} batch {row['batch']:>9}: "
        + (f"30 dB after {reached:.3f} s" if reached is not None else "30 dB not reached")
        + f" ({row['samples_per_second']:.3g} samples/s); {curve}",
        flush=True,
    )


def _window_row(gpu) -> dict:
    """How fast the window trains WINDOW's network, against headless; printed."""
    from . import frame  # the offscreen UI (slow imports): only where a full run on a GPU needs it

    fields = NETWORKS[WINDOW["network"]][0]
    config = validate(Config(**fields, batch_size=WINDOW["batch"], precision=WINDOW["precision"]))
    row = frame.window_row(gpu, WINDOW["network"], config, WINDOW["frames"], WINDOW["seconds"])
    frame.print_window_row(row)
    return row


def run_benchmarks(args) -> dict:
    gpu = create_gpu(args.device)
    sizes = {**QUICK, **QUICK_ONLY} if args.quick and args.only in QUICK_ONLY else QUICK if args.quick else FULL
    use_torch = torch_reference.available()
    atomic = AtomicReference(gpu) if (args.only in (None, "4-16-4")) else None
    cuda = cuda_twin(gpu, args)
    results = []
    for name, batches in sizes.items():
        if args.only and name != args.only:
            continue
        for batch in batches:
            if args.batch and batch not in args.batch:
                continue
            if gpu.software and batch > SOFTWARE_MAX_BATCH:
                print(f"skip {name} batch {batch}: over a minute a step on a software driver", file=sys.stderr)
                continue
            for row in _rows_for(gpu, name, batch, args, use_torch, atomic, cuda):
                _print(row)
                results.append(row)
        if name in TORCH_REFERENCES and not (args.quick or gpu.software):
            results.append(_image_fit_row(gpu, name))
            _print_image_fit(results[-1])
    if not (args.quick or args.only or args.batch or gpu.software):
        results.append(_window_row(gpu))
    extras = {} if args.quick or args.only or args.batch else cold_and_warm()
    report = {"device": describe(gpu.device), "tensor_cores": gpu.tensor_cores, "results": results, "extras": extras}
    if cuda is not None:
        report["cuda_device"] = describe(cuda.device)
    return report


def main(argv=None) -> int:
    parser = options.parser("bench", __doc__, epilog=tools.listing())
    parser.add_argument("--quick", action="store_true", help="small sizes, few steps (under a minute)")
    parser.add_argument(
        "--only", choices=(*NETWORKS, derivative_rows.GROUP), help="one network's rows, or the derivatives rows"
    )
    parser.add_argument("--batch", type=int, action="append", help="only this batch size (repeatable)")
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile (it takes a while per shape)")
    parser.add_argument(
        "--no-cuda",
        action="store_true",
        help="no app-cuda rows (by default, on Vulkan on an NVIDIA GPU, the app's rows run on CUDA too)",
    )
    parser.add_argument(
        "--compile-mode",
        choices=COMPILE_MODES,
        default="auto",
        help="torch.compile's mode for the compiled PyTorch rows (default auto: autotuning only where it pays)",
    )
    args = parser.parse_args(argv)
    os.environ["VISUAL_TRAINER_BENCH_DEVICE"] = args.device  # the start-up children's device
    report = run_benchmarks(args)
    print(f"device: {report['device']['type']} {report['device']['adapter']}, tensor cores: {report['tensor_cores']}")
    for key, value in report["extras"].items():
        print(f"{key}: {value:.4g}")
    options.write_json(args.json, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
