"""A dataset on the GPU for a trainer whose plan trains on points: one buffer of rows
(x, y, truth), training points first, which the generated drawSample reads
(app/kernels/shadergen/truth.py), and the per-step fields of StepArgs that say where in its epochs a
step's samples start.

Batches: each step takes the next `batch` positions of an endless sequence of epochs, each
epoch a seeded permutation of the training points (shaders/truth/sampling.slang's shuffledIndex):
sample i of a step is at position p + i, where p counts the samples drawn from these points so
far. Against drawing each index by a hash (with replacement), every point is seen once an
epoch, as the Playground's steps see every training point; both are stateless, so a step's
batch depends only on (seed, p, i), never on the launch shape, and runs stay bit-identical. A
batch at least as large as the training set is the whole set, once (full batch)."""

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
