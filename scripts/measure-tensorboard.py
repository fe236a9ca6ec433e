"""What --tensorboard costs a headless run, in process: an evaluation alone (Session.evaluate), the
event of its figures (RunEvents.evaluation without images), and the images written every K-th
evaluation (drawn, read back, encoded), each the median of repeated calls on one session.
Run from a checkout: .venv/bin/python scripts/measure-tensorboard.py [--hidden 64,64,64 ...]."""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.config.config import Config, validate
from app.files.tensorboard_events import RunEvents, TensorboardOptions
from app.files.tensorboard_images import images, png_bytes
from app.gpu.gpu import create_gpu
from app.loop.session import Session


def _median_ms(call, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", default="16", help="hidden widths, as the app's --hidden (default 16)")
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()
    gpu = create_gpu(args.device)
    session = Session(gpu, validate(Config(hidden=[int(w) for w in args.hidden.split(",")])), heatmaps=True)
    session.advance(100)
    session.evaluate()
    with tempfile.TemporaryDirectory() as folder:
        events = RunEvents(TensorboardOptions(folder, image_every=0), session)

        def figures() -> None:
            session.trainer.step += 1  # a step of its own for each event (the writer writes one a step)
            events.evaluation(session, 1.0)

        evaluation = _median_ms(session.evaluate, args.repeats)
        written = _median_ms(figures, args.repeats)
        drawn = _median_ms(lambda: images(session), max(5, args.repeats // 5))
        encoded = _median_ms(lambda: [png_bytes(pixels) for _, pixels in images(session)], max(5, args.repeats // 5))
        session.trainer.step -= args.repeats
        events.close(session, "complete")
    print(f"device: {gpu.device.info.adapter_name}, hidden {args.hidden}, eval grid {session.grid}")
    print(f"an evaluation: {evaluation:.3f} ms")
    print(f"its figures' event: {written:.3f} ms")
    print(f"its images drawn and read: {drawn:.2f} ms; with their PNGs: {encoded:.2f} ms")
    print(f"per evaluation at the default K = 10: {written + encoded / 10:.3f} ms")


if __name__ == "__main__":
    main()
