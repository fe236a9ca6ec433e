"""The headless runner end to end: convergence, outputs anyone can check, determinism."""

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import run_app
from reference import grid_centres
from tensorboard_reader import read_events

from app.config.config import Config, validate
from app.files.network_io import forward
from app.train.trainer import Trainer

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def run_cli(gpu, tmp_path):
    """`python -m app ARGS` in this process, on the session's device (helpers.run_app)."""
    return lambda *args: run_app(gpu, tmp_path, *args)


@pytest.fixture(scope="module")
def default_run(gpu, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "out"
    result = run_app(
        gpu,
        out.parent,
        "--headless", "--iterations", "1000", "--eval-every", "250", "--out", str(out), "--quiet",
        "--tensorboard", str(out.parent / "tensorboard"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return out


def test_default_run_converges(default_run):
    summary = json.loads((default_run / "summary.json").read_text())
    # An untrained network scores ~3.4 on the tutorial targets over [-1, 1]^2 (their summed
    # variance). Below 5e-3 is an RMS error under ~3.5% of each target's spread.
    assert summary["steps"] == 1000
    assert summary["eval_loss"] < 5e-3
    assert summary["train_loss"] < 1e-2
    assert summary["eval_grid"] == 64 and summary["wall_seconds"] > 0
    steps, batch = summary["steps"], summary["config"]["batch_size"]
    assert summary["samples_per_second"] == pytest.approx(steps * batch / summary["wall_seconds"], rel=1e-12)
    assert summary["device"]["type"] and summary["device"]["adapter"]
    assert validate(Config(**summary["config"])) == Config()


def test_network_json_matches_eval_loss(default_run):
    network = json.loads((default_run / "network.json").read_text())
    summary = json.loads((default_run / "summary.json").read_text())
    assert network["format"] == "slang-visual-trainer/network@1"
    assert [len(layer["biases"]) for layer in network["layers"]] == [16, 4]
    assert network["layers"][0]["activation"] == "leaky_relu" and network["layers"][0]["negative_slope"] == 0.01
    assert network["layers"][-1]["activation"] == "identity"
    g = summary["eval_grid"]
    x, y = (a.ravel() for a in grid_centres([-1, 1, -1, 1], g))
    truth = np.stack([(x + y) / (1 + y * y), 2 * x + y, 0.5 * x * x + 1.2 * y, x + 0.5 * y * y], axis=1)
    loss = np.mean(np.sum((forward(network, x, y) - truth) ** 2, axis=1))
    assert loss == pytest.approx(summary["eval_loss"], rel=1e-4)


def test_loss_csv_and_heatmaps(default_run):
    with open(default_run / "loss.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 1000 and rows[0]["step"] == "1" and rows[-1]["step"] == "1000"
    evals = [(int(r["step"]), float(r["eval_loss"])) for r in rows if r["eval_loss"]]
    assert [s for s, _ in evals] == [250, 500, 750, 1000]
    assert evals[-1][1] < evals[0][1]
    # the last evaluation's loss, not the one before it: the same value summary.json reports
    assert evals[-1][1] == json.loads((default_run / "summary.json").read_text())["eval_loss"]
    assert float(rows[-1]["train_loss"]) < float(rows[0]["train_loss"]) / 100
    png = (default_run / "heatmaps.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20000


def test_tensorboard_shows_the_runs_figures_its_heatmaps_and_its_config(default_run):
    """The event files as TensorBoard reads them: the train and eval losses of loss.csv at each
    evaluation, summary.json's last figures, the heatmaps of the first evaluation and the last
    (every 10th by default) as images, and the config as hparams with the eval loss as metric."""
    events = read_events(default_run.parent / "tensorboard")
    summary = json.loads((default_run / "summary.json").read_text())
    with open(default_run / "loss.csv") as handle:
        rows = {int(row["step"]): row for row in csv.DictReader(handle)}
    assert [step for step, _ in events.scalars["eval_loss"]] == [250, 500, 750, 1000]
    for step, value in events.scalars["eval_loss"]:
        assert value == pytest.approx(float(rows[step]["eval_loss"]), rel=1e-6)  # event files hold float32
    for step, value in events.scalars["train_loss"]:
        assert value == pytest.approx(float(rows[step]["train_loss"]), rel=1e-6)
    assert events.last("eval_grad_loss") == pytest.approx(summary["eval_grad_loss"], rel=1e-6)
    # the last evaluation's count of samples a second, before the run's end took its clock
    assert events.last("samples_per_second") == pytest.approx(summary["samples_per_second"], rel=0.25)
    config = summary["config"]
    assert events.hparams == {
        name: value if isinstance(value, (str, bool)) else json.dumps(value) if isinstance(value, list) else value
        for name, value in config.items()
        if value is not None
    }
    assert json.loads(events.texts["config"]) == config
    assert events.metrics == ["eval_loss"] and events.status == "STATUS_SUCCESS"
    images = events.images["heatmaps/values"]
    assert [step for step, _ in images] == [250, 1000]
    g = summary["eval_grid"]
    first, last = (image.astype(float) for _, image in images)
    assert first.shape == (4 * g + 3 * 2, 3 * g + 2 * 2, 3)  # truth | learned | |error|, a row an output
    rows_of = [slice(o * (g + 2), o * (g + 2) + g) for o in range(4)]
    truth, learned = (slice(0, g), slice(g + 2, 2 * g + 2))
    assert np.array_equal(first[:, truth], last[:, truth])  # the truth does not train
    gap = [np.abs(image[r, truth] - image[r, learned]).mean() for image in (first, last) for r in rows_of]
    assert sum(gap[4:]) < 0.75 * sum(gap[:4]), gap  # the learned panels close in on the truth
    f2 = first[rows_of[1], truth].mean(axis=2)  # 2x + y: brighter to the right (viridis)
    assert f2[:, -1].mean() > f2[:, 0].mean() + 50


def test_summary_config_reloads(default_run, run_cli, tmp_path):
    result = run_cli(
        "--headless",
        "--iterations",
        "3",
        "--config",
        str(default_run / "summary.json"),
        "--lr",
        "0.002",
        "--out",
        str(tmp_path / "again"),
        "--quiet",
    )
    assert result.returncode == 0, result.stderr
    config = json.loads((tmp_path / "again" / "summary.json").read_text())["config"]
    assert config["lr"] == 0.002 and config["hidden"] == [16]


def test_tutorial_preset_reproduces_the_tutorial(run_cli, tmp_path):
    result = run_cli(
        "--headless",
        "--preset",
        "tutorial",
        "--iterations",
        "1000",
        "--eval-every",
        "500",
        "--out",
        str(tmp_path),
        "--quiet",
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    c = summary["config"]
    assert (c["domain"], c["hidden"], c["precision"], c["output_activation"]) == (
        [0, 1, 0, 1],
        [16],
        "half",
        "leaky_relu",
    )
    assert summary["eval_loss"] < 2e-2  # 16 samples a step, half precision: a looser fit


@pytest.mark.parametrize("precision", ["float", "half"])
def test_same_seed_gives_bit_identical_weights(gpu, precision):
    config = validate(Config(precision=precision, hidden=[16, 16], batch_size=3000, seed=42))
    first, second = Trainer(gpu, config), Trainer(gpu, config)
    first.train(40)
    second.train(25)
    second.train(15)  # split differently across submits
    assert np.array_equal(first.parameters(), second.parameters())
    other = Trainer(gpu, config.replace(seed=43))
    other.train(40)
    assert not np.array_equal(first.parameters(), other.parameters())


def test_large_batch_loops_samples_per_thread(gpu):
    """Past 65,536 threads each thread walks several samples; gradients must still be the mean."""
    from helpers import gpu_loss_and_gradient
    from reference import loss_and_gradient, sample_points, truth_values

    trainer = Trainer(gpu, validate(Config(batch_size=150_001, hidden=[8], seed=2)))
    assert trainer.launch.shape.thread_count < trainer.config.batch_size
    loss, gradient = gpu_loss_and_gradient(trainer)
    x, y = sample_points(2, 0, 150_001, trainer.config.domain)
    ref_loss, ref_gradient = loss_and_gradient(
        trainer.config, trainer.parameters(), x, y, truth_values(trainer.config, x, y)
    )
    assert loss == pytest.approx(ref_loss, rel=1e-4)
    assert np.max(np.abs(gradient - ref_gradient)) < 1e-4 * np.max(np.abs(ref_gradient))


def test_divergence_stops_with_last_finite_network(run_cli, tmp_path):
    result = run_cli(
        "--headless", "--iterations", "400", "--optimizer", "sgd", "--lr", "1e6", "--out", str(tmp_path), "--quiet"
    )
    assert result.returncode == 3, result.stderr
    assert "non-finite at step" in result.stderr and "Traceback" not in result.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    network = json.loads((tmp_path / "network.json").read_text())
    # the loss of step s is measured on the network after s - 1 updates: the last network with
    # a finite loss is the one after diverged_at_step - 2 updates
    assert summary["steps"] == max(summary["diverged_at_step"] - 2, 0)
    for layer in network["layers"]:
        assert np.all(np.isfinite(layer["weights"])) and np.all(np.isfinite(layer["biases"]))
    with open(tmp_path / "loss.csv") as handle:
        assert all(np.isfinite(float(r["train_loss"])) for r in csv.DictReader(handle))


def _outside_forward(network, x, y):
    """network.json evaluated from docs/formats.md's schema alone, in float64 (no app code)."""
    cols = [x, y]
    for k in range(network["encoding"].get("frequencies", 0) if network["encoding"]["kind"] == "fourier" else 0):
        w = np.pi * 2.0**k
        cols += [np.sin(w * x), np.cos(w * x), np.sin(w * y), np.cos(w * y)]
    h = np.stack(cols, axis=1)
    acts = {"identity": lambda z: z, "tanh": np.tanh, "leaky_relu": lambda z: np.where(z > 0, z, 0.01 * z)}
    for layer in network["layers"]:
        h = acts[layer["activation"]](h @ np.asarray(layer["weights"]).T + np.asarray(layer["biases"]))
    return h


def test_custom_targets_fit_and_the_derivative_loss_agrees_outside(run_cli, tmp_path):
    """The issue's run, shortened for CI: two typed targets, Fourier features; the fit and both
    losses are checked from network.json with numpy alone, the derivatives by central differences
    (h = 1e-7 in float64: a LeakyReLU network has kinks that a larger step would straddle)."""
    result = run_cli(
        "--headless",
        "--target",
        "sin(3*x)*cos(2*y)",
        "--target",
        "exp(-4*(x*x+y*y))",
        "--encoding",
        "fourier",
        "--hidden",
        "32",
        "--iterations",
        "300",
        "--eval-grid",
        "32",
        "--out",
        str(tmp_path),
        "--quiet",
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    network = json.loads((tmp_path / "network.json").read_text())
    assert network["targets"] == ["sin(3*x)*cos(2*y)", "exp(-4*(x*x+y*y))"]
    g = summary["eval_grid"]
    x, y = (a.ravel() for a in grid_centres([-1, 1, -1, 1], g))
    truth = np.stack([np.sin(3 * x) * np.cos(2 * y), np.exp(-4 * (x * x + y * y))], axis=1)
    loss = np.mean(np.sum((_outside_forward(network, x, y) - truth) ** 2, axis=1))
    assert loss == pytest.approx(summary["eval_loss"], rel=1e-4)
    assert loss < 0.02 * np.mean(np.sum((truth - truth.mean(axis=0)) ** 2, axis=1)), "both functions are fit"
    h, e = 1e-7, np.exp(-4 * (x * x + y * y))
    dx = (_outside_forward(network, x + h, y) - _outside_forward(network, x - h, y)) / (2 * h)
    dy = (_outside_forward(network, x, y + h) - _outside_forward(network, x, y - h)) / (2 * h)
    truth_dx = np.stack([3 * np.cos(3 * x) * np.cos(2 * y), -8 * x * e], axis=1)
    truth_dy = np.stack([-2 * np.sin(3 * x) * np.sin(2 * y), -8 * y * e], axis=1)
    grad_loss = np.mean(np.sum((dx - truth_dx) ** 2 + (dy - truth_dy) ** 2, axis=1))
    assert grad_loss == pytest.approx(summary["eval_grad_loss"], rel=1e-4)


def test_screenshot_after_a_headless_run_is_a_png_renamed_into_place(run_cli, tmp_path):
    """The screenshot is rendered under a temporary name beside it, which keeps the .png
    extension (sgl picks the image format from it), and renamed once every file is written."""
    shot = tmp_path / "shot.png"
    result = run_cli(
        "--headless", "--iterations", "5", "--quiet", "--out", str(tmp_path / "run"), "--screenshot", str(shot)
    )
    assert result.returncode == 0, result.stderr
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.iterdir() if ".partial" in p.name] == []


def test_a_first_run_says_it_is_compiling_and_a_cached_one_does_not(tmp_path):
    """A first run sat silent for seconds while its shaders compiled: with empty caches it says
    so, once, on stderr before anything else; the same run again, from the caches, says nothing
    of it (however slow a busy machine makes it), and --quiet never does. Real processes, each
    with caches of its own."""
    import os

    from app.gpu.device import KERNEL_CACHE
    from app.run.headless import BUILT_NETWORKS, COMPILE_NOTICE

    def run(cache: str, *more: str) -> subprocess.CompletedProcess:
        # Mesa's shader cache too: where MESA_SHADER_CACHE_DIR is set (CI's is), it is not under
        # XDG_CACHE_HOME; and SlangPy's, which the tests share (conftest.py)
        env = dict(
            os.environ, XDG_CACHE_HOME=str(tmp_path / cache), MESA_SHADER_CACHE_DIR=str(tmp_path / cache / "mesa")
        )
        env.pop(KERNEL_CACHE, None)
        args = [sys.executable, "-m", "app", "--headless", "--iterations", "5", "--out", str(tmp_path / "out"), *more]
        return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)

    first, again, quiet = run("cache"), run("cache"), run("other cache", "--quiet")
    for result in (first, again, quiet):
        assert result.returncode == 0, result.stderr
    assert first.stderr.startswith(COMPILE_NOTICE + "\n") and first.stderr.count(COMPILE_NOTICE) == 1, first.stderr
    assert COMPILE_NOTICE not in again.stderr and COMPILE_NOTICE not in quiet.stderr
    assert COMPILE_NOTICE not in first.stdout
    assert len(list((tmp_path / "cache" / "slang-visual-trainer" / BUILT_NETWORKS).iterdir())) == 1
