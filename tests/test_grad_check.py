"""The gradient check: on every activation (hidden and output) and both precisions it passes, with
the training kernels' gradient read exactly; the independent SlangPy path agrees with a float64
numpy backward pass; and a wrong gradient fails it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import gpu_loss_and_gradient, run_headless_here
from reference import loss_and_gradient, sample_points, truth_values

from app.check import grad_check, grad_reference

# Every activation appears in each precision, hidden or at the output.
NETWORKS = {
    "float: leaky_relu, identity": dict(),
    "float: relu (fourier, 2 layers)": dict(encoding="fourier", frequencies=3, activation="relu", hidden=[24, 16]),
    "float: sin, tanh": dict(encoding="raw", activation="sin", output_activation="tanh"),
    "float: sigmoid (3 layers)": dict(activation="sigmoid", hidden=[12, 12, 12]),
    "float: softplus, silu": dict(activation="softplus", output_activation="silu"),
    "half: tanh, identity": dict(precision="half", activation="tanh"),
    "half: leaky_relu, sigmoid": dict(precision="half", output_activation="sigmoid"),
    "half: relu, sin": dict(precision="half", activation="relu", output_activation="sin"),
    "half: silu, softplus": dict(precision="half", activation="silu", output_activation="softplus"),
}


@pytest.mark.parametrize("name", NETWORKS)
def test_gradient_check_passes_on_every_activation_and_precision(make_trainer, name):
    trainer = make_trainer(seed=6, **NETWORKS[name])
    trainer.train(5)
    before = trainer.parameters()
    step = trainer.step
    check = grad_check.run(trainer)
    assert check.passed, check.line() + "; " + check.detail()
    assert check.parameters == trainer.plan.param_count and check.fd_parameters == 2 * len(trainer.plan.layers)
    assert check.error <= grad_check.TOLERANCE[trainer.config.precision] and check.fd_error <= grad_check.FD_TOLERANCE
    assert np.array_equal(trainer.parameters(), before) and trainer.step == step, "the network is left as it was"
    trainer.train(1)  # and it still trains
    assert trainer.step == step + 1


def test_reference_path_matches_a_float64_numpy_backward_pass(make_trainer, gpu):
    trainer = make_trainer(seed=3, **NETWORKS["float: sin, tanh"])
    c = trainer.config
    path = grad_reference.ReferencePath(gpu, trainer.plan)
    # the device it chose computes squaredError's gradient as its closed form says
    assert grad_reference._bwds_works(path.module, path.device, trainer.plan.output_dim)
    inputs, truths = path.batch(c.seed, 4, c.domain)
    x, y = sample_points(c.seed, 4, grad_check.CHECK_BATCH, c.domain)
    np.testing.assert_allclose(truths, truth_values(c, x, y), rtol=1e-5, atol=1e-6)
    loss, gradient = path.gradient(trainer.parameters(), inputs, truths)
    ref_loss, ref_gradient = loss_and_gradient(c, trainer.parameters(), x, y, truth_values(c, x, y))
    assert loss == pytest.approx(ref_loss, rel=1e-5)
    assert np.abs(gradient - ref_gradient).max() < 1e-5 * np.abs(ref_gradient).max()


def test_training_gradient_is_read_exactly(make_trainer):
    """The gradient check's read of the training gradient (an SGD step at a learning rate of
    2^24: grad_check.training_gradient) against learnGradient's own slot sums (tests/helpers.py)
    and numpy."""
    trainer = make_trainer(batch_size=grad_check.CHECK_BATCH, seed=8)
    exact = grad_check.training_gradient(trainer, 0)
    _, sums = gpu_loss_and_gradient(trainer)
    c = trainer.config
    x, y = sample_points(c.seed, 0, c.batch_size, c.domain)
    _, reference = loss_and_gradient(c, trainer.parameters(), x, y, truth_values(c, x, y))
    assert np.abs(exact - reference).max() < 2e-6 * np.abs(reference).max()
    # Element by element: float32 summation noise in the kernels (a few 1e-6 of each gradient)
    # is all either read adds.
    relative = lambda g: (np.abs(g - reference) / np.abs(reference)).max()  # noqa: E731
    assert relative(exact) < 1e-5 and relative(sums) < 1e-5
    assert np.abs(exact - sums).max() < 1e-6 * np.abs(sums).max(), "the 2^24 step reads the slots' sums"


def test_both_paths_stay_within_the_tolerance_of_float64_on_a_trained_network(make_trainer, gpu):
    """Trained, the per-sample terms cancel: the float32 noise the float tolerance must allow."""
    trainer = make_trainer(seed=6)
    trainer.train(1000)
    c, params = trainer.config, trainer.parameters()
    x, y = sample_points(c.seed, trainer.step, grad_check.CHECK_BATCH, c.domain)
    _, exact = loss_and_gradient(c, params, x, y, truth_values(c, x, y))
    path = grad_reference.ReferencePath(gpu, trainer.plan)
    _, reference = path.gradient(params, *path.batch(c.seed, trainer.step, c.domain))
    training = grad_check.training_gradient(trainer, trainer.step)
    for gradient in (training, reference):
        assert grad_check.relative_errors(gradient, exact).max() < 0.2 * grad_check.TOLERANCE["float"]
    assert grad_check.run(trainer).passed


@pytest.mark.parametrize("corrupt", ["zeros", "one layer doubled", "one parameter off by 5%"])
def test_a_wrong_gradient_fails_the_check(make_trainer, monkeypatch, corrupt):
    trainer = make_trainer(seed=6)
    honest = grad_check.training_gradient

    def wrong(trainer, step):
        gradient = honest(trainer, step)
        if corrupt == "zeros":
            return np.zeros_like(gradient)
        if corrupt == "one layer doubled":
            layer = trainer.plan.layers[1]
            gradient[layer.offset : layer.end] *= 2
            return gradient
        index = int(np.argmax(np.abs(gradient)))
        gradient[index] *= 1.05
        return gradient

    monkeypatch.setattr(grad_check, "training_gradient", wrong)
    check = grad_check.run(trainer)
    assert not check.passed and check.error > grad_check.TOLERANCE["float"], check.line()


def test_finite_differences_are_float64_and_step_around_kinks(make_trainer, gpu):
    """The default leaky-ReLU network at step 132, where float32 differences of the GPU's loss at
    h = 1e-3 were 5.4% out (a step carried samples across kinks; smaller steps drown in float32
    rounding): the float64 differences agree with the SlangPy path, whose loss the numpy twin
    matches, and a step that would cross a kink is cut."""
    trainer = make_trainer()
    trainer.train(132)
    check = grad_check.run(trainer)
    assert check.passed and check.fd_error < 1e-4, check.detail()
    path = grad_reference.ReferencePath(gpu, trainer.plan)
    points, truths = path.batch(trainer.config.seed, trainer.step, trainer.config.domain)
    params = trainer.parameters().astype(np.float64)
    inputs = path.inputs(params, points).astype(np.float64)
    loss, gradient = path.gradient(trainer.parameters(), points, truths)
    assert grad_check.numpy_loss(path, params, inputs, truths)[0] == pytest.approx(loss, rel=1e-5)
    # The first layer's weight with the largest gradient: steps of 1e-3 cross kinks there.
    layer = trainer.plan.layers[0]
    index = layer.offset + int(np.argmax(np.abs(gradient[layer.offset : layer.bias_offset])))
    _, sides = grad_check.numpy_loss(path, params, inputs, truths)
    wide = params.copy()
    wide[index] += 1e-3
    assert not all(np.array_equal(a, b) for a, b in zip(sides, grad_check.numpy_loss(path, wide, inputs, truths)[1]))
    numeric = grad_check._central_difference(path, params, index, inputs, truths, sides)
    assert numeric == pytest.approx(gradient[index], rel=1e-4)


def test_a_wrong_reference_gradient_fails_the_finite_differences(make_trainer, monkeypatch):
    honest = grad_reference.ReferencePath.gradient

    def wrong(self, params, points, truths):
        loss, gradient = honest(self, params, points, truths)
        layer = self.plan.layers[-1]
        gradient[layer.bias_offset : layer.end] *= 1.05
        return loss, gradient

    monkeypatch.setattr(grad_reference.ReferencePath, "gradient", wrong)
    check = grad_check.run(make_trainer(seed=6))
    assert not check.passed and check.fd_error == pytest.approx(0.05 / 1.05, rel=1e-2), check.line()


def test_command_line_grad_check_after_a_headless_run(gpu, tmp_path):
    out = tmp_path / "run"
    result = run_headless_here(gpu, tmp_path, "--iterations", "20", "--grad-check", "--out", str(out))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    at = next(k for k, line in enumerate(lines) if line.startswith("grad-check: "))  # sgl may log before it
    assert lines[at].startswith("grad-check: max relative error ") and lines[at].endswith(" over 148 parameters")
    error = float(lines[at].split("error ")[1].split(" over")[0])
    assert error <= grad_check.TOLERANCE["float"] and "passed" in lines[at + 1]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["grad_check"]["passed"] and summary["grad_check"]["step"] == 20
    assert summary["grad_check"]["max_relative_error"] == pytest.approx(error, rel=1e-2)


def test_command_line_grad_check_exits_4_when_it_fails(monkeypatch, capsys):
    """--grad-check alone (no window, the initial network), with the training gradient zeroed."""
    from app.entry import cli

    monkeypatch.setattr(grad_check, "training_gradient", lambda trainer, step: np.zeros(trainer.plan.param_count))
    assert cli.main(["--grad-check"]) == 4
    out = capsys.readouterr().out
    assert out.startswith("grad-check: max relative error 1 over 148 parameters") and "FAILED" in out


def test_a_shapes_value_check_reads_its_distance_grid(make_trainer, gpu):
    """--sdf without derivative terms: the SlangPy path's truth is the shape's distance (it was 0,
    and the check failed at 4.8), here the circle's |p| - 0.5 within the 512 grid's bilinear error."""
    trainer = make_trainer(sdf="circle", seed=6)
    trainer.train(5)
    check = grad_check.run(trainer)
    assert check.passed and not check.nested, check.line() + "; " + check.detail()
    c = trainer.config
    path = grad_reference.ReferencePath(gpu, trainer.plan)
    points, truths = path.batch(c.seed, trainer.step, c.domain)
    np.testing.assert_allclose(truths[:, 0], np.hypot(points[:, 0], points[:, 1]) - 0.5, atol=1e-3)
