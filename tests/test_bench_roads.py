"""The cooperative-vector roads' benchmark (app/bench/roads.py): its numpy reference, which the
H200 run checks each road's gradients against, and its refusal where there are no cooperative
vectors (lavapipe)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import slangpy as spy
from helpers import run_app

from app.bench import chain_probe, coopvec_road, roads

ROOT = Path(__file__).resolve().parent.parent


def _loss(params: np.ndarray, points: np.ndarray) -> float:
    """The roads' loss, written out independently: sum over samples of the mean over the four
    outputs of the squared error, through 16-64-64-64-16 with leaky ReLU."""
    weights = [params[at : at + i * o].reshape(o, i) for (i, o), at in zip(coopvec_road.LAYERS, coopvec_road.W_AT)]
    biases = [params[at : at + o] for (_, o), at in zip(coopvec_road.LAYERS, coopvec_road.B_AT)]
    h = np.zeros((len(points), 16))
    h[:, :2] = points
    for k in range(3):
        z = h @ weights[k].T + biases[k]
        h = np.where(z > 0, z, 0.01 * z)
    y = (h @ weights[3].T + biases[3])[:, :4]
    x, v = points[:, 0], points[:, 1]
    truth = np.stack([(x + v) / (1 + v * v), 2 * x + v, 0.5 * x * x + 1.2 * v, x + 0.5 * v * v], 1)
    return float(((y - truth) ** 2).sum() / 4)


def test_the_reference_gradients_match_finite_differences():
    rng = np.random.default_rng(0)
    params = coopvec_road.initial_parameters().astype(np.float64)
    for at, size in zip(coopvec_road.B_AT, (64, 64, 64, 4)):
        params[at : at + size] = 0.1 * rng.standard_normal(size)  # biases away from zero too
    points = rng.uniform(-1, 1, (32, 2))
    grads = coopvec_road.reference_gradients(params, points)
    chosen = [0, 1, 40, 1024, 1100, 5200, 6000, 9344, 9408, 9470, 10432, 10435]
    for index in chosen:
        step = np.zeros_like(params)
        step[index] = 1e-6
        fd = (_loss(params + step, points) - _loss(params - step, points)) / 2e-6
        assert abs(grads[index] - fd) <= 1e-6 * max(1.0, abs(fd)), (index, grads[index], fd)
    assert np.all(grads[:1024].reshape(64, 16)[:, 2:] == 0), "padded inputs get no gradient"
    assert np.all(grads[9408 + 4 * 64 : 10432] == 0) and np.all(grads[10436:] == 0), "nor do padded outputs"


def test_the_chain_reference_is_the_layers_in_turn():
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (8, 64)).astype(np.float16)
    w = (rng.standard_normal((64, 64)) / 8).astype(np.float16)
    one = x.astype(np.float64) @ w.astype(np.float64)
    one = np.maximum(one, 0.01 * one)
    assert np.array_equal(chain_probe._reference(x, w, 1), one)
    two = one.astype(np.float16).astype(np.float64) @ w.astype(np.float64)
    assert np.allclose(chain_probe._reference(x, w, 2), np.maximum(two, 0.01 * two))


def test_without_cooperative_vectors_it_says_so_in_one_line_and_exits_2(gpu, tmp_path):
    if gpu.device.has_feature(spy.Feature.cooperative_vector):
        pytest.skip("this device has cooperative vectors: the roads run (measured on the GPU machine)")
    result = run_app(gpu, tmp_path, main=roads.main)  # in this process, on the session's device
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip() == "error: this device has no cooperative vectors (Feature.cooperative_vector)"
