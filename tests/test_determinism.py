"""Bit-exact on every path: the determinism matrix. Every gradient path a device takes (the
network's shape and precision pick it: thread accumulators, pairs, group tiles, workgroup tiles on
the shader or tensor cores, the fused trainer, lane tiles on a CPU driver), each precision, truth
source (formulas, an image, a dataset's points), encoding and output count (1, 3, 4 and 8; an
image has 1, 3 or 4 channels). Each case trains twice to byte-identical network.json (the first
run stopping half-way for a checkpoint, the second straight through), and once more from that
checkpoint restored into a fresh session, to the same bytes.

The whole matrix (330 cases) runs with VISUAL_TRAINER_DETERMINISM=all, on the GPU machines
(VISUAL_TRAINER_TEST_DEVICE picks the API: run it on Vulkan and CUDA). Otherwise, as in CI, a
fixed sample of it runs: every SAMPLE-th case, which spans every shape and precision, truth kind
and encoding (a CPU driver compiles each network in seconds, not milliseconds)."""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path

import numpy as np
import pytest
import slangpy as spy

from app import datasets
from app.config.config import Config, validate
from app.config.truths import with_dataset
from app.files import checkpoint as ckpt
from app.files.network_io import export_network
from app.loop.session import Session
from app.truth import image_truth

STEPS, BATCH = 24, 4096
CPU_STEPS = 12  # on a CPU driver (CI): half the steps; a sum in another order shows at the first
SAMPLE = 33  # 10 of the 330 cases: each shape x precision block, five truths, all encodings
SHAPES = {  # hidden layers and activation: which paths they lead to, with the precision and device
    "small": dict(hidden=[8]),  # thread accumulators; pairs in half
    "wide": dict(hidden=[64, 64]),  # workgroup or lane tiles; tensor cores or the fused trainer in half
    "sine": dict(hidden=[32, 32], activation="sin"),  # group tiles: sin's derivative needs its input
}
ENCODINGS = {
    "poly2": dict(encoding="poly2"),
    "features": dict(features=["x", "y", "xy", "sinx"]),
    "fourier": dict(encoding="fourier", frequencies=2),
    "hashgrid": dict(encoding="hashgrid", grid_levels=6, grid_log2_size=10, grid_base_resolution=4),
    "densegrid": dict(encoding="densegrid", grid_levels=3, grid_base_resolution=4),
}
FORMULAS = ["x", "y", "x*y", "x - y", "sin(3*x)", "cos(2*y)", "x*x + y", "y*y - x"]


def _truths(folder: Path) -> dict[str, dict]:
    """The truth sources, each with its output count: formulas, images of 1, 3 and 4 channels, a
    dataset of two classes (one logit), of 3, 4 and 8 classes (one logit each), of values."""
    truths = {f"formula-{n}": dict(targets=FORMULAS[:n]) for n in (1, 3, 4, 8)}
    y, x = np.mgrid[0:24, 0:32]
    for channels in (1, 3, 4):
        pixels = np.stack([(x * 7 + y * 3 * c) % 256 for c in range(channels)], -1).astype(np.uint8)
        path = folder / f"image{channels}.png"
        spy.Bitmap(pixels[..., 0].copy() if channels == 1 else pixels).write(str(path))
        info, _ = image_truth.load(path)
        truths[f"image-{channels}"] = dict(image=info, domain=image_truth.aspect_domain(32, 24))
    truths["points-1"] = dict(dataset_name="spiral", points=300)
    rng = np.random.default_rng(0)
    for classes in (3, 4, 8):
        xy = rng.uniform(-1, 1, (200, 2))
        labels = np.floor((np.arctan2(xy[:, 1], xy[:, 0]) + np.pi) / (2 * np.pi) * classes).astype(int) % classes
        path = folder / f"classes{classes}.csv"
        path.write_text("x,y,label\n" + "".join(f"{a:.4f},{b:.4f},{c}\n" for (a, b), c in zip(xy, labels)))
        truths[f"points-{classes}"] = dict(dataset_name=str(path))
    return truths


def _cases() -> list[tuple[str, str, str, str]]:
    names = ["formula-1", "formula-3", "formula-4", "formula-8", "image-1", "image-3", "image-4"]
    names += ["points-1", "points-3", "points-4", "points-8"]
    return [
        (shape, precision, truth, encoding)
        for shape in SHAPES
        for precision in ("float", "half")
        for truth in names
        for encoding in ENCODINGS
    ]


ALL_CASES = _cases()
CASES = ALL_CASES if os.environ.get("VISUAL_TRAINER_DETERMINISM") == "all" else ALL_CASES[::SAMPLE]


@pytest.fixture(scope="module")
def truths(tmp_path_factory) -> dict[str, dict]:
    return _truths(tmp_path_factory.mktemp("truths"))


def _config(shape: str, precision: str, truth: dict, encoding: str) -> Config:
    fields = {**SHAPES[shape], **ENCODINGS[encoding], **truth, "precision": precision}
    fields |= dict(batch_size=BATCH, seed=11, lr=0.005)
    name = fields.pop("dataset_name", None)
    config = validate(Config(**fields))
    return config if name is None else with_dataset(config, datasets.entry_for(name))


def _network_json(session: Session) -> bytes:
    """network.json's bytes, as a headless run writes them (app/run/output.py)."""
    trainer = session.trainer
    data = trainer.data.dataset.summary(session.config.data_settings) if trainer.data is not None else None
    document = export_network(trainer.plan, session.config, trainer.parameters(), data)
    return (json.dumps(document) + "\n").encode()


@pytest.mark.parametrize(("shape", "precision", "truth", "encoding"), CASES, ids=["-".join(c) for c in CASES])
def test_the_same_seed_gives_the_same_bytes_and_so_does_a_resumed_run(gpu, truths, shape, precision, truth, encoding):
    config = _config(shape, precision, truths[truth], encoding)
    steps = CPU_STEPS if gpu.software else STEPS
    first, second = Session(gpu, config, grid=8), Session(gpu, config, grid=8)
    first.advance(steps // 2)
    saved = ckpt.encode(ckpt.capture(first))  # half-way: the first run goes on from there
    first.advance(steps - steps // 2)
    second.advance(steps)
    runs = [_network_json(first), _network_json(second)]
    resumed = Session(gpu, config.replace(seed=config.seed + 1), grid=8)  # whatever it held is replaced
    ckpt.restore(resumed, ckpt.decode(saved))
    resumed.advance(steps - steps // 2)
    path = resumed.trainer.plan.gradient_path
    assert runs[0] == runs[1], f"two runs differ ({path}, crc {zlib.crc32(runs[0])} against {zlib.crc32(runs[1])})"
    assert _network_json(resumed) == runs[0], f"a resumed run differs ({path})"
    assert resumed.trainer.step == steps and np.all(np.isfinite(resumed.trainer.parameters()))
