"""The hash-grid bench's tiny-cuda-nn rows and image-fit rows (app/bench/speed.py): the app and its
PyTorch twin train the same grid, and the image-fit row's PSNR curve is the photo's, rising."""

from __future__ import annotations

import numpy as np
import pytest

from app.bench import hashgrid_task, image_fit, speed
from app.config.config import Config, validate


def test_the_tcnn_rows_train_tiny_cuda_nns_grid_in_the_app_and_in_pytorch(gpu):
    """tiny-cuda-nn's mlp_learning_an_image config: 16 levels of 2 features, base resolution 16,
    per-level scale 1.5, tables of at most 2^15 entries. The app's plan and the PyTorch twin's grid
    are one GridSpec, and it is not the other hashgrid row's (2^19)."""
    fields = hashgrid_task.app_fields(64, hashgrid_task.TCNN_LOG2_SIZE)
    plan = gpu.plan(validate(Config(**fields, batch_size=1 << 12)))
    twin = speed.TORCH_REFERENCES["hashgrid-tcnn"].grid
    assert plan.grid == twin
    assert (twin.levels, twin.features, twin.base_resolution, twin.per_level_scale) == (16, 2, 16, 1.5)
    assert max(level.size for level in twin.layout) == 1 << 15
    assert twin.entries < speed.TORCH_REFERENCES["hashgrid"].grid.entries
    assert speed.FULL["hashgrid-tcnn"] == [1 << 18]


def test_the_image_fit_row_reports_a_rising_psnr_against_the_clock(gpu, monkeypatch, capsys):
    """A 64-pixel photo for 1.5 s of training: the PSNR of the learned image, from the
    app's evaluator, checked against numpy's PSNR of a flat grey guess as its floor. Tables of
    2^12 entries (0.035 s a step on lavapipe, unloaded): with the task's 2^19 (0.088 s), a CI run
    under load evaluated only five times in 1.5 s and reached 12.2 dB, under the floor's 12.7."""
    monkeypatch.setitem(
        speed.NETWORKS, "hashgrid", (lambda: hashgrid_task.app_fields(64, 12), speed.NETWORKS["hashgrid"][1])
    )
    monkeypatch.setattr(speed, "IMAGE_FIT", dict(seconds=1.5, target=30.0, every=0.25))
    monkeypatch.setattr(speed, "IMAGE_FIT_BATCH", 4096)
    monkeypatch.setattr(image_fit, "WARMUP_STEPS", 5)  # 50 are for a GPU; 5 keep this test short
    row = speed._image_fit_row(gpu, "hashgrid")
    seconds, psnr = np.array(row["psnr_curve"]).T
    assert len(seconds) >= 2 and np.all(np.diff(seconds) > 0) and seconds[-1] >= 1.5
    pixels = hashgrid_task.photo_pixels(64)
    grey = 10 * np.log10(1.0 / np.mean((pixels - pixels.mean()) ** 2))
    # the best of the curve above the grey guess: a loaded CI machine trains few steps in 1.5 s, and
    # its last points wobbled under its best (12.4 dB, then 10.4, against 11.7); zeros stay far under
    assert psnr.max() > psnr[0] + 3 and psnr.max() > grey, (psnr, grey)
    # the rate is the fit's own steps over its own training clock (the warm-up's steps not counted)
    assert row["steps"] >= len(seconds) and row["seconds"] == pytest.approx(seconds[-1], abs=1e-3)
    assert row["samples_per_second"] == pytest.approx(row["steps"] * 4096 / row["seconds"], rel=1e-12)
    speed._print_image_fit(row)
    line = capsys.readouterr().out
    assert "app-image-fit" in line and ("30 dB after" in line or "30 dB not reached" in line)
    assert image_fit.fit.__doc__


def test_the_fit_reads_the_psnr_as_often_as_it_is_asked_from_the_first_step(gpu, monkeypatch):
    """With evaluations asked for more often than a step takes, every chunk is one step, the first
    one included: the time to the target is read to a step, not to the session's quarter-second
    chunks (on an H100 the first reading came at 0.24 s and 38 dB, when 30 dB came far earlier)."""
    monkeypatch.setattr(image_fit, "FINE_SECONDS", 1e-6)
    monkeypatch.setattr(image_fit, "WARMUP_STEPS", 5)
    fields = hashgrid_task.app_fields(64, 12)
    config = validate(Config(**fields, batch_size=4096, precision="half", lr=0.01, seed=0))
    fit = image_fit.fit(gpu, config, seconds=0.3, target=99.0, every=0.25, quiet=True)
    steps = [point["steps"] for point in fit["points"]]
    assert steps == list(range(1, len(steps) + 1)), steps
