"""What the soak benchmark (app/bench/soak.py) and its CI test measure: host memory, the GPU's
memory where the driver reports it, frame-time percentiles, and an X display for the real window."""

from __future__ import annotations

import contextlib
import gc
import os
import resource
import shutil
import subprocess
import time
from collections.abc import Iterator

import numpy as np


def rss_bytes() -> int:
    """Resident set size now (Linux: /proc), else the peak so far; after a garbage collection,
    so that Python garbage waiting for a cycle collection is not counted."""
    gc.collect()
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def gpu_used_bytes() -> int | None:
    """The GPU's memory in use as NVIDIA's driver reports it (the whole device: run the soak
    alone on it), or None where there is no nvidia-smi (lavapipe keeps device memory in host
    memory, so RSS covers it there)."""
    tool = shutil.which("nvidia-smi")
    if tool is None:
        return None
    try:
        out = subprocess.run(
            [tool, "--query-gpu=memory.used", "--format=csv,noheader,nounits", "--id=0"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
        return int(float(out.strip().splitlines()[0]) * 2**20)
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


def percentiles(seconds: list[float] | np.ndarray) -> dict:
    """p50 and p99 of frame times, in milliseconds."""
    values = np.asarray(seconds, np.float64) * 1000
    if values.size == 0:
        return {"p50_ms": None, "p99_ms": None, "frames": 0}
    return {
        "p50_ms": float(np.percentile(values, 50)),
        "p99_ms": float(np.percentile(values, 99)),
        "frames": int(values.size),
    }


class Samples:
    """Host RSS (and GPU memory) over a run, every `every` units of progress."""

    def __init__(self, every: int):
        self.every, self.rows, self._next = max(1, every), [], 0

    def take(self, progress: int, force: bool = False) -> None:
        if force or progress >= self._next:
            self.rows.append({"at": progress, "rss": rss_bytes(), "gpu": gpu_used_bytes()})
            self._next = progress + self.every


@contextlib.contextmanager
def x_display() -> Iterator[str]:
    """An Xvfb for the block, as $DISPLAY (a real window needs a display). Run the window in a
    child process: one that outlives its X server is ended by Xlib."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        raise RuntimeError("no DISPLAY and no Xvfb (apt-get install xvfb)")
    name = f":{70 + os.getpid() % 20}"
    server = subprocess.Popen(
        [xvfb, name, "-screen", "0", "1920x1080x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        socket = f"/tmp/.X11-unix/X{name[1:]}"
        deadline = time.monotonic() + 10
        while not os.path.exists(socket) and time.monotonic() < deadline:
            time.sleep(0.05)
        os.environ["DISPLAY"] = name
        yield name
    finally:
        os.environ.pop("DISPLAY", None)
        server.terminate()
        server.wait(timeout=10)
