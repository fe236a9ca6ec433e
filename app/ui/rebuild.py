"""Rebuilding the network for a structural change without freezing the UI.

Measured on lavapipe: the first dispatch of a new architecture's kernels costs 0.8-2.7 s
(the driver compiles the pipelines), a cached one ~0.15 s. Driver and SlangPy keep those
compiles in on-disk caches, so a child process (this module run with -m) compiles and runs one
step of the new network first; the window keeps drawing meanwhile, and then builds the Trainer
in-process from warm caches. Sharing one device across threads is not safe, hence a process."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

from app import kernels
from app.config import Config
from app.trainer import Trainer

REPO_ROOT = Path(__file__).resolve().parents[2]


class Rebuild:
    def __init__(self, device, device_kind: str, config: Config, grid: int):
        self.device, self.config, self.grid = device, config, grid
        self.started = time.perf_counter()
        self.process: Optional[subprocess.Popen] = None
        if not kernels.is_cached(device, config):
            self.process = subprocess.Popen(
                [sys.executable, "-m", "app.ui.rebuild", json.dumps(config.to_dict()), device_kind, str(grid)],
                cwd=REPO_ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.started

    def ready(self) -> bool:
        return self.process is None or self.process.poll() is not None

    def finish(self) -> Trainer:
        """Builds the Trainer here (fast once the child has warmed the caches). If the child
        failed, building here reports the real error."""
        if self.process is not None:
            self.process.stderr.close()
        trainer = Trainer(self.device, self.config)
        return trainer

    def cancel(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait()


def _warm(config_json: str, device_kind: str, grid: int) -> None:
    from app.config import from_dict
    from app.device import create_device
    from app.heatmaps import HeatmapImages

    device = create_device(device_kind)
    trainer = Trainer(device, from_dict(json.loads(config_json)))
    encoder = device.create_command_encoder()
    trainer.record_steps(encoder, 1)
    HeatmapImages(trainer, grid).record(encoder)
    device.submit_command_buffer(encoder.finish())
    device.wait()


if __name__ == "__main__":
    _warm(sys.argv[1], sys.argv[2], int(sys.argv[3]))
