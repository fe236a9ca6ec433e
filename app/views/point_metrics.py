"""The training and test sets' loss and accuracy, for plans that train on a dataset's points, and for
two or more value columns each column's test loss (which sum to the test loss). The GPU sums each
group of 256 points in a fixed order and the host adds the groups in float64; part of each grid
evaluation pass, after its cells, in whole groups, so that it too may be split over frames."""

from __future__ import annotations

import math

import numpy as np
import slangpy as spy

from ..train.point_data import PointData
from ..train.trainer import Trainer

POINT_GROUP = 256  # shaders/views/points.slang's POINT_GROUP
# A group's cost in the frame budget's grid cells: a cell evaluates the network three times
# (values and two derivatives) besides the truth; a group, 256 times.
GROUP_UNITS = 64
METRICS = ("train_loss", "test_loss", "train_accuracy", "test_accuracy")
OUTPUT_TEST_LOSS = "test_loss[{}]"  # a value column's test loss, by the column's name


def groups(data: PointData | None) -> int:
    return -(-data.dataset.count // POINT_GROUP) if data is not None else 0


def output_test_losses(names) -> list[str]:
    """The metrics' names of each value column's test loss: test_loss[height], ... (none for one
    column, whose test loss is the test loss)."""
    return [OUTPUT_TEST_LOSS.format(name) for name in names] if len(names) > 1 else []


def is_output_test_loss(name: str) -> bool:
    return name.startswith(OUTPUT_TEST_LOSS.split("{")[0]) and name.endswith("]")


class PointSums:
    """One evaluation pass's group sums (one of the evaluator's two buffer sets): a float4 a
    group (training loss, training points right, test loss, test points right), then a float
    per group and output (the output's squared error over the group's test points)."""

    def __init__(self, trainer: Trainer):
        self.data = trainer.data
        self.outputs = trainer.plan.output_dim
        self.buffer = trainer.gpu.buffer(self.floats * 4)

    @property
    def floats(self) -> int:
        """The sums a pass leaves, in floats."""
        return groups(self.data) * (4 + self.outputs)

    def dispatch(self, encoder: spy.CommandEncoder, trainer: Trainer, weights: spy.Buffer, first: int, end: int):
        """Records groups [first, end) of the pass."""
        if end <= first:
            return
        trainer.kernels.points.evaluate_points.dispatch(
            [(end - first) * POINT_GROUP, 1, 1],
            command_encoder=encoder,
            weights=weights.device_address,
            points=self.data.buffer.device_address,
            pointCount=self.data.dataset.count,
            trainCount=self.data.train_count,
            groupOffset=first,
            groupSums=self.buffer.device_address,
            outputSums=self.buffer.device_address + 16 * groups(self.data),
            domain=spy.float4(*trainer.config.domain),
        )
        encoder.global_barrier()

    def metrics(self, sums: np.ndarray, classify: bool) -> dict[str, float | None]:
        """The four figures, and each value column's test loss, from the `floats` sums a pass
        left (float32), each added over the groups in float64 in the groups' order."""
        count = groups(self.data)
        total = np.sum(sums[: 4 * count].reshape(count, 4).astype(np.float64), axis=0)
        dataset = self.data.dataset
        train, test = dataset.train_count, dataset.test_count
        metrics = {
            "train_loss": float(total[0] / train),
            "test_loss": float(total[2] / test),
            "train_accuracy": float(total[1] / train) if classify else None,
            "test_accuracy": float(total[3] / test) if classify else None,
        }
        if not classify:
            by_output = np.sum(sums[4 * count :].reshape(count, self.outputs).astype(np.float64), axis=0)
            names = output_test_losses(dataset.problem.names)
            metrics.update((name, float(value / test)) for name, value in zip(names, by_output))
        return metrics


def finite_or_none(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None
