"""Functions of (x, y, z) in the files a run writes: network.json's "z" and its numpy forward pass
against the GPU's evaluation, the standalone Slang export compiled on its own against that forward
pass, and --load-network of a 3D network (its dims and z range back)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import slangpy as spy
from helpers import run_app
from reference import grid_centres

from app.config.config import Config
from app.files.network_io import export_network, forward, load_network
from app.train.trainer import Trainer
from app.truth.targets import target_to_numpy
from app.views.evaluation import GridEvaluator

Z_RANGE = [0.0, 0.5]  # not the default: a z that went missing on the way would show
TARGETS = ["sqrt(x*x + y*y + z*z) - 0.5", "sin(3*z) + x*y"]
GRID = 16
HARNESS = """
import {module};

float output_k(float3 xyz, int k) {{ float o[TRAINED_OUTPUTS]; trained_network(xyz, o); return o[k]; }}

[Differentiable]
float chosen(float3 xyz, no_diff int k) {{ float o[TRAINED_OUTPUTS]; trained_network(xyz, o); return o[k]; }}

float3 bwd_k(float3 xyz, int k) {{ var p = diffPair(xyz); bwd_diff(chosen)(p, k, 1.0); return p.d; }}
"""


@pytest.fixture(scope="module")
def run_3d(gpu, tmp_path_factory):
    """A short 3D headless run through the app's own entry, with its network exported to Slang;
    tanh hidden layers, so the export's input gradient has no kinks to compare across."""
    folder = tmp_path_factory.mktemp("space3d")
    (folder / "z.json").write_text(json.dumps({"z_range": Z_RANGE}))
    out = folder / "out"
    targets = [arg for target in TARGETS for arg in ("--target", target)]
    result = run_app(
        gpu, folder,
        "--headless", "--quiet", "--dims", "3", "--config", str(folder / "z.json"), *targets,
        "--encoding", "fourier", "--frequencies", "2", "--hidden", "12", "--activation", "tanh",
        "--iterations", "40", "--eval-grid", str(GRID), "--out", str(out), "--export-slang", str(out / "net.slang"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return out


def _network(out) -> dict:
    return json.loads((out / "network.json").read_text())


def _slice_points(domain) -> tuple[np.ndarray, ...]:
    """The evaluation grid's cell centres on the slice the app evaluates, z = the middle of Z_RANGE."""
    x, y = (a.ravel() for a in grid_centres(domain, GRID))
    return x, y, np.full_like(x, 0.5 * (Z_RANGE[0] + Z_RANGE[1]))


def _outside_forward(network: dict, x, y, z) -> np.ndarray:
    """network.json of a 3D Fourier network from docs/formats.md's description alone, float64."""
    cols = [x, y, z]
    for k in range(network["encoding"]["frequencies"]):
        w = np.pi * 2.0**k
        cols += [f(w * a) for a in (x, y, z) for f in (np.sin, np.cos)]
    h = np.stack(cols, axis=1)
    acts = {"identity": lambda v: v, "tanh": np.tanh}
    for layer in network["layers"]:
        h = acts[layer["activation"]](h @ np.asarray(layer["weights"]).T + np.asarray(layer["biases"]))
    return h


def _points(count: int = 64) -> np.ndarray:
    rng = np.random.default_rng(5)
    return np.stack(
        [rng.uniform(-1, 1, count), rng.uniform(-1, 1, count), rng.uniform(*Z_RANGE, count)], axis=1
    ).astype(np.float32)


def test_network_json_names_z_and_its_forward_pass_gives_the_eval_loss(run_3d):
    """The eval loss the GPU computed on the z slice, from network.json's numpy forward pass: the
    encoding's 3D twin, at the slice's z (a wrong z or encoding moves it by far more than 1e-4)."""
    network, summary = _network(run_3d), json.loads((run_3d / "summary.json").read_text())
    assert network["domain"] == {"x": [-1.0, 1.0], "y": [-1.0, 1.0], "z": Z_RANGE}
    assert network["targets"] == TARGETS and network["encoding"] == {"kind": "fourier", "frequencies": 2}
    assert len(network["layers"][0]["weights"][0]) == 3 * (1 + 2 * 2)
    x, y, z = _slice_points([-1, 1, -1, 1])
    predicted = forward(network, x, y, z=z)
    assert np.max(np.abs(predicted - _outside_forward(network, x, y, z))) < 1e-12
    truth = np.stack([target_to_numpy(t, dims=3)(x, y, z) for t in TARGETS], axis=1)
    loss = np.mean(np.sum((predicted - truth) ** 2, axis=1))
    assert loss == pytest.approx(summary["eval_loss"], rel=1e-4)
    with pytest.raises(ValueError):
        forward(network, x, y)  # a 3D network without z is no slice of it


def test_loaded_3d_network_has_its_dims_and_z_range_and_the_gpu_computes_its_forward_pass(gpu, run_3d):
    """load_network onto the defaults (dims 2, z in [-1, 1]) gives dims 3 and the file's z range;
    the app's evaluation kernel, with those parameters, computes network.json's numpy values
    cell by cell on the slice (float through two layers: 2e-5)."""
    config, params = load_network(str(run_3d / "network.json"), Config())
    assert config.dims == 3 and config.z_range == Z_RANGE and list(config.targets) == TARGETS
    trainer = Trainer(gpu, config)
    trainer.set_parameters(params)
    assert trainer.plan.point_dim == 3
    predictions = GridEvaluator(trainer, GRID).evaluate().predictions.reshape(-1, len(TARGETS))
    x, y, z = _slice_points(config.domain)
    reference = forward(_network(run_3d), x, y, z=z)
    assert np.max(np.abs(predictions - reference)) <= 2e-5 * max(1.0, np.max(np.abs(reference)))


def test_load_network_cli_restarts_the_3d_network_as_it_was(gpu, run_3d, tmp_path):
    """--load-network with --iterations 0 writes the network it loaded: the same document, z
    included, and a summary whose config is 3D with the file's z range."""
    out = tmp_path / "again"
    result = run_app(
        gpu, tmp_path, "--headless", "--quiet", "--load-network", str(run_3d / "network.json"),
        "--iterations", "0", "--eval-grid", str(GRID), "--out", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert _network(out) == _network(run_3d)
    config = json.loads((out / "summary.json").read_text())["config"]
    assert config["dims"] == 3 and config["z_range"] == Z_RANGE


def test_a_2d_network_has_no_z_and_loads_as_2d(make_trainer, tmp_path):
    """A 2D network.json's domain is x and y alone; loaded onto a 3D base (a window's saved
    config may be one), it trains in 2D again."""
    trainer = make_trainer(hidden=[4], seed=1)
    network = export_network(trainer.plan, trainer.config, trainer.parameters())
    assert network["domain"] == {"x": [-1.0, 1.0], "y": [-1.0, 1.0]}
    path = tmp_path / "network.json"
    path.write_text(json.dumps(network))
    config, params = load_network(str(path), Config(dims=3))
    assert config.dims == 2 and np.array_equal(params, trainer.parameters())
    with pytest.raises(ValueError):
        forward(network, np.zeros(2), np.zeros(2), z=np.zeros(2))


@pytest.fixture(scope="module")
def exported_3d(gpu, run_3d):
    """net.slang compiled alone, in a device of its own whose include path reaches none of the
    app's shaders, with a harness calling it."""
    device = spy.create_device(type=gpu.device.info.type, enable_hot_reload=False)
    source = (run_3d / "net.slang").read_text()
    device.load_module_from_source("exported_network_3d", source)
    harness = device.load_module_from_source(
        "exported_network_3d_harness", HARNESS.format(module="exported_network_3d")
    )
    return source, spy.Module(harness)


def test_export_takes_xyz_and_its_header_says_the_z_range(exported_3d):
    source, _ = exported_3d
    header = source.split("static const int")[0]
    assert "trained on x in [-1, 1], y in [-1, 1], z in [0, 0.5]." in header
    assert "trained_network(xyz, outputs);" in header and "xy," not in header
    assert "[Differentiable]\nvoid trained_network(float3 xyz, out float outputs[TRAINED_OUTPUTS])" in source
    assert "float[TRAINED_OUTPUTS] trained_network_outputs(float3 xyz)" in source
    assert "float[TRAINED_INPUTS] trained_encode(float3 xyz)" in source and "float2" not in source


def test_export_outputs_and_gradients_match_network_json(exported_3d, run_3d):
    """Outputs at random (x, y, z) against network_io.forward (float64) within 1e-4, and bwd_diff's
    d/d(x, y, z) against its central differences (tanh layers: smooth, h = 1e-5 in float64)."""
    _, module = exported_3d
    network = _network(run_3d)
    xyz = _points()
    x, y, z = (xyz[:, a].astype(np.float64) for a in range(3))
    reference = forward(network, x, y, z=z)
    outputs = np.stack([module.output_k(xyz, k, _result="numpy") for k in range(len(TARGETS))], axis=1)
    assert np.max(np.abs(outputs - reference)) <= 1e-4
    for k in range(len(TARGETS)):
        gradients = module.bwd_k(xyz, k, _result="numpy")
        numeric = _central_differences(network, x, y, z)[:, :, k]
        assert np.max(np.abs(numeric[:, 2])) > 0.05, "the output moves with z"
        assert np.max(np.abs(gradients - numeric)) <= 1e-4 * max(1.0, np.max(np.abs(numeric)))


def _central_differences(network: dict, x, y, z, h: float = 1e-5) -> np.ndarray:
    """d outputs / d(x, y, z) of network.json's forward pass: (N, 3, outputs), float64."""
    columns = []
    for dx, dy, dz in np.eye(3) * h:
        ahead, behind = forward(network, x + dx, y + dy, z=z + dz), forward(network, x - dx, y - dy, z=z - dz)
        columns.append((ahead - behind) / (2 * h))
    return np.stack(columns, axis=1)
