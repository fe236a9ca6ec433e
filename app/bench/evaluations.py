"""What an evaluation costs, and where its time goes: the median of `repeats` of an evaluation as a
headless run takes it, the same with the whole maps read back, the grid pass alone on the GPU, an
empty submit and wait, and reading the figures' host copy, each with the process's CPU time meanwhile
(a wait that spins costs as much CPU as wall time). docs/benchmarks.md, 'Evaluations and several GPUs'."""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable

from ..config.config import Config, validate
from ..gpu.device import describe
from ..gpu.gpu import Gpu, create_gpu
from ..loop.session import Session
from . import options

PASSES_PER_SUBMIT = 50  # the GPU-only row: enough passes that one submit's wait is lost in them


def _timed(work: Callable[[], object], repeats: int, per: int = 1) -> dict:
    """The median wall ms of `work` (over `per` units of work each), and the CPU ms per wall ms."""
    walls, cpu_start, wall_start = [], time.process_time(), time.perf_counter()
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        walls.append(time.perf_counter() - start)
    cpu, wall = time.process_time() - cpu_start, time.perf_counter() - wall_start
    return {"ms": 1000 * statistics.median(walls) / per, "cpu_per_wall": cpu / wall}


def measure(gpu: Gpu, config: Config, grid: int, repeats: int) -> dict:
    session = Session(gpu, config, grid=grid)
    session.trainer.train(10)
    evaluator = session.evaluator

    def passes() -> None:
        with gpu.submit() as encoder:
            for _ in range(PASSES_PER_SUBMIT):
                evaluator.progress = 0
                evaluator.record(encoder)

    def empty() -> None:
        with gpu.submit():
            pass

    rows = {
        "figures": session.evaluate,
        "whole_maps": evaluator.evaluate,
        "submit_wait": empty,
        "read_figures": evaluator.read_summary,
    }
    for work in rows.values():  # pipelines, caches and pools warm
        work()
    figures = {name: _timed(work, repeats) for name, work in rows.items()}
    passes()
    figures["gpu_pass"] = _timed(passes, max(3, repeats // PASSES_PER_SUBMIT), PASSES_PER_SUBMIT)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = options.parser("bench.evaluations", __doc__)
    parser.add_argument("--hidden", default="64,64,64", help="hidden layer widths (default 64,64,64)")
    parser.add_argument("--precision", default="half", choices=("float", "half"))
    parser.add_argument("--batch-size", type=int, default=65536)
    parser.add_argument("--grid", type=int, default=64, help="the evaluation grid's side (default 64)")
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--gpu", help="the GPU, as the app's --gpu takes it (an index or a UUID)")
    args = parser.parse_args(argv)
    hidden = [int(width) for width in args.hidden.split(",")]
    config = validate(Config(hidden=hidden, precision=args.precision, batch_size=args.batch_size))
    gpu = create_gpu(args.device, gpu=args.gpu)
    print(f"device: {describe(gpu.device)['adapter']}", file=sys.stderr)
    figures = measure(gpu, config, args.grid, args.repeats)
    shape = "-".join(map(str, gpu.plan(config).sizes))
    print(f"{shape} {args.precision}, {args.grid}x{args.grid} grid: median ms (CPU time / wall time)")
    for name, row in figures.items():
        print(f"  {name:<12} {row['ms']:8.3f} ms  ({row['cpu_per_wall']:.2f})")
    options.write_json(args.json, {"network": shape, "precision": args.precision, "grid": args.grid, **figures})
    return 0


if __name__ == "__main__":
    sys.exit(main())
