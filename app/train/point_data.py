"""A dataset on the GPU for a trainer whose plan trains on points: one buffer of rows (x, y, truth),
training points first, which the generated drawSample reads, and the StepArgs fields that say where
in its epochs a step's samples start: each epoch a seeded permutation of the training points, so a
batch depends only on (seed, position, i) (docs/architecture.md, 'Determinism and sampling')."""

from __future__ import annotations

import numpy as np

from .. import datasets
from ..config.config import Config
from ..datasets import Dataset
from ..gpu.gpu import Gpu


def data_key(config: Config) -> tuple:
    """What makes the points: a change of it makes new points (and starts their epochs afresh)."""
    return repr(config.dataset), config.data_settings


class PointData:
    def __init__(self, gpu: Gpu, dataset: Dataset, key: tuple = ()):
        self.dataset, self.key = dataset, key
        rows = dataset.rows()
        self.buffer = gpu.buffer(rows.nbytes)
        gpu.write(self.buffer, rows)

    @classmethod
    def of(cls, gpu: Gpu, config: Config) -> PointData:
        """The points `config` describes (a UserError for a CSV that changed or went away)."""
        return cls(gpu, datasets.build(config.dataset, config.data_settings), data_key(config))

    @property
    def train_count(self) -> int:
        return self.dataset.train_count

    def batch(self, batch_size: int) -> int:
        """Samples a step takes: the batch size, or the whole training set when that is smaller."""
        return min(batch_size, self.train_count)

    def fill(self, records: np.ndarray, first: int, stride: int) -> None:
        """StepArgs' data fields of records whose first samples are at positions first,
        first + stride, ... of the epochs."""
        positions = first + np.arange(len(records), dtype=np.int64) * stride
        records["points"] = self.buffer.device_address
        records["train_count"] = self.train_count
        records["data_epoch"] = (positions // self.train_count) % (1 << 32)
        records["data_offset"] = positions % self.train_count

    def epochs(self, position: int) -> float:
        return position / self.train_count
