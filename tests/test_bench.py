"""The frame benchmark end to end on a few frames, and the JSON output the benchmarks share."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import gpu_loss_and_gradient, run_app

from app.bench import options

ROOT = Path(__file__).resolve().parent.parent


def test_frame_benchmark_writes_its_figures(gpu, tmp_path):
    from app.bench import frame

    out = tmp_path / "run" / "frame.json"
    out.parent.mkdir()
    # 20 frames: on a CPU driver under load the window trains a step only every few frames
    result = run_app(gpu, tmp_path, "--frames", "20", "--seconds", "0.2", "--json", str(out), main=frame.main)
    assert result.returncode == 0, result.stderr
    figures = json.loads(out.read_text())
    assert figures["paused"]["frames"] == 20 and figures["training"]["ms_per_frame"] > 0
    assert figures["paused"]["samples"] == 0, "nothing trains while paused"
    _assert_rate(figures["training"], figures["batch_size"])
    _assert_rate(figures["headless"], figures["batch_size"])
    assert figures["headless_samples_per_second"] == figures["headless"]["samples_per_second"]
    assert "window / headless" in result.stdout
    assert [p.name for p in out.parent.iterdir()] == ["frame.json"], "no temporary file is left"


def _assert_rate(figures: dict, batch: int) -> None:
    """A rate is the run's own whole steps of `batch` samples over its own seconds."""
    assert figures["samples"] >= batch and figures["samples"] % batch == 0, figures
    assert figures["samples_per_second"] == pytest.approx(figures["samples"] / figures["seconds"], rel=1e-12)


def test_json_that_cannot_be_written_is_one_line_and_exit_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        options.write_json(str(tmp_path / "missing" / "out.json"), {"a": 1})
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith("error: could not write") and error.count("\n") == 1
    options.write_json(None, {"a": 1})  # no path: nothing written, no error


def test_benchmark_options_parse_the_shared_flags():
    parser = options.parser("bench.soak", "python -m app.bench.soak [--json PATH]\n\nSoak benchmark: leaks.\n")
    args = parser.parse_args(["--json", "x.json", "--device", "vulkan"])
    assert (args.json, args.device) == ("x.json", "vulkan") and parser.description == "Soak benchmark: leaks."
    with pytest.raises(SystemExit):
        parser.parse_args(["--device", "tpu"])


def test_the_tutorials_atomic_kernels_take_the_apps_first_step(gpu, make_trainer):
    """The benchmark's reference (shaders/bench/atomic_reference.slang: per-sample float atomics, the
    tutorial's design) trains the default network like the app: after one Adam step from the
    same weights on the same batch, both moved every parameter the same way. Adam's first step
    is -lr * g / (|g| + eps): at most lr, and a sign flip or a zero gradient would show as a
    difference of up to 2 lr. Where the gradient stands clear of the float sums' order (|g| >
    1e-4), the two agree to 1e-3 of lr; the rest (gradients near 0, whose sign the order of float
    atomics may flip) still move less than lr."""
    from app.bench.runners import AtomicReference

    atomic = AtomicReference(gpu)
    batch = 1024
    trainer = make_trainer(batch_size=batch)
    lr = trainer.config.lr
    start = trainer.parameters()
    assert np.array_equal(start, gpu.read(atomic.params, atomic.count, np.float32))
    _, gradient = gpu_loss_and_gradient(trainer, step=0)
    with gpu.submit() as encoder:
        atomic.record(encoder, batch, 0)
    trainer.train(1)
    moved_atomic = gpu.read(atomic.params, atomic.count, np.float32) - start
    moved_app = trainer.parameters() - start
    clear = np.abs(gradient) > 1e-4
    assert clear.mean() > 0.8, clear.mean()
    assert np.all(np.abs(moved_atomic[clear] - moved_app[clear]) < 1e-3 * lr), "the same step where g is clear"
    assert np.all(np.abs(moved_atomic) <= lr * (1 + 1e-4)), "Adam's first step is at most lr"


def test_the_cuda_column_is_left_out_where_the_bench_runs_on_no_nvidia_vulkan_gpu(gpu):
    """The app-cuda rows need the same NVIDIA GPU through CUDA: --no-cuda, or a CPU driver, or
    another vendor's, gives none (and creates no second device)."""
    from argparse import Namespace

    from app.bench.speed import cuda_twin

    assert cuda_twin(gpu, Namespace(no_cuda=True)) is None
    if gpu.software or "nvidia" not in gpu.device.info.adapter_name.lower():
        assert cuda_twin(gpu, Namespace(no_cuda=False)) is None


def test_the_window_row_is_the_windows_training_against_headless(gpu, monkeypatch, capsys):
    """The full run's window row (app/bench/frame.py window_row), here for 4-16-4 at a small batch:
    the window's samples/s over the headless run's, as printed; the network and batch as asked."""
    from app.bench import speed

    monkeypatch.setattr(speed, "WINDOW", dict(network="4-16-4", batch=256, precision="float", frames=4, seconds=0.2))
    row = speed._window_row(gpu)
    assert (row["trainer"], row["network"], row["batch"], row["precision"]) == ("app-window", "4-16-4", 256, "float")
    _assert_rate(row, 256)
    _assert_rate(row["headless"], 256)
    assert row["window_over_headless"] == pytest.approx(row["samples_per_second"] / row["headless_samples_per_second"])
    assert row["frames_per_second"] > 0 and row["record_ms"] >= 0
    line = capsys.readouterr().out
    assert f"{row['window_over_headless']:.2f} of headless" in line and "app-window" in line
