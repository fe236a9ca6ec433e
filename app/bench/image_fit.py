"""Time to fit an image: trains the hash-grid task of hashgrid_task.py (a procedural photo-like
landscape of about a megapixel, or your --image) and prints the PSNR of the learned image against the
training clock, which counts training alone, and when it first reached --target dB (read every
FINE_SECONDS until then: headless chunks made it a multiple of a quarter second)."""

from __future__ import annotations

import sys
import time

from ..config.config import Config, validate
from ..gpu.device import describe
from ..gpu.gpu import create_gpu
from ..loop.session import Session
from ..truth import image_truth
from . import hashgrid_task, options

FINE_SECONDS = 0.01
# Steps trained, then thrown away (fresh weights), before the clock starts: a network's first steps
# in a process run slower than the rest, and that is start-up, which the `startup` tool measures.
WARMUP_STEPS = 50


def _config(args) -> Config:
    fields = hashgrid_task.app_fields(args.size, args.log2_size)
    if args.image:
        info, _ = image_truth.load(args.image)
        fields |= {"image": info, "domain": image_truth.aspect_domain(info["width"], info["height"])}
    optimizer = dict(lr=args.lr, beta2=args.beta2) if args.beta2 is not None else dict(lr=args.lr)
    return validate(Config(**fields, batch_size=args.batch, precision=args.precision, **optimizer, seed=args.seed))


def run(args) -> dict:
    return fit(create_gpu(args.device), _config(args), args.seconds, args.target, args.every)


def fit(gpu, config: Config, seconds: float, target: float, every: float, quiet: bool = False) -> dict:
    """Trains `config` on `gpu` for `seconds` of training clock, its PSNR every `every` seconds."""
    session = Session(gpu, config)
    session.eval_every = 1 << 30
    start = time.perf_counter()
    session.advance(WARMUP_STEPS)
    warmup_rate = WARMUP_STEPS / (time.perf_counter() - start)  # steps a second, low: it has the slow first steps
    session.reset()
    image = session.image
    points, clock, reached = [], 0.0, None
    next_eval = FINE_SECONDS
    while clock < seconds:
        # No further than the next evaluation, at the rate so far (the first chunk too: at the
        # session's own chunk size the first reading came a quarter second late).
        rate = session.trainer.step / clock if clock > 0 else warmup_rate
        steps = max(1, min(session.chunk_size(1 << 62), int((next_eval - clock) * rate)))
        start = time.perf_counter()
        session.advance(steps)
        clock += time.perf_counter() - start  # advance() waits for its last command buffer
        if clock >= next_eval or clock >= seconds:
            psnr = image.evaluate()
            points.append({"seconds": clock, "steps": session.trainer.step, "psnr": psnr})
            if not quiet:
                print(f"{clock:7.2f} s  step {session.trainer.step:>7}  PSNR {psnr:6.2f} dB", flush=True)
            if reached is None and psnr >= target:
                reached = clock
            next_eval = clock + (every if reached is not None else FINE_SECONDS)
    plan = session.trainer.plan
    return {
        "device": describe(gpu.device),
        "image": [image.width, image.height],
        "network": plan.title,
        "matmul": plan.matmul,
        "gradient_path": plan.gradient_path,
        "batch_size": config.batch_size,
        "precision": config.precision,
        "steps": session.trainer.step,
        "seconds": clock,
        "samples_per_second": session.trainer.samples_seen / clock if clock else None,
        "seconds_to_target": reached,
        "target_db": target,
        "points": points,
    }


def main(argv=None) -> int:
    parser = options.parser("bench.image_fit", __doc__)
    parser.add_argument("--seconds", type=float, default=10.0, help="training time (default 10)")
    parser.add_argument("--target", type=float, default=30.0, help="the PSNR to reach, in dB (default 30)")
    parser.add_argument("--every", type=float, default=0.5, help="training seconds between PSNR evaluations")
    parser.add_argument("--batch", type=int, default=1 << 18, help="samples a step (default 262144)")
    parser.add_argument("--precision", choices=("float", "half"), default="half")
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument(
        "--beta2", type=float, help="Adam's beta2 (default: the app's, 0.999; tiny-cuda-nn's image config: 0.99)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--size", type=int, default=hashgrid_task.PHOTO_SIZE, help="the procedural photo's side")
    parser.add_argument("--image", help="fit this PNG or JPEG instead of the procedural photo")
    parser.add_argument(
        "--log2-size",
        type=int,
        default=hashgrid_task.GRID.log2_size,
        help="log2 of a level's table entries (default 19)",
    )
    args = parser.parse_args(argv)
    result = run(args)
    reached = result["seconds_to_target"]
    print(
        f"{result['image'][0]}x{result['image'][1]}, {result['network']}, {result['precision']}, batch "
        f"{result['batch_size']}, {result['samples_per_second']:.3g} samples/s: "
        + (f"{args.target:g} dB after {reached:.2f} s" if reached is not None else f"{args.target:g} dB not reached")
        + f"; device {result['device']['adapter']}"
    )
    options.write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
