"""The neuron views: every neuron's value over the domain, as the grid evaluation writes it,
against each layer's activations computed in numpy from network.json; their ranges; the atlas."""

from __future__ import annotations

import numpy as np
import pytest
from reference import kernel_parameters, layer_outputs

from app.views.evaluation import GridEvaluator, neuron_side, neuron_stride
from app.views.heatmaps import COLORBAR_HEIGHT, HeatmapImages
from app.views.neurons import from_ordered_bits, neuron_points


def _numpy_neurons(trainer, grid):
    """Every neuron's value at the neuron grid's points, in plan order: (neurons, N, N), from
    tests/reference.py's numpy."""
    config = trainer.config
    x, y = neuron_points(config.domain, grid)
    columns = layer_outputs(config, kernel_parameters(config, trainer.parameters()), x.ravel(), y.ravel())
    n = x.shape[0]
    return np.concatenate(columns, axis=1).T.reshape(-1, n, n)


@pytest.mark.parametrize(
    "fields,grid",
    [
        (dict(), 64),  # stride 2: 32 x 32 images
        (dict(encoding="fourier", frequencies=3, activation="relu", hidden=[24, 16]), 24),
        (dict(activation="tanh", precision="half"), 40),
    ],
    ids=["tutorial", "fourier-relu", "half"],
)
def test_neuron_values_match_numpy_activations(make_trainer, fields, grid):
    trainer = make_trainer(seed=4, **fields)
    trainer.train(20)
    images = HeatmapImages(GridEvaluator(trainer, grid))
    images.draw_now()
    values = images.neurons.values()
    expected = _numpy_neurons(trainer, grid)
    assert values.shape == expected.shape == (trainer.plan.neuron_count, neuron_side(grid), neuron_side(grid))
    assert neuron_side(grid) <= 32 and neuron_stride(grid) == -(-grid // 32)
    tolerance = 2e-2 if trainer.config.precision == "half" else 1e-4
    scale = np.abs(expected).max(axis=(1, 2), keepdims=True) + 1e-6
    assert np.all(np.abs(values - expected) <= tolerance * scale), np.abs(values - expected).max()
    hidden = values[trainer.plan.input_dim : trainer.plan.neuron_count - trainer.plan.output_dim]
    assert np.all(hidden.std(axis=(1, 2)) > 1e-4), "every hidden neuron varies over the domain"
    ranges = images.neurons.ranges()
    np.testing.assert_allclose(ranges[:, 0], values.min(axis=(1, 2)), rtol=1e-6)
    np.testing.assert_allclose(ranges[:, 1], values.max(axis=(1, 2)), rtol=1e-6)


def test_neuron_atlas_pixels_follow_each_neurons_own_scale(make_trainer):
    trainer = make_trainer(seed=2)  # LeakyReLU: some neurons are negative everywhere
    trainer.train(10)
    images = HeatmapImages(GridEvaluator(trainer, 32))
    images.draw_now()
    neurons = images.neurons
    values, ranges = neurons.values(), neurons.ranges()
    atlas = np.asarray(neurons.atlas.to_numpy(), np.float32)[..., :3]
    bars = np.asarray(images.colorbars.to_numpy(), np.float32)[::-1, 2, :3]  # the diverging map, bottom = 0
    side = neurons.side
    for neuron in range(neurons.count):
        row, column = divmod(neuron, neurons.columns)
        tile = atlas[row * side : (row + 1) * side, column * side : (column + 1) * side][::-1]
        top = np.abs(ranges[neuron]).max()
        t = np.clip(0.5 + 0.5 * values[neuron] / top, 0, 1)
        expected = bars[np.clip((t * COLORBAR_HEIGHT).astype(int), 0, COLORBAR_HEIGHT - 1)]
        np.testing.assert_allclose(tile, expected, atol=0.03)
        u0, v0, u1, v1 = neurons.tile(neuron)
        assert (u0 * atlas.shape[1], v0 * atlas.shape[0]) == (column * side, row * side)


def test_ordered_bits_round_trip():
    """The uint order the range atomics rely on, undone on the host."""
    values = np.array([-np.inf, -3.5, -1e-30, -0.0, 0.0, 2e-38, 1.0, 7.25e10], np.float32)
    bits = values.view(np.uint32)
    ordered = np.where((bits & 0x80000000) != 0, ~bits, bits | 0x80000000).astype(np.uint32)
    assert np.all(np.diff(ordered.astype(np.int64)) >= 0), "unsigned order is float order"
    np.testing.assert_array_equal(from_ordered_bits(ordered), values)
