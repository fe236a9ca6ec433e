"""The standalone Slang export, compiled on its own in a separate SlangPy device whose include path
does not reach the app's shaders: its outputs against a float64 numpy forward pass and the app's
own predictions, and its bwd_diff and fwd_diff input gradients against an analytic numpy
chain rule."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import slangpy as spy
from reference import forward, forward_with_input_gradients, grid_centres

from app.config.config import Config, validate
from app.files.export_slang import evaluated_parameters, trainer_source
from app.files.network_io import export_network
from app.files.network_io import forward as network_forward
from app.train.trainer import Trainer
from app.truth.shapes import shape_distance
from app.views.evaluation import GridEvaluator

CONFIGS = {
    "float, tutorial network": dict(),
    "half, tutorial network": dict(precision="half"),
    "fourier, tanh, sigmoid output": dict(
        encoding="fourier", frequencies=2, hidden=[12, 8], activation="tanh", output_activation="sigmoid"
    ),
    "raw, sin, three layers": dict(encoding="raw", activation="sin", hidden=[8, 8, 8]),
    "raw, softplus hidden, silu output": dict(
        encoding="raw", activation="softplus", output_activation="silu", hidden=[8, 8]
    ),
    "raw, silu hidden, softplus output": dict(
        encoding="raw", activation="silu", output_activation="softplus", hidden=[8, 8]
    ),
    "relu, two targets, other domain": dict(
        activation="relu", hidden=[24], targets=["x*y", "sin(3*x) + y"], domain=[0.0, 2.0, -0.5, 0.5]
    ),
}
HARNESS = """
import {module};

float output_k(float2 xy, int k) {{ float o[TRAINED_OUTPUTS]; trained_network(xy, o); return o[k]; }}

[Differentiable]
float chosen(float2 xy, no_diff int k) {{ float o[TRAINED_OUTPUTS]; trained_network(xy, o); return o[k]; }}

float2 bwd_k(float2 xy, int k) {{ var p = diffPair(xy); bwd_diff(chosen)(p, k, 1.0); return p.d; }}

float2 fwd_k(float2 xy, int k)
{{
    return float2(fwd_diff(chosen)(diffPair(xy, float2(1.0, 0.0)), k).d,
                  fwd_diff(chosen)(diffPair(xy, float2(0.0, 1.0)), k).d);
}}

// A differentiable loop over the outputs, through the returning form the export recommends.
[Differentiable]
float looped(float2 xy, no_diff int k)
{{
    let o = trained_network_outputs(xy);
    float sum = 0.0;
    for (int j = 0; j < TRAINED_OUTPUTS; j++)
        sum += (j == k ? 1.0 : 0.0) * o[j];
    return sum;
}}

float2 looped_bwd_k(float2 xy, int k) {{ var p = diffPair(xy); bwd_diff(looped)(p, k, 1.0); return p.d; }}
"""
_names = itertools.count()


@pytest.fixture(scope="module")
def separate_device(gpu):
    """A second device with SlangPy's own include path only: the export must need nothing else."""
    return spy.create_device(type=gpu.device.info.type, enable_hot_reload=False)


def _compile(device, source: str) -> spy.Module:
    name = f"exported_network_{next(_names)}"
    device.load_module_from_source(name, source)  # the file alone
    return spy.Module(device.load_module_from_source(f"{name}_harness", HARNESS.format(module=name)))


def _per_output(function, xy: np.ndarray, outputs: int) -> np.ndarray:
    return np.stack([function(xy, k, _result="numpy") for k in range(outputs)], axis=1)


@pytest.fixture(scope="module", params=list(CONFIGS))
def exported(request, gpu, separate_device):
    trainer = Trainer(gpu, validate(Config(seed=4, batch_size=512, **CONFIGS[request.param])))
    trainer.train(30)
    source = trainer_source(trainer)
    return trainer, source, _compile(separate_device, source)


def _points(config: Config, count: int = 256) -> np.ndarray:
    x0, x1, y0, y1 = config.domain
    rng = np.random.default_rng(11)
    return np.stack([rng.uniform(x0, x1, count), rng.uniform(y0, y1, count)], axis=1).astype(np.float32)


def test_source_is_standalone_with_the_promised_signature(exported):
    trainer, source, _ = exported
    assert "#include" not in source and "\nimport " not in source
    assert f"static const int TRAINED_OUTPUTS = {trainer.plan.output_dim};" in source
    assert "[Differentiable]\nvoid trained_network(float2 xy, out float outputs[TRAINED_OUTPUTS])" in source


def test_outputs_match_numpy_to_float_precision(exported):
    """The export bakes in the weights the app evaluates with (the half copy for half networks);
    numpy evaluates the same weights in float64. Float32 arithmetic through a few layers of
    O(1) values stays within ~1e-6; 2e-5 leaves room and still fails on one wrong weight."""
    trainer, _, module = exported
    xy = _points(trainer.config)
    network = export_network(trainer.plan, trainer.config, evaluated_parameters(trainer))
    reference = network_forward(network, xy[:, 0], xy[:, 1])
    outputs = _per_output(module.output_k, xy, trainer.plan.output_dim)
    assert np.max(np.abs(outputs - reference)) <= 2e-5 * max(1.0, np.max(np.abs(reference)))


def test_outputs_match_the_apps_own_predictions(exported):
    """At the grid's cell centres, against the app's evaluation kernel. Float: the same sums in
    the same order, so float precision. Half: the app computes in half arithmetic (11-bit
    significands) and the export in float, so they differ by half rounding: 2% of the output
    range bounds what a few half-precision layers accumulate."""
    trainer, _, module = exported
    grid = 16
    evaluation = GridEvaluator(trainer, grid).evaluate()
    gx, gy = grid_centres(trainer.config.domain, grid)
    xy = np.stack([gx.ravel(), gy.ravel()], axis=1).astype(np.float32)
    app = evaluation.predictions.reshape(-1, trainer.plan.output_dim)
    outputs = _per_output(module.output_k, xy, trainer.plan.output_dim)
    scale = max(1.0, np.max(np.abs(app)))
    tolerance = 2e-2 if trainer.config.precision == "half" else 2e-5
    assert np.max(np.abs(outputs - app)) <= tolerance * scale


@pytest.mark.parametrize("mode", ["bwd_k", "fwd_k", "looped_bwd_k"])
def test_input_gradients_match_the_chain_rule(exported, mode):
    """d outputs / d (x, y) from bwd_diff, fwd_diff, and bwd_diff through a loop over
    trained_network_outputs, against float64 numpy. Points within 1e-4 of a (leaky) ReLU kink
    are left out: there float32 and float64 may fall on different sides."""
    trainer, _, module = exported
    xy = _points(trainer.config)
    _, jacobian, kink = forward_with_input_gradients(trainer.config, evaluated_parameters(trainer), xy[:, 0], xy[:, 1])
    gradients = _per_output(getattr(module, mode), xy, trainer.plan.output_dim)
    kinked = any(layer.activation.relu_like for layer in trainer.plan.layers)
    keep = kink > 1e-4 if kinked else np.ones(len(xy), bool)
    assert np.count_nonzero(keep) > 200, "enough points away from a kink to compare"
    scale = max(1.0, np.max(np.abs(jacobian)))
    assert np.max(np.abs(gradients[keep] - jacobian[keep])) <= 1e-4 * scale


@pytest.fixture(scope="module")
def exported_circle(gpu, separate_device):
    """A short training on the circle's signed distance (radius 0.5) with the eikonal term, exported
    and compiled alone: the file's own module, with no harness."""
    trainer = Trainer(gpu, validate(Config(sdf="circle", eikonal=0.1, seed=4, batch_size=1024)))
    trainer.train(200)
    source = trainer_source(trainer)
    name = f"exported_sdf_{next(_names)}"
    return trainer, source, spy.Module(separate_device.load_module_from_source(name, source))


def test_sdf_export_is_the_networks_output(exported_circle):
    """sdf(p) at random points against tests/reference.py's float64 forward pass of the same
    weights: float32 through two layers of O(1) values, 1e-5."""
    trainer, _, module = exported_circle
    xy = _points(trainer.config, 1024)
    reference = forward(trainer.config, evaluated_parameters(trainer), xy[:, 0], xy[:, 1])[:, 0]
    distances = module.sdf(xy, _result="numpy")
    assert distances.shape == (1024,)
    assert np.max(np.abs(distances - reference)) <= 1e-5 * max(1.0, np.max(np.abs(reference)))


def test_sdf_export_is_negative_inside_the_circle(exported_circle):
    """Its sign is the shape's (shape_distance, the circle in closed form) wherever the true
    distance is more than 0.2 from the boundary: about 60% of the domain, both signs present."""
    trainer, _, module = exported_circle
    xy = _points(trainer.config, 4096)
    truth = shape_distance("circle", xy.astype(np.float64))
    far = np.abs(truth) > 0.2
    assert np.count_nonzero(far & (truth < 0)) > 100 and np.count_nonzero(far & (truth > 0)) > 1000
    distances = module.sdf(xy, _result="numpy")
    assert np.array_equal(np.sign(distances[far]), np.sign(truth[far]))


def test_sdf_export_header_says_what_it_was_trained_on(exported_circle):
    _, source, _ = exported_circle
    header = source.split("static const int")[0]
    assert 'trained on the shape "circle" (--sdf)' in header and "NEGATIVE INSIDE" in header
    assert "only meaningful in the domain, x in [-1, 1], y in [-1, 1]" in header
    assert "eikonal weight 0.1" in header and "outputs[0] ~ the signed distance" in header
    assert "[Differentiable]\nfloat sdf(float2 p)" in source


def test_only_a_distance_field_exports_sdf(exported):
    _, source, _ = exported
    assert "float sdf(" not in source and "NEGATIVE INSIDE" not in source
