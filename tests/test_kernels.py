"""Every kernel's output against numpy: optimizer updates, grid evaluation, heatmap colours."""

import numpy as np
import pytest
from helpers import gpu_loss_and_gradient
from reference import MAGMA_ENDS, VIRIDIS_ENDS, forward, grid_centres, kernel_parameters, linear_to_srgb

from app.views.evaluation import GridEvaluator
from app.views.heatmaps import COLORBAR_HEIGHT, HeatmapImages


def test_adam_steps_match_numpy(make_trainer):
    trainer = make_trainer(
        optimizer="adam", lr=0.02, beta1=0.8, beta2=0.99, epsilon=1e-6, batch_size=256, activation="tanh"
    )
    params = trainer.parameters().astype(np.float64)
    m = np.zeros_like(params)
    v = np.zeros_like(params)
    # The GPU sums the slots in float32, the helper in float64: gradients below ~1e-5 differ by
    # noise that Adam's normalisation amplifies. Compare the parameters whose gradients stand clear.
    clear = np.ones(params.size, bool)
    for t in range(1, 4):
        _, grad = gpu_loss_and_gradient(trainer, step=trainer.step)
        clear &= np.abs(grad) > 1e-3
        trainer.train(1)
        m = 0.8 * m + 0.2 * grad
        v = 0.99 * v + 0.01 * grad * grad
        params = params - 0.02 * (m / (1 - 0.8**t)) / (np.sqrt(v / (1 - 0.99**t)) + 1e-6)
        assert clear.sum() > 0.5 * clear.size
        np.testing.assert_allclose(trainer.parameters()[clear], params[clear], rtol=1e-4, atol=2e-5)


def test_adamw_steps_match_numpy(make_trainer):
    """AdamW, the optimizer added as app/model/optimizers.py's example: Adam's step plus the decay of
    every parameter by lr * weight_decay, apart from the moments."""
    lr, b1, b2, eps, decay = 0.02, 0.8, 0.99, 1e-6, 0.3
    trainer = make_trainer(
        optimizer="adamw", lr=lr, beta1=b1, beta2=b2, epsilon=eps, weight_decay=decay, batch_size=256
    )
    params = trainer.parameters().astype(np.float64)
    m, v = np.zeros_like(params), np.zeros_like(params)
    clear = np.ones(params.size, bool)  # as for Adam: parameters whose gradients stand clear of noise
    for t in range(1, 4):
        _, grad = gpu_loss_and_gradient(trainer, step=trainer.step)
        clear &= np.abs(grad) > 1e-3
        trainer.train(1)
        m = b1 * m + (1 - b1) * grad
        v = b2 * v + (1 - b2) * grad * grad
        params = params - lr * ((m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps) + decay * params)
        assert clear.sum() > 0.5 * clear.size
        np.testing.assert_allclose(trainer.parameters()[clear], params[clear], rtol=1e-4, atol=2e-5)
    adam = make_trainer(optimizer="adam", lr=lr, beta1=b1, beta2=b2, epsilon=eps, batch_size=256)
    adam.train(3)
    assert np.abs(adam.parameters() - trainer.parameters()).max() > 1e-4, "the decay changes the weights"


def test_sgd_momentum_matches_numpy(make_trainer):
    trainer = make_trainer(optimizer="sgd", lr=0.1, beta1=0.5, batch_size=128)
    params = trainer.parameters().astype(np.float64)
    velocity = np.zeros_like(params)
    for _ in range(3):
        _, grad = gpu_loss_and_gradient(trainer, step=trainer.step)
        trainer.train(1)
        velocity = 0.5 * velocity + grad
        params = params - 0.1 * velocity
        np.testing.assert_allclose(trainer.parameters(), params, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize(
    "fields",
    [
        dict(),
        dict(
            encoding="fourier",
            frequencies=3,
            activation="sin",
            hidden=[9, 5],
            targets=["sin(3*x) * cos(2*y)", "exp(-x*x) - abs(y)", "min(x, y) ** 2"],
        ),
        dict(precision="half", activation="tanh"),
    ],
)
def test_evaluate_grid_matches_numpy_forward(make_trainer, fields):
    trainer = make_trainer(eval_grid=24, **fields)
    trainer.train(20)
    evaluation = GridEvaluator(trainer, trainer.config.eval_grid).evaluate()
    c = trainer.config
    grid = c.eval_grid
    x, y = grid_centres(c.domain, grid)
    params = kernel_parameters(c, trainer.parameters())
    expected = forward(c, params, x.ravel(), y.ravel()).reshape(grid, grid, -1)
    tolerance = 2e-2 if c.precision == "half" else 1e-4
    np.testing.assert_allclose(evaluation.predictions, expected, atol=tolerance * np.abs(expected).max())
    from reference import truth_values

    truth = truth_values(c, x.ravel(), y.ravel()).reshape(grid, grid, -1)
    np.testing.assert_allclose(evaluation.truths, truth, rtol=1e-5, atol=1e-5)
    errors = evaluation.predictions.astype(np.float64) - evaluation.truths
    np.testing.assert_allclose(evaluation.cell_loss, np.sum(errors**2, axis=2), rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(evaluation.error_max[0], np.abs(errors).max(axis=(0, 1)), rtol=1e-5)


def _texture_rgb(texture) -> np.ndarray:
    return np.asarray(texture.to_numpy(), dtype=np.float32)[..., :3]


def test_colorbars_are_viridis_and_magma(make_trainer):
    images = HeatmapImages(GridEvaluator(make_trainer(), 16))
    bars = _texture_rgb(images.colorbars)  # (256, 3, 3), linear colour, top = 1
    assert bars.shape[:2] == (COLORBAR_HEIGHT, 3)
    for column, ends in ((0, VIRIDIS_ENDS), (1, MAGMA_ENDS)):
        # the shaders use polynomial fits, within ~0.02 of matplotlib's tables in sRGB
        np.testing.assert_allclose(linear_to_srgb(bars[-1, column]), ends[0.0], atol=0.03)
        np.testing.assert_allclose(linear_to_srgb(bars[0, column]), ends[1.0], atol=0.03)
        luminance = bars[:, column] @ np.array([0.2126, 0.7152, 0.0722])
        assert np.all(np.diff(luminance[::-1]) > 0), "luminance must rise with the value"


def test_heatmap_pixels_follow_values(make_trainer):
    trainer = make_trainer(eval_grid=32)
    trainer.train(30)
    images = HeatmapImages(GridEvaluator(trainer, 32))
    images.draw_now()
    atlas = _texture_rgb(images.atlas)
    evaluation = images.evaluator.read()
    bars = _texture_rgb(images.colorbars)[::-1]  # bottom = 0
    assert atlas.shape == (4 * 32, 12 * 32, 3)  # values, d/dx, d/dy, |grad f|: 3 panels each

    def lookup(column, t):
        return bars[np.clip((t * COLORBAR_HEIGHT).astype(int), 0, COLORBAR_HEIGHT - 1), column]

    for output in range(4):
        lo, hi = images.value_ranges[0, output]
        rows = atlas[output * 32 : (output + 1) * 32][::-1]  # image rows run top-down, grid j bottom-up
        truth_t = np.clip((evaluation.truths[..., output] - lo) / (hi - lo), 0, 1)
        learned_t = np.clip((evaluation.predictions[..., output] - lo) / (hi - lo), 0, 1)
        error_t = (
            np.abs(evaluation.predictions[..., output] - evaluation.truths[..., output])
            / evaluation.error_max[0, output]
        )
        np.testing.assert_allclose(rows[:, :32], lookup(0, truth_t), atol=0.03)
        np.testing.assert_allclose(rows[:, 32:64], lookup(0, learned_t), atol=0.03)
        np.testing.assert_allclose(rows[:, 64:96], lookup(1, error_t), atol=0.03)
    assert not np.allclose(atlas[:, :32], atlas[:, 32:64]), "an imperfect network differs from the truth"


def test_frame_readback_matches_direct_reads(make_trainer, gpu):
    """A frame's one-copy readback returns the same losses and eval summary as direct reads,
    also when the loss ring wraps."""
    from app.train.loss_ring import LOSS_HISTORY

    trainer = make_trainer(batch_size=64, eval_grid=16)
    evaluator = GridEvaluator(trainer, 16)
    trainer.step = LOSS_HISTORY - 3  # the next 7 steps wrap around the ring
    with gpu.submit() as encoder:
        steps = trainer.record_steps(encoder, 7)
        assert evaluator.record(encoder)
        evaluator.record_summary(encoder)
        trainer.losses.record_readback(encoder, steps)
    losses = trainer.losses.read()
    ring = gpu.read(trainer.losses.buffer, LOSS_HISTORY)
    np.testing.assert_array_equal(losses, ring[np.arange(steps.start, steps.stop) % LOSS_HISTORY])
    assert losses.shape == (7,) and np.all(losses > 0)
    summary = evaluator.read_summary()
    assert not summary.invalid.any()
    evaluation = evaluator.read()
    np.testing.assert_array_equal(summary.error_max, evaluation.error_max)
    assert summary.loss == pytest.approx(evaluation.loss) and evaluation.step == LOSS_HISTORY + 4
    assert summary.grad_loss == pytest.approx(evaluation.grad_loss) and summary.grad_loss > 0
