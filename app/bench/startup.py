"""Start-up costs, each timed in a child process so that imports, device creation and shader
compilation all count: the first trained step (broken down by stage), an architecture rebuild,
and the first window frame."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

from ..resources import module_command
from . import tools

STAGES = ("imports", "device", "compile", "first_step")


def _child(mode: str) -> None:
    """Prints a wall-clock stamp after each stage; the parent knows when the process started.
    It starts as the app does (app/__main__.py), without PyTorch."""
    from ..entry.fast_start import skip_torch

    skip_torch()
    from ..config.config import Config
    from ..gpu.gpu import create_gpu
    from ..train.trainer import Trainer

    print(f"imports {time.time():.6f}", flush=True)
    gpu = create_gpu(os.environ.get("VISUAL_TRAINER_BENCH_DEVICE", "auto"))
    print(f"device {time.time():.6f}", flush=True)
    gpu.kernels.get(gpu.plan(Config()))  # Slang: load (or the module cache), link
    print(f"compile {time.time():.6f}", flush=True)
    Trainer(gpu, Config()).train(1)  # the driver's pipelines, buffers, one step
    print(f"first_step {time.time():.6f}", flush=True)
    if mode == "rebuild":  # a second architecture, built and stepped once: what "Apply" waits for
        start = time.perf_counter()
        Trainer(gpu, Config(hidden=[24, 12])).train(1)
        print(f"rebuild {time.perf_counter() - start:.6f}", flush=True)


def _cache_env(cache_dir: str) -> dict[str, str]:
    """The environment of a run whose caches are all under `cache_dir` (cold where it is new):
    Mesa's shader cache is under XDG_CACHE_HOME unless MESA_SHADER_CACHE_DIR moves it elsewhere,
    SlangPy's unless VISUAL_TRAINER_KERNEL_CACHE does."""
    from ..gpu.device import KERNEL_CACHE

    env = dict(os.environ, XDG_CACHE_HOME=cache_dir, MESA_SHADER_CACHE_DIR=os.path.join(cache_dir, "mesa_shader_cache"))
    env.pop(KERNEL_CACHE, None)
    return env


def _run_child(cache_dir: str, mode: str) -> dict[str, float]:
    env = _cache_env(cache_dir)
    start = time.time()
    result = subprocess.run(
        [sys.executable, *module_command("bench.startup"), mode], env=env, capture_output=True, text=True, check=True
    )
    stamps = dict(line.split() for line in result.stdout.splitlines() if line.split()[0] in (*STAGES, "rebuild"))
    times, previous = {}, start
    for stage in STAGES:  # seconds each stage took, and the total to the first step
        times[stage] = float(stamps[stage]) - previous
        previous = float(stamps[stage])
    times["first_step_total"] = previous - start
    if "rebuild" in stamps:
        times["rebuild"] = float(stamps["rebuild"])
    return times


def time_to_first_window_frame(cache_dir: str) -> float | None:
    """Seconds from process start until the window has drawn its first frame (it saves that
    frame as a PNG), or None without a display."""
    if not os.environ.get("DISPLAY"):
        return None
    env = _cache_env(cache_dir)
    shot = os.path.join(cache_dir, "first-frame.png")
    start = time.time()
    process = subprocess.Popen(
        [sys.executable, *module_command(""), "--fresh", "--screenshot-after", "0", "--screenshot", shot],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while not os.path.exists(shot) and process.poll() is None and time.time() - start < 120:
            time.sleep(0.01)
        return time.time() - start if os.path.exists(shot) else None
    finally:
        process.terminate()
        process.wait(timeout=30)


def cold_and_warm() -> dict[str, float]:
    """First trained step (by stage), an architecture rebuild and the first window frame, each
    with empty shader caches, then again with the caches the first run left."""
    results = {}
    with tempfile.TemporaryDirectory() as cache:
        for label in ("cold", "warm"):
            for name, seconds in _run_child(cache, "rebuild").items():
                results[f"startup_{label}_{name}_seconds"] = seconds
    with tempfile.TemporaryDirectory() as cache:
        for label in ("cold", "warm"):
            seconds = time_to_first_window_frame(cache)
            if seconds is not None:
                results[f"first_window_frame_seconds_{label}"] = seconds
                os.remove(os.path.join(cache, "first-frame.png"))
    return results


def main(argv=None) -> int:
    """The report: cold and warm start-up, each stage in seconds (`visual-trainer-bench startup`)."""
    argparse.ArgumentParser(prog=tools.prog("bench.startup"), description=__doc__.split("\n\n")[0]).parse_args(argv)
    for key, value in cold_and_warm().items():
        print(f"{key}: {value:.3f}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "report":
        sys.exit(main([]))
    else:
        _child(sys.argv[1] if len(sys.argv) > 1 else "first-step")
