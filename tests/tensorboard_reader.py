"""A run's TensorBoard event files read back by TensorBoard's own reader (EventAccumulator, the
one `tensorboard --logdir` used before its data server), as TensorBoard shows them: its scalars,
its images decoded by SlangPy's PNG reader, its hparams and the HParams view's metric and status."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import slangpy as spy
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.hparams import api_pb2, plugin_data_pb2


@dataclass
class Events:
    scalars: dict[str, list[tuple[int, float]]]  # tag: (step, value), by step
    images: dict[str, list[tuple[int, np.ndarray]]]  # tag: (step, H x W x 3 bytes)
    hparams: dict[str, object]  # name: number, text or flag
    metrics: list[str]  # the HParams view's metric tags
    status: str  # the session's end: STATUS_SUCCESS, STATUS_FAILURE, STATUS_UNKNOWN
    texts: dict[str, str]

    def last(self, tag: str) -> float:
        return self.scalars[tag][-1][1]


def _decode(png: bytes) -> np.ndarray:
    with tempfile.NamedTemporaryFile(suffix=".png") as handle:
        handle.write(png)
        handle.flush()
        return np.asarray(spy.Bitmap(handle.name))


def read_events(folder: Path) -> Events:
    accumulator = EventAccumulator(str(folder), size_guidance={"scalars": 0, "images": 0, "tensors": 0})
    accumulator.Reload()
    tags = accumulator.Tags()
    scalars = {tag: [(e.step, e.value) for e in accumulator.Scalars(tag)] for tag in tags["scalars"]}
    images = {
        tag: [(e.step, _decode(e.encoded_image_string)) for e in accumulator.Images(tag)] for tag in tags["images"]
    }
    content = accumulator.PluginTagToContent("hparams")
    data = {tag: plugin_data_pb2.HParamsPluginData.FromString(value) for tag, value in content.items()}
    start = data["_hparams_/session_start_info"].session_start_info
    hparams = {name: getattr(value, value.WhichOneof("kind")) for name, value in start.hparams.items()}
    experiment = data["_hparams_/experiment"].experiment
    status = api_pb2.Status.Name(data["_hparams_/session_end_info"].session_end_info.status)
    texts = {
        tag.split("/")[0]: accumulator.Tensors(tag)[-1].tensor_proto.string_val[0].decode()
        for tag in tags["tensors"]
        if tag.endswith("/text_summary")
    }
    return Events(scalars, images, hparams, [m.name.tag for m in experiment.metric_infos], status, texts)
