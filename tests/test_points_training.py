"""Training on a dataset's points on the GPU, against independent numpy references: the batch
(tests/reference.py's permutation), the losses and their gradients on every gradient path
(and central differences of the GPU's own loss), the loss the kernels report, regularisation
with SGD and Adam, the training and test sets' loss and accuracy, and the Playground's two
lessons (the spiral learned; overfitting at noise 0.5 with 10% training points)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import reference_grid
from helpers import gpu_loss, gpu_loss_and_gradient
from reference import batch_rows, kernel_parameters, loss_and_gradient, sample_losses
from reference import forward as reference_forward
from tensor_core_checks import emulate_tensor_cores

from app import datasets
from app.config.config import Config, validate
from app.config.truths import with_dataset
from app.loop.session import Session
from app.train.trainer import Trainer

SPIRAL = dict(
    dataset={"generator": "spiral"},
    encoding="features",
    features=["x", "y", "x2", "y2", "xy", "sinx", "siny"],
    hidden=[8, 8],
    activation="tanh",
    domain=[-6.0, 6.0, -6.0, 6.0],
)


@pytest.fixture(scope="module")
def three_classes(tmp_path_factory) -> dict:
    """A CSV of three Gaussian classes (text labels), as the config's dataset entry."""
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 3, 600)
    centres = np.array([[-2.0, 0.0], [2.0, 1.0], [0.0, -2.5]])
    points = centres[labels] + rng.normal(0.0, 1.0, (600, 2))
    path = tmp_path_factory.mktemp("points") / "three.csv"
    names = ["red", "green", "blue"]
    path.write_text("x,y,label\n" + "".join(f"{x:.5f},{y:.5f},{names[c]}\n" for (x, y), c in zip(points, labels)))
    return datasets.entry_for(str(path))


def _config(source=None, **fields) -> Config:
    config = validate(Config(**fields))
    return with_dataset(config, source) if source is not None else config


def _reference(trainer: Trainer, params: np.ndarray):
    """numpy's loss and gradient of the trainer's next batch."""
    data, c = trainer.data.dataset, trainer.config
    rows = batch_rows(c.seed, trainer.data_position, data.train_count, trainer.batch_size)
    return loss_and_gradient(c, params, data.x[rows], data.y[rows], data.truth[rows].astype(np.float64),
                             trainer.plan.loss_name)  # fmt: skip


CASES = {
    "two classes, thread accumulators": (None, dict(SPIRAL, hidden=[8])),
    "three classes, thread accumulators": ("three", dict(hidden=[8], encoding="raw")),
    "values, thread accumulators": ({"generator": "multigauss"}, dict(hidden=[8], encoding="raw")),
    "two classes, workgroup tiles": (None, dict(SPIRAL, hidden=[32, 32])),
    "three classes, group tiles": ("three", dict(hidden=[16, 8], activation="sin", encoding="raw")),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_each_loss_and_its_gradient_match_numpy(gpu, three_classes, case):
    source, fields = case
    source = three_classes if source == "three" else source
    trainer = Trainer(gpu, _config(source, batch_size=200, seed=4, **fields))
    expected_path = {8: "thread", 32: "tiles", 16: "group"}[trainer.config.hidden[0]]
    assert trainer.plan.gradient_path == expected_path
    trainer.train(3)  # away from the initial weights and the first epoch's start
    params = trainer.parameters()
    loss, gradient = gpu_loss_and_gradient(trainer, step=trainer.step)
    ref_loss, ref_gradient = _reference(trainer, params)
    assert abs(loss - ref_loss) <= 2e-5 * ref_loss, "the reported loss is the true loss"
    assert np.max(np.abs(gradient - ref_gradient)) <= 1e-4 * np.max(np.abs(ref_gradient))
    # central differences of the GPU's own loss, at each layer's largest weight gradient
    for layer in trainer.plan.layers:
        index = layer.offset + int(np.argmax(np.abs(ref_gradient[layer.offset : layer.bias_offset])))
        h = 2e-3 * max(1.0, abs(float(params[index])))
        plus, minus = params.copy(), params.copy()
        plus[index] += h
        minus[index] -= h
        numeric = (gpu_loss(trainer, plus, trainer.step) - gpu_loss(trainer, minus, trainer.step)) / (2 * h)
        assert abs(numeric - gradient[index]) <= 2e-2 * np.max(np.abs(ref_gradient)), (layer, numeric, gradient[index])


def test_the_losses_match_numpy_where_they_are_extreme():
    """The Slang losses' twins in app/model/losses.py against the references' formulas, at logits
    where a careless form overflows."""
    from app.model.losses import LOSSES

    z = np.array([[-80.0], [-3.0], [0.0], [2.5], [80.0]])
    for t in (0.0, 1.0):
        truth = np.full_like(z, t)
        expected = np.where(t == 1.0, np.logaddexp(0, -z[:, 0]), np.logaddexp(0, z[:, 0]))
        assert np.allclose(LOSSES["logistic"].numpy(z, truth), expected)
    logits, onehot = np.array([[1000.0, 0.0, -5.0], [0.1, 0.2, 0.3]]), np.eye(3)[[1, 2]]
    assert np.allclose(
        LOSSES["softmax"].numpy(logits, onehot), [1000.0, sample_losses("softmax", logits[1:], onehot[1:])[0][0]]
    )


@pytest.mark.parametrize("kind", ["l1", "l2"])
def test_regularisation_joins_the_gradient_of_the_weights(gpu, kind):
    """One SGD step (lr 1) moves each weight by its data gradient (learnGradient's, read from its
    slots) plus rate * sign(w) (L1) or rate * w (L2), each bias by its data gradient alone; one
    Adam step takes that sum as its gradient (numpy's Adam)."""
    config = _config(None, **dict(SPIRAL, hidden=[8]), batch_size=100, seed=2)
    trainer = Trainer(gpu, config)
    trainer.train(2)
    params = trainer.parameters().astype(np.float64)
    _, plain = gpu_loss_and_gradient(trainer, trainer.step)
    rate = 0.05
    weights = np.zeros(len(params), bool)
    for layer in trainer.plan.layers:
        weights[layer.offset : layer.bias_offset] = True
    term = rate * (np.sign(params) if kind == "l1" else params) * weights
    saved = trainer.snapshot()
    trainer.apply(config.replace(regularization=kind, reg_rate=rate, optimizer="sgd", lr=1.0, beta1=0.0))
    trainer.train(1)
    assert np.allclose(trainer.parameters(), params - (plain + term), atol=1e-6, rtol=1e-5)
    trainer.restore(saved)
    trainer.apply(config.replace(regularization=kind, reg_rate=rate, optimizer="adam", lr=0.01))
    trainer.reset_optimizer()
    trainer.train(1)
    g = plain + term
    m, v = 0.1 * g, 0.001 * g * g
    adam = params - 0.01 * (m / 0.1) / (np.sqrt(v / 0.001) + 1e-7)
    assert np.allclose(trainer.parameters(), adam, atol=2e-6)


GRID_SPIRAL = dict(SPIRAL, encoding="hashgrid", grid_levels=4, hidden=[8])  # its tables span the domain


def test_the_sets_loss_and_accuracy_match_numpy(gpu, three_classes):
    """A hash grid among them: its point metrics read tables and a domain the kernel must set
    (they were of a grid at 0: 51% accuracy on the spiral with the fit drawn right beside it)."""
    cases = ((None, dict(SPIRAL, hidden=[8])), (three_classes, dict(hidden=[8], encoding="raw")), (None, GRID_SPIRAL))
    for source, fields in cases:
        session = Session(gpu, _config(source, batch_size=64, **fields))
        session.advance(200)
        metrics = session.evaluator.evaluate().metrics
        data, loss = session.trainer.data.dataset, session.trainer.plan.loss
        params = kernel_parameters(session.config, session.trainer.parameters())
        if session.config.encoding == "hashgrid":
            outputs = reference_grid.forward(session.config, params, data.x, data.y, session.trainer.plan.output_dim)
        else:
            outputs = reference_forward(session.config, params, data.x, data.y)
        losses = sample_losses(loss.name, outputs, data.truth.astype(np.float64))[0]
        right = loss.classes(outputs) == data.classes
        if session.config.encoding == "hashgrid":
            assert right.mean() > 0.7, "the grid learned the spiral, which the metrics must see"
        n = data.train_count
        expected = (losses[:n].mean(), losses[n:].mean(), right[:n].mean(), right[n:].mean())
        got = tuple(metrics[k] for k in ("train_loss", "test_loss", "train_accuracy", "test_accuracy"))
        assert np.allclose(got, expected, rtol=1e-4, atol=1e-6), (got, expected)


def test_batches_walk_the_epochs_and_a_large_batch_is_the_whole_set(gpu):
    trainer = Trainer(gpu, _config(None, **dict(SPIRAL, hidden=[8]), points=100, batch_size=4096))
    assert trainer.batch_size == trainer.data.train_count == 50
    trainer.train(3)
    assert trainer.samples_seen == 150 and trainer.epochs == 3.0
    rows = batch_rows(trainer.config.seed, 0, 50, 50)
    assert sorted(rows.tolist()) == list(range(50)), "an epoch visits every training point once"
    trainer.apply(trainer.config.replace(batch_size=20))
    assert trainer.batch_size == 20
    trainer.train(1)
    assert trainer.data_position == 170 and trainer.epochs == 3.4


def test_training_on_points_is_bit_identical_in_pieces(gpu, three_classes):
    config = _config(three_classes, hidden=[16, 8], activation="sin", encoding="raw", batch_size=250)
    whole, pieces = Trainer(gpu, config), Trainer(gpu, config)
    assert whole.plan.gradient_path == "group"
    whole.train(4)
    for _ in range(4):
        with gpu.submit() as encoder:
            done = range(0)
            while not done:
                done = pieces.record_piece(encoder, 1)
    assert np.array_equal(whole.parameters(), pieces.parameters())
    assert whole.data_position == pieces.data_position == 1000


def _train(gpu, steps: int, **fields) -> dict:
    session = Session(gpu, _config(None, **{**SPIRAL, "batch_size": 250, "lr": 0.03, **fields}))
    session.eval_every = steps
    while session.trainer.step < steps:
        session.advance(session.chunk_size(steps))
    return session.metrics


def test_the_spiral_is_learned_to_95_percent(gpu):
    """The issue's spiral: all seven features, 8-8 tanh, noise 0, the Playground's 50% split."""
    metrics = _train(gpu, 3000)
    assert metrics["test_accuracy"] >= 0.95 and metrics["train_accuracy"] >= 0.99, metrics


def test_overfitting_shows_in_the_test_loss(gpu):
    """Noise 0.5 and 10% training points: the training loss falls to nothing while the test
    loss ends far above it; L2 regularisation pulls the test loss back down."""
    free = _train(gpu, 3000, noise=0.5, train_ratio=0.1)
    assert free["test_loss"] > 10 * free["train_loss"] and free["test_loss"] > free["train_loss"] + 1.0, free
    regularised = _train(gpu, 3000, noise=0.5, train_ratio=0.1, regularization="l2", reg_rate=0.01)
    assert regularised["test_loss"] < free["test_loss"] / 2, (free, regularised)


def _test_loss(session: Session) -> float:
    """numpy's loss of the session's network on its data's test points."""
    data, loss = session.trainer.data.dataset, session.trainer.plan.loss
    params = kernel_parameters(session.config, session.trainer.parameters())
    outputs = reference_forward(session.config, params, data.x, data.y)
    return sample_losses(loss.name, outputs, data.truth.astype(np.float64))[0][data.train_count :].mean()


def test_data_changes_live_and_bad_ones_change_nothing(gpu, tmp_path):
    session = Session(gpu, _config(None, **dict(SPIRAL, hidden=[8]), batch_size=50))
    trainer = session.trainer
    session.advance(20)
    before = trainer.parameters()
    session.apply(session.config.replace(noise=0.3, points=300))
    assert session.trainer is trainer and trainer.data.dataset.count == 300 and trainer.data_position == 0
    assert np.array_equal(trainer.parameters(), before), "the network keeps its weights"
    session.change(with_dataset(session.config, {"generator": "xor"}))
    assert session.rebuild is None and session.trainer is trainer, "same problem: no rebuild"
    session.advance(5)
    assert trainer.step == 25 and trainer.data.dataset.source["generator"] == "xor"
    assert session.evaluate() == pytest.approx(_test_loss(session), rel=1e-4)  # on the xor points now
    path = tmp_path / "points.csv"
    path.write_text("1,2,a\n3,4,b\n5,6,a\n")
    config = with_dataset(session.config, datasets.entry_for(str(path)))
    path.write_text("1,2,a\n3,4,b\n5,7,a\n")
    datasets._CSV_CACHE.clear()
    data = trainer.data
    with pytest.raises(datasets.UserError, match="has changed since this run used it"):
        session.change(config)
    assert trainer.data is data and session.config.dataset == {"generator": "xor"}


def test_the_gradient_check_covers_points_losses_and_regularisation(gpu, three_classes):
    from app.check import grad_check

    for source, fields in (
        (None, dict(SPIRAL, hidden=[8], regularization="l1", reg_rate=0.01)),
        (three_classes, dict(hidden=[8], encoding="raw", regularization="l2", reg_rate=0.1)),
    ):
        trainer = Trainer(gpu, _config(source, batch_size=64, **fields))
        trainer.train(5)
        check = grad_check.run(trainer)
        assert check.passed and check.error < 1e-3, check.detail()


def test_the_fused_trainer_takes_every_loss_and_tiles_on_tensor_cores_the_squared_error_only():
    """The fused trainer computes any loss (bwd_diff of outputLoss); the tensor-core workgroup
    tiles compute the squared error's output gradient inline: where the fused trainer does not run,
    classes in half precision train on SIMT tiles, and the generated module says so; values keep
    the tensor cores."""
    from app.kernels.network_module import network_source
    from app.kernels.planning import plan_for

    wide = dict(hidden=[64, 64], precision="half", encoding="raw")
    for source in ({"generator": "spiral"}, {"generator": "plane"}):
        assert plan_for(_config(source, **wide), tensor_cores=True).gradient_path == "fused"
    classes = plan_for(_config({"generator": "spiral"}, **wide), tensor_cores=True, fused=False)
    values = plan_for(_config({"generator": "plane"}, **wide), tensor_cores=True, fused=False)
    assert classes.gradient_path == "tiles" and not any(classes.mma) and any(values.mma)
    assert "// products   SIMT (tensor cores take the squared error only)" in network_source(classes)


FUSED_CASES = {
    "two classes": (None, dict(SPIRAL, hidden=[32, 32])),
    "three classes": ("three", dict(hidden=[32, 32], encoding="raw")),
    "values": ({"generator": "multigauss"}, dict(hidden=[32, 32], encoding="raw")),
}


@pytest.mark.parametrize("case", FUSED_CASES.values(), ids=FUSED_CASES.keys())
def test_points_and_classes_on_the_fused_trainer_match_numpy(gpu, monkeypatch, three_classes, case):
    """A dataset's points, with the logistic, softmax and squared losses, on the fused tensor-core
    trainer (emulated where the device has no tensor cores): the loss and gradient of a batch
    three steps in against numpy at the half weights, and the batches walk the epochs as on every
    other path (two runs, one in two calls, give the same bytes)."""
    if not gpu.tensor_cores:
        emulate_tensor_cores(gpu, monkeypatch)
    source, fields = case
    source = three_classes if source == "three" else source
    config = _config(source, batch_size=200, seed=4, precision="half", **fields)
    trainer, again = Trainer(gpu, config), Trainer(gpu, config)
    assert trainer.plan.gradient_path == "fused", trainer.plan.gradient_path
    trainer.train(3)  # away from the initial weights and the first epoch's start
    params = trainer.parameters().astype(np.float16).astype(np.float32)
    loss, gradient = gpu_loss_and_gradient(trainer, step=trainer.step)
    ref_loss, ref_gradient = _reference(trainer, params)
    assert abs(loss - ref_loss) <= 2e-2 * ref_loss, (loss, ref_loss)
    assert np.max(np.abs(gradient - ref_gradient)) <= 2e-2 * np.max(np.abs(ref_gradient))
    again.train(1)
    again.train(2)
    assert again.parameters().tobytes() == trainer.parameters().tobytes()


def test_the_points_benchmark_writes_its_figures(tmp_path, capsys):
    from app.bench import points

    out = tmp_path / "points.json"
    assert points.main(["--points", "300", "--json", str(out)]) == 0
    row = json.loads(out.read_text())["rows"][0]
    assert row["points"] == 300 and all(row[key] > 0 for key in ("step_ms", "evaluation_pass_ms", "view_ms"))
    assert "300 points" in capsys.readouterr().out
