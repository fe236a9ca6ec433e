"""Rebuilding the network for a structural change without freezing the UI.

The costly part of a new architecture is compilation: Slang's (~0.1 s), then the driver's, at
each kernel's first dispatch. On an H200 that is ~0.4 s in all; on lavapipe learnGradient alone
takes 0.6 s for 4-24-12-4 and 7 s for 2-64-64-64-4. So:
- the build runs in stages, one per frame, each triggering one part of the compile, so the
  window keeps drawing and shows progress;
- on a software driver, a child process (this module run with -m) first compiles everything
  into the on-disk caches that SlangPy and the driver keep, so that the in-process stages are
  quick. Only there: on an H200, a second process using the GPU hung the window's queue."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Optional

import slangpy as spy

from app import kernels
from app.config import Config
from app.heatmaps import HeatmapImages
from app.trainer import Trainer

REPO_ROOT = Path(__file__).resolve().parents[2]


class Rebuild:
    def __init__(self, device: spy.Device, config: Config, grid: int):
        self.device, self.config, self.grid = device, config, grid
        self.started = time.perf_counter()
        self.trainer: Optional[Trainer] = None
        self.error: Optional[Exception] = None
        self.process: Optional[subprocess.Popen] = None
        self._stages: list[tuple[str, Callable[[], bool]]] = [
            ("compiling Slang", lambda: bool(kernels.kernels_for(device, config))),
            ("building training pipelines", self._first_steps),
            ("building evaluation pipeline", lambda: bool(self.trainer.evaluate(grid))),
            ("building heatmap pipelines", self._first_heatmaps),
        ]
        if device.has_feature(spy.Feature.software_device) and not kernels.is_cached(device, config):
            self.process = subprocess.Popen(
                [sys.executable, "-m", "app.ui.rebuild", json.dumps(config.to_dict()), device.info.type.name, str(grid)],
                cwd=REPO_ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self._stages.insert(0, ("compiling shaders", lambda: self.process.poll() is not None))
        self._done = 0

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.started

    @property
    def fraction(self) -> float:
        return self._done / len(self._stages)

    @property
    def label(self) -> str:
        return self._stages[min(self._done, len(self._stages) - 1)][0]

    def _first_steps(self) -> bool:
        self.trainer = Trainer(self.device, self.config)
        self.trainer.train(1)
        return True

    def _first_heatmaps(self) -> bool:
        images = HeatmapImages(self.trainer, self.grid)  # kept alive until the GPU is done:
        encoder = self.device.create_command_encoder()    # kernels reach its buffers by pointer
        images.record(encoder)
        self.device.submit_command_buffer(encoder.finish())
        self.device.wait()
        return True

    def ready(self) -> bool:
        """Advances by one stage (call once a frame); True once all are done or one failed."""
        if self.error is None and self._done < len(self._stages):
            try:
                if self._stages[self._done][1]():
                    self._done += 1
            except Exception as error:  # reported by finish(); the old network keeps training
                self.error = error
        return self.error is not None or self._done == len(self._stages)

    def finish(self) -> Trainer:
        """The new trainer, at step 0 with fresh weights (the warm-up step is undone)."""
        if self.error is not None:
            raise self.error
        self.trainer.reset()
        return self.trainer

    def cancel(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait()


def _warm(config_json: str, device_kind: str, grid: int) -> None:
    """Child process: compile and run every kernel once, filling the on-disk caches."""
    from app.config import from_dict
    from app.device import create_device

    device = create_device(device_kind)
    trainer = Trainer(device, from_dict(json.loads(config_json)))
    images = HeatmapImages(trainer, grid)
    encoder = device.create_command_encoder()
    trainer.record_steps(encoder, 1)
    images.record(encoder)
    device.submit_command_buffer(encoder.finish())
    device.wait()


if __name__ == "__main__":
    _warm(sys.argv[1], sys.argv[2].lower(), int(sys.argv[3]))
