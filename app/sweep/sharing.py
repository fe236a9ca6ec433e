"""Whether trials that share a GPU (--trials-per-gpu K above 1) run side by side on it: only CUDA
programs under NVIDIA's MPS daemon do. Elsewhere the GPU takes the processes' work in turns, and
on 4 H100s each of three small trials a GPU trained at 0.3 to 0.6 of its speed alone, against
0.88 to 0.94 on CUDA under MPS (docs/benchmarks.md, "Several trials on one GPU"). A sweep that would share
GPUs without MPS says so once, at its start."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

MPS_PIPE_DEFAULT = "/tmp/nvidia-mps"  # where MPS clients look for the daemon, unless told otherwise


def mps_running(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether an MPS control daemon answers where this process's CUDA programs would look."""
    return (Path(environ.get("CUDA_MPS_PIPE_DIRECTORY") or MPS_PIPE_DEFAULT) / "control").exists()


def sharing_note(trials_per_gpu: int, gpus: float, device: str, mps: bool) -> str | None:
    """The line a sweep prints where its trials would share GPUs in turns; None where they do not
    share one, or run side by side."""
    if trials_per_gpu <= 1 or gpus <= 0:
        return None
    start = "nvidia-cuda-mps-control -d"
    if device != "cuda":
        return (
            f"note: with --device {device}, the {trials_per_gpu} trials on each GPU take turns on it; "
            f"--device cuda with NVIDIA's MPS daemon running ({start}) runs them side by side"
        )
    if not mps:
        return (
            f"note: no MPS daemon answers, so the {trials_per_gpu} CUDA trials on each GPU take turns on it; "
            f"start one ({start}) to run them side by side"
        )
    return None
