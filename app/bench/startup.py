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

    Trainer(create_device(os.environ.get("VISUAL_TRAINER_BENCH_DEVICE", "auto")), Config()).train(1)
    print(f"FIRST_STEP {time.time():.6f}", flush=True)


def time_to_first_step(cache_dir: str) -> float:
    env = dict(os.environ, XDG_CACHE_HOME=cache_dir)
    start = time.time()
    result = subprocess.run([sys.executable, "-m", "app.bench.startup"], env=env, capture_output=True, text=True, check=True)
    stamp = next(line for line in result.stdout.splitlines() if line.startswith("FIRST_STEP"))
    return float(stamp.split()[1]) - start


def time_to_first_window_frame(cache_dir: str) -> float | None:
    """Seconds from process start until the window has drawn its first frame (it saves that
    frame as a PNG), or None without a display."""
    if not os.environ.get("DISPLAY"):
        return None
    env = dict(os.environ, XDG_CACHE_HOME=cache_dir)
    shot = os.path.join(cache_dir, "first-frame.png")
    start = time.time()
    process = subprocess.Popen([sys.executable, "-m", "app", "--fresh", "--screenshot-after", "0", "--screenshot", shot],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while not os.path.exists(shot) and process.poll() is None and time.time() - start < 120:
            time.sleep(0.01)
        return time.time() - start if os.path.exists(shot) else None
    finally:
        process.terminate()
        process.wait(timeout=30)


def cold_and_warm() -> dict[str, float]:
    """First trained step and first window frame, with an empty shader cache, then again with
    the cache the first run left."""
    results = {}
    with tempfile.TemporaryDirectory() as cache:
        results["first_step_seconds_cold"] = time_to_first_step(cache)
        results["first_step_seconds_warm"] = time_to_first_step(cache)
    with tempfile.TemporaryDirectory() as cache:
        for label in ("cold", "warm"):
            seconds = time_to_first_window_frame(cache)
            if seconds is not None:
                results[f"first_window_frame_seconds_{label}"] = seconds
                os.remove(os.path.join(cache, "first-frame.png"))
    return results


if __name__ == "__main__":
    _child()
