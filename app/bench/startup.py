"""Start-up costs, each timed in a child process so that imports, device creation and shader
compilation all count: the first trained step, an architecture rebuild, the first window frame."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time


def _child(mode: str) -> None:
    from app.config import Config
    from app.gpu import create_gpu
    from app.trainer import Trainer

    gpu = create_gpu(os.environ.get("VISUAL_TRAINER_BENCH_DEVICE", "auto"))
    Trainer(gpu, Config()).train(1)
    print(f"FIRST_STEP {time.time():.6f}", flush=True)
    if mode == "rebuild":  # a second architecture, built and stepped once: what "Apply" waits for
        start = time.perf_counter()
        Trainer(gpu, Config(hidden=[24, 12])).train(1)
        print(f"REBUILD {time.perf_counter() - start:.6f}", flush=True)


def _run_child(cache_dir: str, mode: str) -> dict[str, float]:
    env = dict(os.environ, XDG_CACHE_HOME=cache_dir)
    start = time.time()
    result = subprocess.run([sys.executable, "-m", "app.bench.startup", mode], env=env, capture_output=True,
                            text=True, check=True)
    stamps = dict(line.split() for line in result.stdout.splitlines() if line.startswith(("FIRST_STEP", "REBUILD")))
    times = {"first_step": float(stamps["FIRST_STEP"]) - start}
    if "REBUILD" in stamps:
        times["rebuild"] = float(stamps["REBUILD"])
    return times


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
    """First trained step, an architecture rebuild and the first window frame, each with empty
    shader caches, then again with the caches the first run left."""
    results = {}
    with tempfile.TemporaryDirectory() as cache:
        for label in ("cold", "warm"):
            times = _run_child(cache, "rebuild")
            results[f"first_step_seconds_{label}"] = times["first_step"]
            results[f"rebuild_seconds_{label}_cache"] = times["rebuild"]
    with tempfile.TemporaryDirectory() as cache:
        for label in ("cold", "warm"):
            seconds = time_to_first_window_frame(cache)
            if seconds is not None:
                results[f"first_window_frame_seconds_{label}"] = seconds
                os.remove(os.path.join(cache, "first-frame.png"))
    return results


if __name__ == "__main__":
    _child(sys.argv[1] if len(sys.argv) > 1 else "first-step")
