"""Time from process start to the first trained step, run as a child process so that
imports, device creation and shader compilation are all counted."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time


def _child() -> None:
    from app.config import Config
    from app.device import create_device
    from app.trainer import Trainer

    Trainer(create_device(), Config()).train(1)
    print(f"FIRST_STEP {time.time():.6f}", flush=True)


def time_to_first_step(cache_dir: str) -> float:
    env = dict(os.environ, XDG_CACHE_HOME=cache_dir)
    start = time.time()
    result = subprocess.run([sys.executable, "-m", "app.bench.startup"], env=env, capture_output=True, text=True, check=True)
    stamp = next(line for line in result.stdout.splitlines() if line.startswith("FIRST_STEP"))
    return float(stamp.split()[1]) - start


def cold_and_warm() -> tuple[float, float]:
    """(cold, warm): first with an empty shader cache, then again with the cache it left."""
    with tempfile.TemporaryDirectory() as cache:
        return time_to_first_step(cache), time_to_first_step(cache)


if __name__ == "__main__":
    _child()
