"""The derivative views: d/dx and d/dy of the learned network and of the truth, computed on the
GPU by Slang's forward-mode autodiff, against central differences of network.json in numpy and
against closed-form derivatives; the derivative loss; the diverging colour map."""

from __future__ import annotations

import numpy as np
import pytest
from reference import forward, grid_centres, kernel_parameters, linear_to_srgb

from app.truth.targets import target_to_numpy
from app.views.evaluation import GridEvaluator
from app.views.heatmaps import COLORBAR_HEIGHT, HeatmapImages

GRID = 20
# ColorBrewer's RdBu (11 classes), as published: the diverging map's anchors, t = 0 .. 1.
RDBU = [
    "#67001f",
    "#b2182b",
    "#d6604d",
    "#f4a582",
    "#fddbc7",
    "#f7f7f7",
    "#d1e5f0",
    "#92c5de",
    "#4393c3",
    "#2166ac",
    "#053061",
]


def _evaluate(trainer, steps=25):
    trainer.train(steps)
    return GridEvaluator(trainer, GRID).evaluate()


def _network_differences(trainer, h):
    """Central differences of the network (tests/reference.py's numpy, float64) at the grid's
    cell centres."""
    config, params = trainer.config, kernel_parameters(trainer.config, trainer.parameters())
    x, y = (a.ravel().astype(np.float64) for a in grid_centres(trainer.config.domain, GRID))
    dx = (forward(config, params, x + h, y) - forward(config, params, x - h, y)) / (2 * h)
    dy = (forward(config, params, x, y + h) - forward(config, params, x, y - h)) / (2 * h)
    return dx.reshape(GRID, GRID, -1), dy.reshape(GRID, GRID, -1)


@pytest.mark.parametrize(
    "fields",
    [
        dict(),  # the tutorial's 4-16-4, LeakyReLU
        dict(encoding="fourier", frequencies=3, activation="relu", hidden=[24, 16]),
        dict(encoding="raw", activation="sin", output_activation="tanh"),
        dict(activation="sigmoid", hidden=[12, 12, 12]),
        dict(precision="half", activation="tanh"),
        dict(encoding="raw", activation="softplus", output_activation="softplus", hidden=[12, 12]),
        dict(encoding="raw", activation="silu", output_activation="silu", hidden=[12, 12]),
        # on a CPU driver the wide float networks above take lane tiles, whose evaluation loops
        # over a layer table (app/kernels/paths/lanes/shadergen.py): this one keeps the GPUs' chain of layers
        dict(encoding="fourier", frequencies=3, activation="relu", hidden=[24, 16], lane_tiles=False),
    ],
    ids=[
        "leaky_relu",
        "fourier-relu-wide",
        "raw-sin",
        "sigmoid-3-layers",
        "half",
        "raw-softplus",
        "raw-silu",
        "fourier-relu-wide-gpu-path",
    ],
)
def test_network_derivatives_match_central_differences(gpu, monkeypatch, make_trainer, fields):
    fields = dict(fields)
    monkeypatch.setattr(gpu, "lane_tiles", fields.pop("lane_tiles", gpu.lane_tiles))
    trainer = make_trainer(seed=3, **fields)
    evaluation = _evaluate(trainer)
    # h small enough that a LeakyReLU kink rarely falls within it, large enough for float64
    dx, dy = _network_differences(trainer, 1e-7)
    half = trainer.config.precision == "half"
    for axis, numeric in ((0, dx), (1, dy)):
        gpu = evaluation.derivatives[..., axis].astype(np.float64)
        scale = np.abs(numeric).max()
        assert scale > 0.01 and np.count_nonzero(gpu) > 0.9 * gpu.size, "a real derivative, not zeros"
        tolerance = 3e-2 if half else 1e-4  # half: the network's own arithmetic is half
        assert np.abs(gpu - numeric).max() <= tolerance * scale, (axis, np.abs(gpu - numeric).max(), scale)


# One module for every truth test (each new set of targets is a compile of its own).
TRUTHS = [
    "(x + y) / (1 + y*y)",
    "2*x + y",
    "0.5*x*x + 1.2*y",
    "x + 0.5*y*y",  # the tutorial's four
    "abs(x) - abs(y)",
    "min(x, y)",
    "max(x*y, 0.1)",  # no derivative somewhere
    "sin(3*x) * cos(2*y) + x**3 - pow(y, 2) + sqrt(2 + x) + log(2 + y) / (1 + x*x)",
]


@pytest.fixture(scope="module")
def truth_derivatives(gpu):
    from app.config.config import Config, validate
    from app.train.trainer import Trainer

    trainer = Trainer(gpu, validate(Config(targets=TRUTHS)))
    x, y = (a.astype(np.float64) for a in grid_centres(trainer.config.domain, GRID))
    return GridEvaluator(trainer, GRID).evaluate().derivatives.astype(np.float64), x, y


def test_truth_derivatives_match_the_tutorial_targets_closed_forms(truth_derivatives):
    d, x, y = truth_derivatives
    closed = [
        (1 / (1 + y * y), (1 + y * y - 2 * y * (x + y)) / (1 + y * y) ** 2),  # (x + y) / (1 + y*y)
        (2 + 0 * x, 1 + 0 * y),  # 2*x + y
        (x, 1.2 + 0 * y),  # 0.5*x*x + 1.2*y
        (1 + 0 * x, y),
    ]  # x + 0.5*y*y
    for o, (ddx, ddy) in enumerate(closed):
        np.testing.assert_allclose(d[..., o, 2], ddx, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(d[..., o, 3], ddy, rtol=1e-5, atol=1e-6)


def test_targets_without_a_derivative_everywhere_take_slangs(truth_derivatives):
    """abs, min and max: off their kinks the derivative of the side taken; on a tie of min (the
    diagonal x = y holds cell centres) Slang splits it, 0.5 each."""
    d, x, y = truth_derivatives
    np.testing.assert_array_equal(d[..., 4, 2], np.sign(x))  # cell centres are never 0
    np.testing.assert_array_equal(d[..., 4, 3], -np.sign(y))
    np.testing.assert_array_equal(d[..., 5, 2], np.where(x == y, 0.5, (x < y).astype(float)))
    np.testing.assert_array_equal(d[..., 5, 3], np.where(x == y, 0.5, (y < x).astype(float)))
    np.testing.assert_allclose(d[..., 6, 2], np.where(x * y > 0.1, y, 0.0), atol=1e-7)
    np.testing.assert_allclose(d[..., 6, 3], np.where(x * y > 0.1, x, 0.0), atol=1e-7)


def test_truth_derivatives_of_other_targets_match_central_differences(truth_derivatives):
    d, x, y = truth_derivatives
    f, h = target_to_numpy(TRUTHS[7]), 1e-6
    np.testing.assert_allclose(d[..., 7, 2], (f(x + h, y) - f(x - h, y)) / (2 * h), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(d[..., 7, 3], (f(x, y + h) - f(x, y - h)) / (2 * h), rtol=1e-4, atol=1e-5)


def test_derivative_loss_and_error_maxima(make_trainer):
    trainer = make_trainer(encoding="fourier", frequencies=3, activation="relu", hidden=[24, 16], seed=5)
    evaluation = _evaluate(trainer)
    d = evaluation.derivatives.astype(np.float64)
    errors = (d[..., 0] - d[..., 2]) ** 2 + (d[..., 1] - d[..., 3]) ** 2
    np.testing.assert_allclose(evaluation.cell_grad_loss, errors.sum(axis=2), rtol=1e-4)
    assert evaluation.grad_loss == pytest.approx(float(errors.sum(axis=2).mean()), rel=1e-4)
    np.testing.assert_allclose(evaluation.error_max[1], np.abs(d[..., 0] - d[..., 2]).max(axis=(0, 1)), rtol=1e-5)
    np.testing.assert_allclose(evaluation.error_max[2], np.abs(d[..., 1] - d[..., 3]).max(axis=(0, 1)), rtol=1e-5)
    assert not evaluation.invalid.any()


def test_diverging_colour_bar_is_colorbrewers_rdbu(make_trainer):
    images = HeatmapImages(GridEvaluator(make_trainer(), 16))
    bar = np.asarray(images.colorbars.to_numpy(), np.float32)[::-1, 2, :3]  # bottom = 0
    for k, hex_colour in enumerate(RDBU):
        row = min(int(k / 10 * COLORBAR_HEIGHT), COLORBAR_HEIGHT - 1)
        expected = np.array([int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)])
        np.testing.assert_allclose(linear_to_srgb(bar[row]), expected, atol=0.02)


def test_derivative_heatmap_pixels_follow_the_diverging_map(make_trainer):
    trainer = make_trainer(eval_grid=32)
    trainer.train(30)
    images = HeatmapImages(GridEvaluator(trainer, 32))
    images.draw_now()
    evaluation = images.evaluator.read()
    atlas = np.asarray(images.atlas.to_numpy(), np.float32)[..., :3]
    bars = np.asarray(images.colorbars.to_numpy(), np.float32)[::-1, :, :3]

    def lookup(column, t):
        return bars[np.clip((t * COLORBAR_HEIGHT).astype(int), 0, COLORBAR_HEIGHT - 1), column]

    for view, (learned, truth) in ((1, (0, 2)), (2, (1, 3))):
        for output in range(4):
            lo, hi = images.value_ranges[view, output]
            assert lo == pytest.approx(-hi), "symmetric about 0: white is 0"
            rows = atlas[output * 32 : (output + 1) * 32][::-1]
            d = evaluation.derivatives[..., output, :]
            base = 3 * view * 32
            np.testing.assert_allclose(
                rows[:, base : base + 32], lookup(2, np.clip((d[..., truth] - lo) / (hi - lo), 0, 1)), atol=0.03
            )
            np.testing.assert_allclose(
                rows[:, base + 32 : base + 64], lookup(2, np.clip((d[..., learned] - lo) / (hi - lo), 0, 1)), atol=0.03
            )
            error = np.abs(d[..., learned] - d[..., truth]) / evaluation.error_max[view, output]
            np.testing.assert_allclose(rows[:, base + 64 : base + 96], lookup(1, error), atol=0.03)
