"""Training on derivatives: the kernels' gradient of the nested loss (Sobolev and eikonal terms,
bwd_diff of fwd_diff on the GPU) against central differences of a float64 numpy twin of the same
loss, written from its definition (tests/reference.py's forward mode; the truth's gradient by
central differences of the target in numpy, not from Slang)."""

import json

import numpy as np
import pytest
from helpers import gpu_loss_and_gradient, run_headless_here
from reference import derivative_loss, forward_with_input_gradients, sample_points, truth_gradient, truth_values

from app.config.config import Config, validate
from app.errors import UserError
from app.kernels.planning import plan_for


def nested_loss(config, params, x, y, truth, gradient_of_truth) -> float:
    out, gradient, _ = forward_with_input_gradients(config, params.astype(np.float64), x, y)
    return derivative_loss(config, out, gradient, truth, gradient_of_truth)


def numeric_gradient(config, params, step=0, h=1e-6):
    x, y = sample_points(config.seed, step, config.batch_size, config.domain)
    truth, gradient_of_truth = truth_values(config, x, y), truth_gradient(config, x, y)
    params = params.astype(np.float64)
    gradient = np.zeros_like(params)
    for i in range(params.size):
        plus, minus = params.copy(), params.copy()
        plus[i] += h
        minus[i] -= h
        gradient[i] = (
            nested_loss(config, plus, x, y, truth, gradient_of_truth)
            - nested_loss(config, minus, x, y, truth, gradient_of_truth)
        ) / (2 * h)
    return nested_loss(config, params, x, y, truth, gradient_of_truth), gradient


def _assert_close(gpu, ref, rel):
    scale = np.max(np.abs(ref))
    assert scale > 1e-6, "the reference gradient is zero: nothing is checked"
    error = np.max(np.abs(gpu - ref)) / scale
    assert error < rel, f"max error {error:.3g} of scale {scale:.3g}"


# The full matrix (tanh, sigmoid, sin, leaky_relu x poly2, raw, fourier) ran and passed when it was
# written; these six keep every activation, softplus and silu included, and every encoding, for CI
@pytest.mark.parametrize(
    "activation,encoding",
    [
        ("tanh", "poly2"),
        ("sigmoid", "raw"),
        ("sin", "fourier"),
        ("leaky_relu", "poly2"),
        ("softplus", "fourier"),
        ("silu", "raw"),
    ],
)
def test_sobolev_gradient_matches_numpy(make_trainer, activation, encoding):
    trainer = make_trainer(
        activation=activation,
        encoding=encoding,
        frequencies=1,
        hidden=[6],
        targets=["sin(3*x)*cos(2*y)", "x*y + 0.5*x"],
        grad_weight=0.7,
        batch_size=64,
        seed=3,
    )
    assert trainer.plan.gradient_path == "thread" and trainer.plan.derivatives
    gpu_l, gpu_g = gpu_loss_and_gradient(trainer)
    ref_l, ref_g = numeric_gradient(trainer.config, trainer.parameters())
    assert abs(gpu_l - ref_l) / ref_l < 1e-4
    assert np.count_nonzero(gpu_g) > 0.5 * gpu_g.size
    _assert_close(gpu_g, ref_g, 1e-3)


@pytest.mark.parametrize("terms", [dict(eikonal=0.5), dict(grad_weight=2.0, eikonal=0.25)])
def test_eikonal_gradient_on_group_tiles(make_trainer, terms):
    """A network past the thread accumulators' size: group tiles sum the three outer products."""
    trainer = make_trainer(
        activation="tanh",
        hidden=[24, 12],
        targets=["sqrt(x*x + y*y) - 0.5"],
        batch_size=96,
        seed=5,
        **terms,
    )
    assert trainer.plan.gradient_path == "group"
    gpu_l, gpu_g = gpu_loss_and_gradient(trainer)
    ref_l, ref_g = numeric_gradient(trainer.config, trainer.parameters())
    assert abs(gpu_l - ref_l) / ref_l < 1e-4
    _assert_close(gpu_g, ref_g, 1e-3)


def test_half_precision_gradient(make_trainer):
    trainer = make_trainer(
        activation="tanh", precision="half", hidden=[8], targets=["sin(3*x)*cos(2*y)"], grad_weight=1.0,
        batch_size=128, seed=2,
    )  # fmt: skip
    _, gpu_g = gpu_loss_and_gradient(trainer)
    params = trainer.parameters().astype(np.float16).astype(np.float64)
    _, ref_g = numeric_gradient(trainer.config, params)
    _assert_close(gpu_g, ref_g, 5e-2)  # half arithmetic: ~3 significant digits


def test_the_per_thread_paths_and_the_fused_trainer_train_on_derivatives():
    wide = validate(Config(hidden=[64, 64], precision="half", grad_weight=1.0))
    assert plan_for(wide, tensor_cores=True).gradient_path == "fused"  # its jets: paths/fused/fused_jets.slang
    assert plan_for(wide, tensor_cores=True, fused=False).gradient_path == "group"  # not the tiles on tensor cores
    assert plan_for(wide.replace(activation="silu"), tensor_cores=True).gradient_path == "group"  # no h -> act'
    assert plan_for(wide.replace(grad_weight=0.0), tensor_cores=True, fused=False).gradient_path == "tiles"
    small = validate(Config(hidden=[8], precision="half", eikonal=0.1))
    assert plan_for(small).gradient_path == "thread"  # not the half2 pairs, which have no nested pass
    assert plan_for(small.replace(eikonal=0.0)).gradient_path == "pairs"


@pytest.mark.parametrize(
    "fields,message",
    [
        (dict(dataset={"generator": "spiral"}), "a dataset's points have no gradient"),
        (dict(grad_weight=-1.0), "gradient weight must be between 0 and 100"),
    ],
)
def test_runs_that_cannot_take_derivative_terms(fields, message):
    with pytest.raises(UserError, match=message):
        validate(Config(**{"grad_weight": 1.0, **fields}))


def test_sobolev_training_fits_slopes(gpu, tmp_path):
    """The known effect, measured: with 256 samples a step and tanh, derivative supervision ends
    with a derivative eval loss at most half that of the value loss alone, after the same steps."""
    losses = {}
    for weight in ("0", "1"):
        out = tmp_path / f"weight{weight}"
        args = ["--target", "sin(3*x)*cos(2*y)", "--activation", "tanh", "--hidden", "16", "--batch-size", "256"]
        run = run_headless_here(gpu, tmp_path, *args, "--iterations", "300", "--grad-weight", weight, "--out", str(out))
        assert run.returncode == 0, run.stderr
        losses[weight] = json.loads((out / "summary.json").read_text())["eval_grad_loss"]
    assert losses["1"] <= 0.5 * losses["0"], losses


@pytest.mark.parametrize("activation", ["tanh", "sigmoid", "softplus", "silu"])
def test_saturated_neurons_keep_the_gradient_finite(make_trainer, activation):
    """Pre-activations of +-100 (past where e^z or cosh z overflows float) with the eikonal term:
    the activation's second derivative must not turn the step's gradient into NaN."""
    trainer = make_trainer(activation=activation, encoding="raw", hidden=[4], targets=["x"], eikonal=0.1, batch_size=64)
    params = trainer.parameters()
    first = trainer.plan.layers[0].bias_offset
    params[first : first + 2] = [100.0, -100.0]  # two hidden neurons' biases
    trainer.set_parameters(params)
    loss, gradient = gpu_loss_and_gradient(trainer)
    assert np.isfinite(loss) and np.all(np.isfinite(gradient)), gradient
    ref_loss, ref_gradient = numeric_gradient(trainer.config, params)  # float64 holds e^100 and cosh 100
    assert abs(loss - ref_loss) / ref_loss < 1e-4
    _assert_close(gradient, ref_gradient, 1e-3)
