"""The training and test sets' loss and accuracy, for plans that train on a dataset's points:
evaluatePoints (shaders/points.slang) sums each group of 256 points in a fixed order on the GPU,
the host adds the groups in float64. Part of each grid evaluation pass (app/views/evaluation.py), after
its cells, in whole groups, so that it too may be split over frames."""

from __future__ import annotations

import math

import numpy as np
import slangpy as spy

from ..train.point_data import PointData
from ..train.trainer import Trainer

POINT_GROUP = 256  # shaders/points.slang's POINT_GROUP
# A group's cost in the frame budget's grid cells: a cell evaluates the network three times
# (values and two derivatives) besides the truth; a group, 256 times.
GROUP_UNITS = 64
METRICS = ("train_loss", "test_loss", "train_accuracy", "test_accuracy")


def groups(data: PointData | None) -> int:
    return -(-data.dataset.count // POINT_GROUP) if data is not None else 0


class PointSums:
    """One evaluation pass's group sums (one of the evaluator's two buffer sets)."""

    def __init__(self, trainer: Trainer):
        self.data = trainer.data
        self.buffer = trainer.gpu.buffer(max(groups(self.data), 1) * 16)

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
        )
        encoder.global_barrier()

    def metrics(self, sums: np.ndarray, classify: bool) -> dict[str, float | None]:
        """The four figures from the groups' sums, (groups, 4) float32."""
        total = np.sum(sums.astype(np.float64), axis=0)
        dataset = self.data.dataset
        train, test = dataset.train_count, dataset.test_count
        return {
            "train_loss": float(total[0] / train),
            "test_loss": float(total[2] / test),
            "train_accuracy": float(total[1] / train) if classify else None,
            "test_accuracy": float(total[3] / test) if classify else None,
        }


def finite_or_none(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None
