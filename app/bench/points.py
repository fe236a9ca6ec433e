"""Point datasets at scale: what a dataset of N points costs the trainer and the window (the spiral,
7-8-8-1 tanh, batch 250; the best of three): new points, a training step, an evaluation pass, and
drawing the points layer with the view under it and without. docs/benchmarks.md, 'Points at scale'."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from ..config.config import Config, validate
from ..gpu.device import describe
from ..gpu.gpu import Gpu, create_gpu
from ..loop.session import Session
from . import options

SPIRAL = dict(
    dataset={"generator": "spiral"},
    encoding="features",
    features=["x", "y", "x2", "y2", "xy", "sinx", "siny"],
    hidden=[8, 8],
    activation="tanh",
    domain=[-6.0, 6.0, -6.0, 6.0],
    batch_size=250,
    lr=0.03,
)


def _best(work: Callable[[], object], repeats: int = 3, per: int = 1) -> float:
    """The best of `repeats` timings of `work`, in ms, divided by `per`."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return 1000 * best / per


def measure(gpu: Gpu, points: int) -> dict:
    session = Session(gpu, validate(Config(**SPIRAL, points=points)), grid=64, heatmaps=True)
    view = session.heatmaps.data_view

    def draw(layer: bool) -> None:
        if layer:
            view._drawn_layer = None
        with gpu.submit() as encoder:
            view.record_draw(encoder)

    def new_points() -> None:
        session.apply(session.config.replace(data_seed=session.config.data_seed + 1))

    return {
        "points": points,
        "new_points_ms": _best(new_points),
        "step_ms": _best(lambda: session.advance(20), per=20),
        "evaluation_pass_ms": _best(session.evaluator.evaluate),
        "points_and_view_ms": _best(lambda: draw(True)),
        "view_ms": _best(lambda: draw(False)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = options.parser("bench.points", __doc__)
    parser.add_argument("--points", default="500,100000,1000000", help="comma-separated counts (default %(default)s)")
    args = parser.parse_args(argv)
    counts = [int(text) for text in args.points.split(",")]
    gpu = create_gpu(args.device)
    rows = []
    for count in counts:
        row = measure(gpu, count)
        rows.append(row)
        print(
            "  ".join(f"{key} {value:,.3g}" if key != "points" else f"{value:>9,} points" for key, value in row.items())
        )
    options.write_json(args.json, {"device": describe(gpu.device), "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
