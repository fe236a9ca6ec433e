"""An image target's evaluation: the learned image at the image's own resolution and its PSNR against
the image (outputs clamped to [0, 1]), whole or in ranges over frames as the grid's evaluation
(evaluation.py), with the PSNR of the run's passes for the plot; `render` evaluates it at K times the
image's resolution (--export-image)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import slangpy as spy

from ..errors import first_line
from ..gpu.gpu import HostCopy
from ..train.trainer import Trainer
from ..truth import image_truth

MAX_DISPATCH_CELLS = 1 << 21  # 32,768 workgroups of 64


@dataclass
class PsnrHistory:
    steps: list[int] = field(default_factory=list)
    values: list[float] = field(default_factory=list)

    def add(self, step: int, value: float) -> None:
        if self.steps and self.steps[-1] == step:
            self.values[-1] = value
            return
        self.steps.append(step)
        self.values.append(value)


class _Pass:
    def __init__(self, trainer: Trainer, cells: int):
        gpu, channels = trainer.gpu, trainer.plan.output_dim
        self.learned = gpu.buffer(cells * channels * 4)
        self.squared_error = gpu.buffer(cells * 4)
        self.step = -1
        self.version = -1


class ImageEvaluator:
    def __init__(self, trainer: Trainer):
        image = trainer.plan.image
        self.trainer, self.width, self.height = trainer, image.width, image.height
        self.kernel = trainer.kernels.evaluate_image
        self.weights = trainer.gpu.buffer(trainer.weights.size)
        self._sets = [_Pass(trainer, self.cells), _Pass(trainer, self.cells)]
        self._writing = 0
        self.progress = 0
        self.passes = 0
        self.psnr = float("nan")  # of the last complete pass
        # ...and its loss: the training loss's measure (the squared error summed over the
        # channels) at every pixel, averaged, the outputs clamped to [0, 1] as the PSNR's
        self.loss = float("nan")
        self.error_top = 1.0  # ...and its largest root-mean-square error of a pixel's channels
        self.history = PsnrHistory()
        self._errors_out = HostCopy(trainer.gpu.device, self.cells * 4)
        with trainer.gpu.submit() as encoder:  # builds the pipeline now, evaluating no pixel
            self._dispatch(encoder, self._sets[0], self.width, self.height, 0, 0)

    @property
    def cells(self) -> int:
        return self.width * self.height

    @property
    def complete(self) -> _Pass:
        return self._sets[1 - self._writing]

    def start_run(self) -> None:
        """A new run (a reset): its own PSNR curve."""
        self.history = PsnrHistory()
        self.progress = 0

    def stale(self) -> bool:
        return self.progress > 0 or self.complete.version != self.trainer.version

    def can_start(self) -> bool:
        return self.progress > 0 or not self.trainer.progress.updating  # as GridEvaluator's

    def _dispatch(self, encoder, target: _Pass, width: int, height: int, first: int, count: int, weights=None) -> None:
        """Pixels [first, first + count), in dispatches of at most MAX_DISPATCH_CELLS (the
        workgroup-count limit of a dispatch is 65,535)."""
        t = self.trainer
        for start in range(first, first + max(count, 1), MAX_DISPATCH_CELLS):
            size = min(MAX_DISPATCH_CELLS, first + count - start)
            self.kernel.dispatch(
                [max(size, 1), 1, 1],
                command_encoder=encoder,
                weights=(weights or self.weights).device_address,
                truthPixels=t.truth_pixels.device_address,
                learned=target.learned.device_address,
                squaredError=target.squared_error.device_address,
                domain=spy.float4(*t.config.domain),
                width=width,
                height=height,
                cellOffset=start,
                cellEnd=start + max(size, 0),
            )
        encoder.global_barrier()

    def record(self, encoder: spy.CommandEncoder, cells: int | None = None) -> bool:
        """Records the next `cells` pixels of the pass (all the rest when None); True when this
        completes it, and the copy of its squared errors to the host is recorded too (take_pass
        reads it once the encoder has run)."""
        t, target = self.trainer, self._sets[self._writing]
        if self.progress == 0:
            encoder.global_barrier()
            encoder.copy_buffer(self.weights, 0, t.weights, 0, t.weights.size)
            encoder.global_barrier()
            target.step, target.version = t.step, t.version
        count = self.cells - self.progress if cells is None else max(1, min(cells, self.cells - self.progress))
        self._dispatch(encoder, target, self.width, self.height, self.progress, count)
        self.progress += count
        if self.progress < self.cells:
            return False
        self.progress, self._writing, self.passes = 0, 1 - self._writing, self.passes + 1
        self._errors_out.record(encoder, self.complete.squared_error, 0, self.cells * 4)
        return True

    def take_pass(self) -> float:
        """The PSNR of the pass just completed (after its encoder has run), added to the history."""
        errors = self._errors_out.read(self.cells)
        channels = self.trainer.plan.output_dim
        self.loss = float(np.sum(errors, dtype=np.float64)) / self.cells
        mean = self.loss / channels
        # bounds each pixel's mean |error| over its channels (the view's error scale)
        self.error_top = max(float(np.sqrt(np.max(errors) / channels)), 1e-6)
        self.psnr = float("inf") if mean == 0 else float(10.0 * np.log10(1.0 / mean))
        self.history.add(self.complete.step, self.psnr)
        return self.psnr

    def drop_pass(self) -> None:
        """The pass just completed is not taken: the one before it is the complete one again."""
        self._writing, self.passes = 1 - self._writing, self.passes - 1

    def evaluate(self) -> float:
        """A whole pass of the current network now; its PSNR."""
        self.progress = 0
        with self.trainer.gpu.submit() as encoder:
            self.record(encoder)
        return self.take_pass()

    def learned(self) -> np.ndarray:
        """The last complete pass's learned image, (H, W, C), row 0 at the top."""
        t = self.trainer
        count = self.cells * t.plan.output_dim
        return t.gpu.read(self.complete.learned, count).reshape(self.height, self.width, t.plan.output_dim)

    def render(self, scale: int = 1) -> np.ndarray:
        """The current network's image at `scale` times the image's resolution, (H, W, C), now."""
        t = self.trainer
        width, height = self.width * scale, self.height * scale
        target = _Pass(t, width * height)
        with t.gpu.submit() as encoder:
            self._dispatch(encoder, target, width, height, 0, width * height, weights=t.weights)
        return t.gpu.read(target.learned, width * height * t.plan.output_dim).reshape(height, width, -1)


def write_png(path: str | Path, values: np.ndarray) -> None:
    """A learned image (H, W, C) as an 8-bit PNG (values clamped to [0, 1]), through SlangPy's
    writer; a failure is an OSError naming the file."""
    pixels = image_truth.to_png_array(values)
    try:
        spy.Bitmap(pixels[:, :, 0] if pixels.shape[2] == 1 else pixels).write(str(path))
    except Exception as error:  # sgl reports a failed write as a RuntimeError
        raise OSError(f"cannot write {str(path)!r}: {first_line(error)}") from None
