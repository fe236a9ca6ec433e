"""Functions of (x, y, z) (--dims 3): the targets' grammar, the config's refusals, the generated
module, and on the GPU the gradient of a step against a float64 numpy backward pass over the
3D samples, and the views' xy slice against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import gpu_loss_and_gradient
from reference import forward as reference_forward
from reference import grid_centres, kernel_parameters, loss_and_gradient, sample_points_3d, truth_values
from tensor_core_checks import tensor_cores_for

from app.config.config import Config, validate
from app.errors import UserError
from app.kernels.network_module import network_source
from app.kernels.planning import plan_for
from app.loop.session import Session
from app.truth.finite import check_finite
from app.truth.targets import TargetError, parse_target, target_to_numpy

TARGET = "x*y - z*z + 0.5*sin(3*z)"


def test_a_target_may_name_z_in_3d_only_and_2d_keeps_its_message():
    parse_target("sqrt(x*x + y*y + z*z) - 0.5", dims=3)
    with pytest.raises(TargetError, match=r"unknown name 'z' \(use x, y, pi and e\)"):
        parse_target("x + z")
    with pytest.raises(TargetError, match=r"unknown name 'w' \(use x, y, z, pi and e\)"):
        parse_target("x + w", dims=3)
    f = target_to_numpy("x + 2*y + 3*z", dims=3)
    np.testing.assert_array_equal(f(np.array([1.0]), np.array([10.0]), np.array([100.0])), [321.0])
    with pytest.raises(UserError, match="unknown name 'z'"):
        validate(Config(targets=["x*z"]))
    assert validate(Config(targets=["x*z"], dims=3)).targets == ["x*z"]


@pytest.mark.parametrize(
    "fields,message",
    [
        ({"encoding": "features"}, "takes the poly2, raw, fourier, hashgrid, densegrid encodings, not features"),
        ({"sdf": "circle"}, "not a 2D shape"),
        ({"dataset": {"generator": "spiral"}}, "not a dataset"),
        ({"normal_weight": 1.0}, "--normal-weight"),
        ({"z_range": [1.0, -1.0]}, r"must be \[z0, z1\] with finite z0 < z1"),
    ],
)
def test_what_3d_cannot_take_is_one_line_naming_it(fields, message):
    with pytest.raises(UserError, match=message) as error:
        validate(Config(dims=3, **fields))
    assert "\n" not in str(error.value)


def test_a_3d_target_must_be_finite_on_every_depth_checked():
    with pytest.raises(UserError, match=r"target f1 = '1/z' is .* at x = .*, y = .*, z = 0:"):
        check_finite(["1/z"], [-1, 1, -1, 1], 16, [-1.0, 1.0])
    check_finite(["1/z"], [-1, 1, -1, 1], 16, [0.5, 1.0])  # no z = 0 there


def test_the_3d_module_switches_the_shared_slang_and_2d_does_not():
    source_3d = network_source(plan_for(validate(Config(dims=3, targets=[TARGET], encoding="fourier"))))
    source_2d = network_source(plan_for(validate(Config(encoding="fourier"))))
    assert "#define POINT_3D" in source_3d and "encodeInput(float3 p)" in source_3d
    assert "samplePoint3(" in source_3d and "groundTruth(float3 p)" in source_3d
    assert "POINT_3D" not in source_2d and "encodeInput(float2 p)" in source_2d
    assert plan_for(validate(Config(dims=3))).input_dim == 6  # poly2: x, y, z and their squares


# The paths that draw samples through drawSample: a narrow network takes thread accumulators, a
# wider input workgroup tiles, and a wide float network on a CPU driver group tiles (its lane
# tiles draw (x, y) themselves and are skipped in 3D)
CASES = [
    ("raw", [12, 7], "float", "thread"),
    ("poly2", [12, 7], "float", "thread"),
    ("fourier", [12, 7], "float", "tiles"),
    ("fourier", [256], "float", "group"),
    ("raw", [12, 7], "half", "thread"),  # pairs in 2D (pairs.slang samples (x, y) itself)
    ("fourier", [32, 32], "half", "fused"),  # on tensor cores (emulated where the device has none)
]


@pytest.mark.parametrize("encoding,hidden,precision,path", CASES)
def test_a_3d_steps_gradient_matches_numpy_over_the_3d_samples(
    gpu, monkeypatch, make_trainer, encoding, hidden, precision, path
):
    if path == "fused":
        tensor_cores_for(gpu, monkeypatch, fused=True)
    trainer = make_trainer(
        dims=3, z_range=[-0.5, 1.5], targets=[TARGET, "z"], encoding=encoding, frequencies=2, hidden=hidden,
        precision=precision, activation="tanh", batch_size=300, seed=3,
    )  # fmt: skip
    assert trainer.plan.gradient_path == path
    c = trainer.config
    x, y, z = sample_points_3d(c.seed, 0, c.batch_size, c.domain, c.z_range)
    assert z.min() < -0.4 and z.max() > 1.4  # drawn over z_range, not [-1, 1] nor 0
    ref_loss, ref_gradient = loss_and_gradient(
        c, kernel_parameters(c, trainer.parameters()), x, y, truth_values(c, x, y, z), z=z
    )
    gpu_loss, gpu_gradient = gpu_loss_and_gradient(trainer)
    tolerance = 2e-2 if precision == "half" else 1e-4
    assert abs(gpu_loss - ref_loss) / ref_loss < tolerance
    scale = np.max(np.abs(ref_gradient))
    assert np.count_nonzero(gpu_gradient) > 0.5 * gpu_gradient.size
    assert np.max(np.abs(gpu_gradient - ref_gradient)) / scale < tolerance


def test_the_views_show_the_xy_slice_at_the_middle_of_z(gpu):
    config = validate(
        Config(dims=3, z_range=[0.0, 1.0], targets=["x + z*z", "y*z"], encoding="fourier", frequencies=2,
               hidden=[16], activation="tanh", seed=2)
    )  # fmt: skip
    session = Session(gpu, config, grid=16)
    session.trainer.train(30)
    session.evaluate()
    maps = session.evaluator.read()
    x, y = (v.ravel() for v in grid_centres(config.domain, 16))
    z = np.full_like(x, 0.5)
    truth = truth_values(config, x, y, z)
    np.testing.assert_allclose(maps.truths.reshape(-1, 2), truth, atol=1e-6)
    learned = reference_forward(config, session.trainer.parameters(), x, y, z)
    assert np.ptp(learned[:, 0]) > 0.1  # a kernel writing zeros or ignoring the slice fails here
    np.testing.assert_allclose(maps.predictions.reshape(-1, 2), learned, atol=1e-4)
    slope = maps.derivatives.reshape(-1, 2, 4)  # d/dx, d/dy of the learned and the true slice
    np.testing.assert_allclose(slope[:, 0, 2], 1.0, atol=1e-5)  # d(x + z^2)/dx
    np.testing.assert_allclose(slope[:, 1, 3], 0.5, atol=1e-5)  # d(y z)/dy at z = 0.5


SLANG_3D = """static const int TARGET_COUNT = 2;

[Differentiable]
float target(float3 p, int k)
{
    return k == 0 ? length(p) - 0.5 : p.x * p.z;
}
"""


def test_a_slang_file_of_a_float3_point_is_the_truth_in_3d(gpu, tmp_path):
    from app.gpu import target_probe

    path = tmp_path / "ball.slang"
    path.write_text(SLANG_3D)
    with pytest.raises(UserError, match=r"must define .*float target\(float2 p, int k\)"):
        target_probe.load(gpu, path)  # a 2D config's probe takes a float2
    target = target_probe.load(gpu, path, dims=3)
    assert target["count"] == 2
    config = validate(Config(dims=3, z_range=[0.0, 1.0], slang_target=target, encoding="raw", hidden=[8]))
    session = Session(gpu, config, grid=8)
    session.trainer.train(5)
    session.evaluate()
    maps = session.evaluator.read()
    x, y = (v.ravel() for v in grid_centres(config.domain, 8))
    expected = np.stack([np.sqrt(x * x + y * y + 0.25) - 0.5, x * 0.5], axis=1)  # the slice z = 0.5
    np.testing.assert_allclose(maps.truths.reshape(-1, 2), expected, atol=1e-5)


@pytest.mark.parametrize("plane,depth", [("xz", 0.3), ("yz", -0.2)])
def test_an_xz_or_yz_slice_at_a_depth_is_what_the_views_evaluate(gpu, plane, depth):
    from app.views.slices import Slice

    config = validate(
        Config(dims=3, z_range=[0.0, 2.0], targets=["x + z*z", "y*z"], encoding="raw", hidden=[8], seed=1)
    )
    session = Session(gpu, config, grid=8)
    session.evaluator.slice = Slice(plane, depth)
    session.evaluate()
    maps = session.evaluator.read()
    u, v = (a.ravel() for a in grid_centres(Slice(plane).extent(config.domain, config.z_range), 8))
    x, y, z = (u, np.full_like(u, depth), v) if plane == "xz" else (np.full_like(u, depth), u, v)
    np.testing.assert_allclose(maps.truths.reshape(-1, 2), truth_values(config, x, y, z), atol=1e-5)
    np.testing.assert_allclose(
        maps.predictions.reshape(-1, 2), reference_forward(config, session.trainer.parameters(), x, y, z), atol=1e-4
    )
    slope = maps.derivatives.reshape(-1, 2, 4)  # d/d(across), d/d(up) of the truth: up is z in both planes
    np.testing.assert_allclose(slope[:, 0, 3], 2 * z, atol=1e-4)  # d(x + z^2)/dz
    np.testing.assert_allclose(slope[:, 1, 2], z if plane == "yz" else 0.0, atol=1e-5)  # d(y z)/d(across)


def test_the_windows_slice_controls_set_the_plane_and_the_depth_evaluated(make_session):
    from app.ui.offscreen import OffscreenApp

    ui = OffscreenApp(make_session(dims=3, targets=["x + y + z"], encoding="raw", hidden=[8]), 1280, 800)
    try:
        ui.frame(3)
        x0, y0, x1, y1 = ui.app.rects["slice xz"]
        ui.click((x0 + x1) / 2, (y0 + y1) / 2)
        ui.frame()
        assert ui.app.slice.plane == "xz" and ui.session.evaluator.slice == ui.app.slice
        x0, y0, x1, y1 = ui.app.rects["slice depth"]
        ui.click(x0 + 0.9 * (x1 - x0), (y0 + y1) / 2)  # near the right end of y's range [-1, 1]
        ui.frame()
        depth = ui.app.slice.depth
        assert depth is not None and 0.5 < depth <= 1.0 and ui.session.evaluator.slice.depth == depth
        assert ui.frames_until(lambda: ui.session.evaluator.complete.slice == ui.app.slice, force=True)
        truths = ui.session.evaluator.read().truths[..., 0]
        u, v = grid_centres([-1, 1, -1, 1], truths.shape[0])
        np.testing.assert_allclose(truths, u + depth + v, atol=1e-5)  # x + y + z on the slice y = depth
    finally:
        ui.close()


@pytest.mark.parametrize("encoding,hidden", [("fourier", [12, 7]), ("raw", [12, 7])])
def test_the_same_seed_gives_the_same_bytes_in_3d_and_so_does_a_resumed_run(gpu, encoding, hidden):
    from app.files import checkpoint as ckpt
    from app.files.network_io import export_network

    config = validate(
        Config(dims=3, z_range=[-0.5, 1.0], targets=[TARGET], encoding=encoding, frequencies=2, hidden=hidden,
               batch_size=1024, seed=5)
    )  # fmt: skip

    def network_json(session) -> bytes:
        trainer = session.trainer
        document = export_network(trainer.plan, trainer.config, trainer.parameters())
        return np.asarray(trainer.parameters()).tobytes() + repr(document["domain"]).encode()

    first, second = Session(gpu, config, grid=8), Session(gpu, config, grid=8)
    first.advance(6)
    saved = ckpt.encode(ckpt.capture(first))
    first.advance(6)
    second.advance(12)
    resumed = Session(gpu, config.replace(seed=6), grid=8)
    ckpt.restore(resumed, ckpt.decode(saved))
    resumed.advance(6)
    assert network_json(first) == network_json(second) == network_json(resumed)
    assert resumed.trainer.config.dims == 3 and resumed.trainer.config.z_range == [-0.5, 1.0]
    assert not np.array_equal(first.trainer.parameters(), first.trainer.plan.initial_parameters(5))


@pytest.mark.parametrize("encoding", ["fourier", "hashgrid"])
def test_the_gradient_check_checks_a_3d_network_against_its_own_reference(make_trainer, encoding):
    from app.check import grad_check

    trainer = make_trainer(
        dims=3, z_range=[-0.5, 1.5], targets=[TARGET], encoding=encoding, frequencies=2, grid_levels=3,
        grid_log2_size=9, hidden=[12], activation="tanh", seed=3,
    )  # fmt: skip
    check = grad_check.run(trainer)
    assert check.passed and check.error < 1e-4 and check.fd_parameters > 0
    if encoding == "fourier":  # its loss is at the kernels' 3D samples, as numpy draws and evaluates them
        c = trainer.config
        x, y, z = sample_points_3d(c.seed, 0, 256, c.domain, c.z_range)
        params = trainer.parameters()
        expected, _ = loss_and_gradient(c, params, x, y, truth_values(c, x, y, z), z=z)
        assert abs(check.loss - expected) / expected < 1e-4


@pytest.mark.parametrize(
    "encoding,terms", [("fourier", dict(eikonal=0.3)), ("poly2", dict(grad_weight=0.7, eikonal=0.2))]
)
def test_the_gradient_check_of_a_3d_derivative_loss_is_its_numpy_twins(make_trainer, monkeypatch, encoding, terms):
    """The nested loss's twin in 3D (tangents along x, y and z): the check passes on the kernels'
    gradient, its loss is the loss of a twin written in tests/test_derivatives_3d.py, and the twin
    with the truth's slope along z dropped, or the kernels' gradient zeroed, fails it."""
    from test_derivatives_3d import numeric_gradient

    from app.check import grad_check, nested_loss

    targets = ["sin(3*z)*x + y*y"] if "grad_weight" in terms else ["sqrt(x*x + y*y + z*z) - 0.5"]
    trainer = make_trainer(
        dims=3, z_range=[-0.5, 1.5], targets=targets, encoding=encoding, frequencies=1, hidden=[10],
        activation="tanh", batch_size=grad_check.CHECK_BATCH, seed=4, **terms,
    )  # fmt: skip
    trainer.train(3)
    check = grad_check.run(trainer)
    assert check.passed and check.error < 1e-4 and check.nested and check.fd_parameters > 0, check.line()
    expected, _ = numeric_gradient(trainer.config, trainer.parameters(), step=trainer.step)
    assert abs(check.loss - expected) / expected < 1e-9
    honest = nested_loss.nested_batch

    def flat_in_z(plan, config, points, normals=None):
        batch = honest(plan, config, points, normals)
        batch.truth_tangents[2] = 0.0
        batch.tangents[2] = 0.0
        return batch

    monkeypatch.setattr(grad_check, "nested_batch", flat_in_z)
    assert not grad_check.run(trainer).passed
    monkeypatch.setattr(grad_check, "nested_batch", honest)
    monkeypatch.setattr(grad_check, "training_gradient", lambda trainer, step: np.zeros(trainer.plan.param_count))
    assert not grad_check.run(trainer).passed


def test_the_gradient_check_refuses_a_derivative_loss_on_a_slang_files_target_before_training(tmp_path):
    from app.check.grad_check import check_checkable

    source = "float target(float3 p, int k) { return p.x * p.z; }\n"
    slang = dict(dims=3, slang_target={"file": str(tmp_path / "t.slang"), "source": source, "count": 1})
    with pytest.raises(UserError, match="needs a truth numpy can evaluate"):
        check_checkable(validate(Config(**slang, eikonal=0.1)))
    check_checkable(validate(Config(**slang)))
    check_checkable(validate(Config(dims=3, eikonal=0.1)))
