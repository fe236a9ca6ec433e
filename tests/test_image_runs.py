"""What an image run leaves and keeps: heatmaps.png shows the image in true colour at its aspect
ratio with the error map and its colour bar, the progress and done lines and summary.json give the
image's loss over its pixels and its PSNR, and a checkpoint keeps the PSNR curve (older ones still
load). Every image is made here, from numpy."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import slangpy as spy
from helpers import run_app
from test_images import FIT, sharp_edges

from app.config.config import Config, validate
from app.truth import image_truth


def _small_image_config(tmp_path: Path) -> Config:
    spy.Bitmap(sharp_edges(32)).write(str(tmp_path / "edges.png"))
    info, _ = image_truth.load(tmp_path / "edges.png")
    grid = dict(encoding="hashgrid", grid_levels=8, grid_log2_size=13, grid_base_resolution=4, hidden=[6], lr=0.02)
    return validate(Config(image=info, domain=image_truth.aspect_domain(32, 32), batch_size=2048, **grid))


def image_run_with_psnr(gpu, tmp_path: Path):
    """A session fitting a small image, evaluated every 5 steps for 20: four points on its PSNR
    curve, each from its own pass."""
    from app.loop.session import Session

    session = Session(gpu, _small_image_config(tmp_path))
    session.eval_every = 5
    for _ in range(4):
        session.advance(5)
    history = session.image.history
    assert history.steps == [5, 10, 15, 20] and len(set(history.values)) == 4, history.values
    assert all(10 < value < 60 for value in history.values), history.values
    return session


def test_a_checkpoint_keeps_the_psnr_curve_and_older_ones_still_load(gpu, tmp_path):
    """The PSNR curve of an image target goes into the checkpoint and comes back, point for point
    (a resumed run showed an empty PSNR plot); checkpoints written before it, version 2 and 3
    without the curve, still load, with an empty curve."""
    from old_checkpoints import full_series_bytes

    from app.files import checkpoint as ckpt
    from app.loop.session import Session

    source = image_run_with_psnr(gpu, tmp_path)
    steps, values = list(source.image.history.steps), list(source.image.history.values)
    resumed = Session(gpu, source.config)
    ckpt.restore(resumed, ckpt.decode(ckpt.encode(ckpt.capture(source))))
    assert (resumed.image.history.steps, resumed.image.history.values) == (steps, values)
    assert "psnr" not in resumed.history.current.metrics, "the curve is the image's, not a dataset figure"
    without = ckpt.capture(source)
    without.runs[-1].metrics.clear()  # as version 3 wrote an image run before the curve was kept
    for data in (ckpt.encode(without), full_series_bytes(ckpt.capture(source), 2)):
        older = Session(gpu, source.config)
        ckpt.restore(older, ckpt.decode(data))
        assert older.trainer.step == 20 and older.image.history.steps == []


def _found(shot: np.ndarray, panel: np.ndarray, top: int, left: int, most_right: int) -> tuple[int, float]:
    """The column from `left` to `left + most_right` where `panel` best matches the rows of `shot`
    from `top`, and its mean difference in 8-bit levels."""
    height, width = panel.shape[:2]
    errors = [
        np.abs(shot[top : top + height, x : x + width, :3].astype(np.float64) - panel).mean()
        for x in range(left, min(left + most_right, shot.shape[1] - width) + 1)
    ]
    return left + int(np.argmin(errors)), float(np.min(errors))


def test_an_image_runs_report_shows_the_image_in_true_colour_with_its_loss_and_psnr(gpu, tmp_path):
    """A headless run on a 48x24 image: heatmaps.png shows the truth and the learned image in true
    colour at 2:1, each image pixel a 7x7 block (it showed each channel in false colour, squeezed
    to a square), with the error map and its colour bar after them. The progress and done lines
    give the image's loss over its pixels and its PSNR, not the grid's derivative loss, which
    means nothing for an image; summary.json's image_loss is numpy's from learned.png and truth."""
    y, x = np.mgrid[0:24, 0:48]
    truth = np.stack([x * 5, y * 10, 255 - x * 5], -1).astype(np.uint8)
    truth[0, 0] = (255, 0, 255)  # a corner no colour bar or viridis has: where the truth panel starts
    spy.Bitmap(truth).write(str(tmp_path / "wide.png"))
    out = tmp_path / "run"
    result = run_app(
        gpu, tmp_path, "--headless", "--image", str(tmp_path / "wide.png"), *FIT,
        "--iterations", "60", "--eval-every", "30", "--out", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    learned = np.asarray(spy.Bitmap(str(out / "learned.png"))).astype(np.float64)
    loss = float(np.mean(np.sum((learned / 255 - truth / 255) ** 2, axis=-1)))  # 8-bit rounding aside
    assert summary["image_loss"] == pytest.approx(loss, rel=0.03, abs=2e-5)
    assert summary["psnr"] == pytest.approx(10 * np.log10(3 / summary["image_loss"]), abs=1e-9)
    assert summary["eval_grad_loss"] is None
    figures = f"image loss {summary['image_loss']:.6g} over 48x24 pixels, PSNR {summary['psnr']:.2f} dB"
    assert f"train loss {summary['train_loss']:.6g}, {figures} -> {out}" in result.stdout
    progress = [line for line in result.stderr.splitlines() if line.startswith("step ")]
    assert len(progress) == 2 and all("image loss" in line and " dB" in line for line in progress), result.stderr
    assert "grad loss" not in result.stdout + result.stderr
    shot = np.asarray(spy.Bitmap(str(out / "heatmaps.png")))
    magenta = np.argwhere(np.all(np.abs(shot[:, :, :3].astype(int) - (255, 0, 255)) <= 2, axis=-1))
    assert len(magenta), "the truth panel, in true colour"
    top = int(magenta[:, 0].min())
    left = int(magenta[magenta[:, 0] == top, 1].min())
    blocks = lambda image: np.repeat(np.repeat(image, 7, axis=0), 7, axis=1).astype(np.float64)  # noqa: E731
    at, error = _found(shot, blocks(truth), top, left, 0)
    assert error < 1.5, f"the truth panel is the image, 336x168, in true colour ({error:.2f} levels off)"
    at, error = _found(shot, blocks(learned), top, left + 336, 60)
    assert error < 1.5, f"the learned panel beside it is learned.png ({error:.2f} levels off)"
    right = at + 336
    assert shot.shape[1] > right + 336 + 40, "the error map and its colour bar follow"
    bar = shot[top : top + 168, right + 336 :, :3].astype(int)
    magma_top = np.array([252, 253, 191])  # magma at 1: the bar's top, its largest error
    assert np.any(np.all(np.abs(bar - magma_top) <= 12, axis=-1)), "the error map's colour bar"
