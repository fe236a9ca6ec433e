"""Grid networks everywhere a network goes: the grid evaluation and its derivative views, the
gradient check, network.json with its tables file (numpy's evaluator, --load-network), the
checkpoint (a resumed run byte-identical to one never stopped) and the Slang export with its
tables sidecar, bound and called from SlangPy."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
import reference_grid as ref
import slangpy as spy
from helpers import run_headless_here
from reference import activate, activation_derivative, grid_centres

from app.check import grad_check
from app.config.config import Config, validate
from app.files.export_grid import tables_path
from app.files.export_slang import evaluated_parameters, export_files
from app.files.network_io import TABLES_FILE, export_network, forward, load_network
from app.train.trainer import Trainer
from app.views.evaluation import GridEvaluator

GRID = dict(encoding="hashgrid", grid_levels=4, grid_features=2, grid_log2_size=8, grid_base_resolution=3,
            grid_level_scale=2.0, targets=["sin(3*x)*y", "x*x - y"], domain=[-1.0, 1.0, -0.75, 0.75])  # fmt: skip
OPTIONS = ["--encoding", "hashgrid", "--grid-levels", "4", "--grid-features", "2", "--grid-table", "8"]
OPTIONS += ["--grid-base-resolution", "3", "--grid-level-scale", "2", "--target", "sin(3*x)*y", "--target", "x*x - y"]


def _forward_and_jacobian(config, params: np.ndarray, x, y):
    """Outputs and d outputs / d (x, y) of a grid network, float64, from the independent reference."""
    sizes = [config.grid_levels * config.grid_features, *config.hidden, len(config.targets)]
    u = ref.units(config, x, y)
    offset, layers = 0, []
    for k in range(len(sizes) - 1):
        w = params[offset : offset + sizes[k] * sizes[k + 1]].reshape(sizes[k + 1], sizes[k]).astype(np.float64)
        offset += sizes[k] * sizes[k + 1]
        layers.append((w, params[offset : offset + sizes[k + 1]].astype(np.float64)))
        offset += sizes[k + 1]
    h = ref.encode(config, u, params[offset:])
    x0, x1, y0, y1 = config.domain
    jacobian = ref.encode_jacobian(config, u, params[offset:]) / np.array([x1 - x0, y1 - y0])
    for k, (w, b) in enumerate(layers):
        act = config.output_activation if k == len(layers) - 1 else config.activation
        z = h @ w.T + b
        jacobian = activation_derivative(act, z)[:, :, None] * np.einsum("oi,nij->noj", w, jacobian)
        h = activate(act, z)
    return h, jacobian


@pytest.fixture(scope="module")
def trained(gpu):
    trainer = Trainer(gpu, validate(Config(**GRID, hidden=[16, 16], activation="tanh", batch_size=1024, seed=3)))
    trainer.train(60)
    return trainer


def test_evaluation_and_derivative_views_match_numpy(trained):
    grid = 24
    evaluation = GridEvaluator(trained, grid).evaluate()
    gx, gy = grid_centres(trained.config.domain, grid)
    outputs, jacobian = _forward_and_jacobian(trained.config, trained.parameters(), gx.ravel(), gy.ravel())
    o = trained.plan.output_dim
    np.testing.assert_allclose(evaluation.predictions.reshape(-1, o), outputs, atol=2e-5)
    derivatives = evaluation.derivatives.reshape(-1, o, 4)[:, :, :2]
    assert np.abs(jacobian).max() > 0.5
    np.testing.assert_allclose(derivatives, jacobian, atol=1e-3 * np.abs(jacobian).max())


@pytest.mark.parametrize("fields", [dict(hidden=[6]), dict(hidden=[32, 32], precision="half")])
def test_gradient_check_passes_on_grid_networks(make_trainer, fields):
    trainer = make_trainer(**GRID, **fields, seed=6)
    trainer.train(20)
    check = grad_check.run(trainer)
    assert check.passed, check.line() + "; " + check.detail()
    assert check.parameters == trainer.plan.param_count and check.fd_parameters == 2 * len(trainer.plan.layers) + 1


def test_gradient_check_fails_on_a_wrong_table_gradient(make_trainer, monkeypatch):
    trainer = make_trainer(**GRID, hidden=[6], seed=6)
    honest = grad_check.training_gradient

    def wrong(trainer, step):
        gradient = honest(trainer, step)
        gradient[trainer.plan.mlp_param_count :] *= 1.1
        return gradient

    monkeypatch.setattr(grad_check, "training_gradient", wrong)
    assert not grad_check.run(trainer).passed


def _headless(gpu, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return run_headless_here(gpu, tmp_path, "--batch-size", "1024", "--eval-every", "25", *args)


def test_network_json_with_its_tables_and_load_network(gpu, tmp_path):
    """numpy's evaluator of network.json with its tables file reproduces the run's eval loss;
    --load-network reads both, and refuses a tables file that is not an array, on one line.
    (A resumed grid run's files are byte-identical: tests/test_images.py.)"""
    whole = _headless(gpu, tmp_path, *OPTIONS, "--iterations", "60", "--out", str(tmp_path / "whole"))
    assert whole.returncode == 0, whole.stderr
    network = json.loads((tmp_path / "whole" / "network.json").read_text())
    assert network["encoding"]["kind"] == "hashgrid" and network["encoding"]["tables"] == TABLES_FILE
    tables = np.load(tmp_path / "whole" / TABLES_FILE)
    config = validate(Config(**GRID, batch_size=1024))
    assert tables.dtype == np.float32 and tables.shape == (ref.table_size(config) // 2, 2)
    summary = json.loads((tmp_path / "whole" / "summary.json").read_text())
    x, y = grid_centres([*network["domain"]["x"], *network["domain"]["y"]], summary["eval_grid"])
    truth = np.stack([np.sin(3 * x.ravel()) * y.ravel(), x.ravel() ** 2 - y.ravel()], axis=1)
    loss = np.mean(np.sum((forward(network, x.ravel(), y.ravel(), tables.ravel()) - truth) ** 2, axis=1))
    assert loss == pytest.approx(summary["eval_loss"], rel=1e-4)
    loaded, params = load_network(str(tmp_path / "whole" / "network.json"), Config())
    assert loaded.structure() == validate(Config(**GRID)).structure()
    assert np.array_equal(params[-tables.size :], tables.ravel())
    (tmp_path / "whole" / TABLES_FILE).write_bytes(b"not an array")
    bad = _headless(gpu, tmp_path, "--load-network", str(tmp_path / "whole" / "network.json"), "--iterations", "1")
    assert bad.returncode == 2 and "not a .npy array" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


HARNESS = """
import {module};

float output_k(float2 xy, int k) {{ return trained_network_outputs(xy)[k]; }}

[Differentiable]
float chosen(float2 xy, no_diff int k) {{ return trained_network_outputs(xy)[k]; }}

float2 bwd_k(float2 xy, int k) {{ var p = diffPair(xy); bwd_diff(chosen)(p, k, 1.0); return p.d; }}

float2 fwd_k(float2 xy, int k)
{{
    return float2(fwd_diff(chosen)(diffPair(xy, float2(1.0, 0.0)), k).d,
                  fwd_diff(chosen)(diffPair(xy, float2(0.0, 1.0)), k).d);
}}
"""


def test_slang_export_binds_its_tables_and_stays_differentiable(trained, gpu, tmp_path):
    files = export_files(trained, tmp_path / "net.slang")
    assert (
        [path.name for path, _ in files]
        == ["net.slang", "net.tables.bin"]
        == [
            tmp_path.joinpath("net.slang").name,
            tables_path(tmp_path / "net.slang").name,
        ]
    )
    for path, data in files:
        path.write_bytes(data)
    source = files[0][1].decode()
    assert "#include" not in source and "StructuredBuffer<float> trained_grid_tables;" in source
    device = spy.create_device(type=gpu.device.info.type, enable_hot_reload=False)
    device.load_module_from_source("exported_grid", source)
    module = spy.Module(device.load_module_from_source("exported_grid_harness", HARNESS.format(module="exported_grid")))
    tables = device.create_buffer(
        data=np.fromfile(tmp_path / "net.tables.bin", "<f4"), usage=spy.BufferUsage.shader_resource
    )
    params = evaluated_parameters(trained)
    rng = np.random.default_rng(2)
    x0, x1, y0, y1 = trained.config.domain
    xy = np.stack([rng.uniform(x0, x1, 128), rng.uniform(y0, y1, 128)], 1).astype(np.float32)
    outputs, jacobian = _forward_and_jacobian(trained.config, params, xy[:, 0], xy[:, 1])
    network = export_network(trained.plan, trained.config, params)
    numpy_outputs = forward(network, xy[:, 0], xy[:, 1], trained.plan.tables(params))
    np.testing.assert_allclose(numpy_outputs, outputs, atol=1e-9)
    for k in range(trained.plan.output_dim):
        exported = module.output_k.set(trained_grid_tables=tables)(xy, k, _result="numpy")
        np.testing.assert_allclose(exported, outputs[:, k], atol=2e-5)
        for mode in ("bwd_k", "fwd_k"):
            gradient = getattr(module, mode).set(trained_grid_tables=tables)(xy, k, _result="numpy")
            np.testing.assert_allclose(gradient, jacobian[:, k], atol=1e-3 * np.abs(jacobian).max())
