"""The gradient check of the nested loss (--grad-weight, --eikonal): the training kernels' gradient
of the whole loss against central differences of app/check/nested_loss.py's float64 numpy twin.
It passes on every smooth activation, encoding and precision and on each truth with a numpy twin,
the twin equals tests/test_derivative_loss.py's loss written from tests/reference.py, and a wrong
gradient or a wrong term weight fails it."""

from __future__ import annotations

import json

import numpy as np
import pytest
import slangpy as spy
from helpers import run_headless_here
from reference import sample_points, truth_gradient, truth_values
from test_derivative_loss import nested_loss as reference_nested_loss

from app.check import grad_check, nested_loss
from app.config.config import Config, validate
from app.errors import UserError
from app.kernels.planning import plan_for
from app.model.activations import ACTIVATIONS
from app.truth import image_truth

TARGETS = ["sin(3*x)*cos(2*y)", "x*y + 0.5*x"]
TERMS = dict(grad_weight=0.7, eikonal=0.2)


# The full 4 x 2 x 2 matrix ran and passed when it was written (worst error 4.4e-6 in float, 9.8e-3
# in half); these four keep each activation, encoding and precision, for a quarter of CI's time
@pytest.mark.parametrize(
    "activation,encoding,precision",
    [
        ("tanh", "poly2", "float"),
        ("softplus", "fourier", "half"),
        ("silu", "fourier", "float"),
        ("sin", "poly2", "half"),
    ],
)
def test_the_nested_check_passes(make_trainer, activation, encoding, precision):
    trainer = make_trainer(
        activation=activation, encoding=encoding, frequencies=2, hidden=[8], targets=TARGETS, precision=precision,
        batch_size=512, seed=6, **TERMS,
    )  # fmt: skip
    trainer.train(5)
    before, step = trainer.parameters(), trainer.step
    check = grad_check.run(trainer)
    assert check.passed, check.line() + "; " + check.detail()
    assert check.nested == "value + 0.7 x Sobolev + 0.2 x eikonal"
    assert check.fd_parameters == check.parameters == trainer.plan.param_count, "every parameter differenced"
    assert check.error <= grad_check.TOLERANCE[precision]
    assert np.array_equal(trainer.parameters(), before) and trainer.step == step, "the network is left as it was"


def _smooth_image(tmp_path) -> dict:
    u, v = np.meshgrid(np.linspace(0, 1, 24), np.linspace(0, 1, 16))
    pixels = np.stack([255 * u, 255 * v * v, 128 + 100 * np.sin(6 * u) * v], axis=2)
    spy.Bitmap(pixels.round().astype(np.uint8)).write(str(tmp_path / "smooth.png"))
    info, _ = image_truth.load(tmp_path / "smooth.png")
    return info


def _ellipse_csv(tmp_path) -> str:
    """200 points of an ellipse with their outward normals, as a points file (x,y,nx,ny)."""
    t = np.linspace(0, 2 * np.pi, 200, endpoint=False)
    rows = np.stack([0.6 * np.cos(t), 0.35 * np.sin(t), 0.35 * np.cos(t), 0.6 * np.sin(t)], axis=1)
    path = tmp_path / "ellipse.csv"
    path.write_text("x,y,nx,ny\n" + "\n".join(",".join(f"{v:.6f}" for v in row) for row in rows))
    return str(path)


@pytest.mark.parametrize("truth", ["circle, eikonal", "circle, Sobolev", "image, Sobolev", "csv, normal alignment"])
def test_the_nested_check_passes_on_each_truth(make_trainer, tmp_path, truth):
    """The shape's distance grid and the image, read bilinearly by the kernels, against their numpy
    twins' bilinear reads (app/check/truth_twin.py); the normal alignment at the boundary samples
    the kernels draw (app/check/sample_twin.py draws the same)."""
    if truth.startswith("image"):
        fields = dict(image=_smooth_image(tmp_path), domain=image_truth.aspect_domain(24, 16), grad_weight=0.5)
    elif truth.startswith("csv"):
        fields = dict(sdf=_ellipse_csv(tmp_path), normal_weight=1.0, eikonal=0.1)
    else:
        fields = dict(sdf="circle", **({"eikonal": 0.1} if "eikonal" in truth else {"grad_weight": 1.0}))
    trainer = make_trainer(activation="softplus", hidden=[8], batch_size=512, seed=2, **fields)
    trainer.train(20)
    check = grad_check.run(trainer)
    assert check.passed and check.nested, check.line() + "; " + check.detail()
    assert check.error < 1e-4, check.detail()  # float32 sums of a small network: far inside 1e-2


def test_the_twin_is_the_loss_written_from_the_definition(gpu):
    """app/check/nested_loss.py against tests/test_derivative_loss.py's nested loss (tests/reference.py's
    own forward mode, the targets' gradient by its own central differences) at random weights."""
    for encoding in ("poly2", "fourier", "raw"):
        config = validate(
            Config(activation="silu", encoding=encoding, frequencies=3, hidden=[6, 5], targets=TARGETS, **TERMS)
        )
        plan = plan_for(config)
        params = np.random.default_rng(1).normal(0, 0.7, plan.param_count)
        x, y = sample_points(0, 3, 256, config.domain)
        points = np.stack([x, y], axis=1)
        twin, _ = nested_loss.nested_loss(plan, params, nested_loss.nested_batch(plan, config, points))
        expected = reference_nested_loss(config, params, x, y, truth_values(config, x, y), truth_gradient(config, x, y))
        assert twin == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_each_activations_derivative_is_its_slope(name):
    """Every activation has a derivative in the twin, equal to central differences of its numpy
    function (away from a ReLU's kink)."""
    activation = ACTIVATIONS[name]
    z = np.concatenate([np.linspace(-6, -0.01, 300), np.linspace(0.01, 6, 300), [-40.0, 40.0]])
    h = 1e-6
    slope = (activation.numpy(z + h, **activation.params) - activation.numpy(z - h, **activation.params)) / (2 * h)
    np.testing.assert_allclose(nested_loss.DERIVATIVES[name](z), slope, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(
    "fault", ["kernels' gradient zero", "grad_weight x 1.1", "eikonal x 1.1", "normal_weight x 1.1"]
)
def test_a_wrong_nested_gradient_fails_the_check(make_trainer, monkeypatch, fault):
    """The kernels' gradient zeroed, or the numpy twin given a Sobolev, eikonal or normal alignment
    weight 10% off the kernels': any term 10% wrong moves the gradient far past the tolerance."""
    truth = dict(sdf="circle", normal_weight=0.7, eikonal=0.2) if "normal" in fault else dict(targets=TARGETS, **TERMS)
    trainer = make_trainer(activation="tanh", hidden=[8], batch_size=512, seed=6, **truth)
    trainer.train(5)
    if fault.startswith("kernels"):
        monkeypatch.setattr(grad_check, "training_gradient", lambda trainer, step: np.zeros(trainer.plan.param_count))
    else:
        honest, term = nested_loss.nested_batch, fault.split()[0]

        def off(plan, config, points, normals=None):
            batch = honest(plan, config, points, normals)
            setattr(batch, term, 1.1 * getattr(batch, term))
            return batch

        monkeypatch.setattr(grad_check, "nested_batch", off)
    check = grad_check.run(trainer)
    assert not check.passed and check.error > 5 * grad_check.TOLERANCE["float"], check.line()


def test_a_slang_file_truth_is_one_line(make_trainer, tmp_path):
    source = (
        "static const int TARGET_COUNT = 1;\n[Differentiable]\nfloat target(float2 p, int k) { return p.x * p.y; }\n"
    )
    (tmp_path / "t.slang").write_text(source)
    slang_target = {"file": str(tmp_path / "t.slang"), "source": source, "count": 1}
    trainer = make_trainer(slang_target=slang_target, hidden=[4], grad_weight=1.0, batch_size=256)
    with pytest.raises(UserError, match="a Slang file's target has none") as error:
        grad_check.run(trainer)
    assert "\n" not in str(error.value)


def test_command_line_grad_check_of_an_eikonal_run(gpu, tmp_path):
    out = tmp_path / "run"
    args = ["--sdf", "circle", "--preset", "default", "--eikonal", "0.1", "--iterations", "20", "--batch-size", "1024"]
    result = run_headless_here(gpu, tmp_path, *args, "--grad-check", "--out", str(out))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    at = next(k for k, line in enumerate(lines) if line.startswith("grad-check: "))
    assert lines[at].endswith(" over 97 parameters"), lines[at]
    assert "whole loss (value + 0.1 x eikonal)" in lines[at + 1] and lines[at + 1].endswith(": passed")
    summary = json.loads((out / "summary.json").read_text())["grad_check"]
    assert summary["passed"] and summary["nested_loss"] == "value + 0.1 x eikonal"
    assert summary["finite_difference_parameters"] == 97 and summary["max_relative_error"] < 1e-4
