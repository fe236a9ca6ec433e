"""TensorBoard event files (--tensorboard, app/files/tensorboard_events.py) read back by TensorBoard's
own reader: an image target's and a dataset's figures and images against the session's own, which
evaluations bring images, a resumed run that hides the events past its step and a fresh one that
replaces them, and the refusals before anything trains (tensorboardX missing among them). A
headless run's, a race's and a sweep's events are checked against their files in test_headless.py,
test_race.py and test_sweep.py."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
import slangpy as spy
from tensorboard_reader import read_events
from test_images import sharp_edges

from app.config.config import Config, validate
from app.config.truths import with_dataset
from app.entry.cli import main
from app.files.tensorboard_events import RunEvents, TensorboardOptions
from app.files.tensorboard_images import png_bytes
from app.loop.session import Session
from app.sweep.command import main as sweep_main
from app.truth import image_truth


def _evaluate(session: Session, events: RunEvents, steps: int) -> None:
    session.advance(steps)
    session.evaluate()
    events.evaluation(session, 1000.0)


def test_an_image_target_writes_its_psnr_and_its_truth_beside_what_it_learned(gpu, tmp_path):
    spy.Bitmap(sharp_edges(24)).write(str(tmp_path / "edges.png"))
    info, pixels = image_truth.load(tmp_path / "edges.png")
    domain = image_truth.aspect_domain(24, 24)
    config = validate(Config(image=info, domain=domain, hidden=[8], batch_size=512, eval_grid=16))
    session = Session(gpu, config, heatmaps=True)
    events = RunEvents(TensorboardOptions(str(tmp_path / "tb"), image_every=1), session)
    _evaluate(session, events, 5)
    events.close(session, "complete")
    read = read_events(tmp_path / "tb")
    assert read.last("psnr") == pytest.approx(session.image.psnr, rel=1e-6)
    assert read.last("image_loss") == pytest.approx(session.image.loss, rel=1e-6)
    assert read.metrics == ["psnr"] and read.status == "STATUS_SUCCESS"
    assert json.loads(read.hparams["image"]) == info and read.hparams["hidden"] == "[8]"
    [(step, image)] = read.images["heatmaps/image"]
    assert step == 5 and image.shape == (24, 2 * 24 + 2, 3)
    grey = np.round(pixels[..., 0] * 255).astype(np.uint8)
    learned = image_truth.to_png_array(session.image.learned())[..., 0]
    assert np.array_equal(image[:, :24, 0], grey) and np.array_equal(image[:, 26:, 1], learned)
    assert not np.array_equal(learned, grey)  # five steps in, the network is not the image


def test_a_dataset_writes_its_sets_figures_and_its_points_over_the_function(gpu, tmp_path):
    config = with_dataset(
        validate(
            Config(encoding="features", features=["x", "y"], hidden=[4], domain=[-6.0, 6.0, -6.0, 6.0], eval_grid=16)
        ),
        {"generator": "spiral"},
    )
    session = Session(gpu, config, heatmaps=True)
    events = RunEvents(TensorboardOptions(str(tmp_path / "tb")), session)
    _evaluate(session, events, 3)
    events.close(session, "interrupted")
    read = read_events(tmp_path / "tb")
    metrics = session.metrics
    assert read.last("test_loss") == pytest.approx(metrics["test_loss"], rel=1e-6)
    assert read.last("train_set_loss") == pytest.approx(metrics["train_loss"], rel=1e-6)
    for name in ("train_accuracy", "test_accuracy"):
        assert read.last(name) == pytest.approx(metrics[name], rel=1e-6)
    assert "eval_grad_loss" not in read.scalars  # points have no truth between them to differentiate
    assert read.metrics == ["test_loss"] and read.status == "STATUS_UNKNOWN"
    [(step, image)] = read.images["heatmaps/data"]
    assert step == 3 and image.shape == (512, 512, 3)
    assert len(np.unique(image.reshape(-1, 3), axis=0)) > 100  # the function's colours and the points'


def test_every_kth_evaluation_and_the_last_bring_images_and_zero_none(gpu, tmp_path):
    session = Session(gpu, validate(Config(hidden=[4], batch_size=256, eval_grid=16, targets=["x*y"])), heatmaps=True)
    for every, evaluations, imaged in ((2, 4, [1, 3, 4]), (2, 5, [1, 3, 5]), (0, 2, [])):
        first = session.trainer.step  # each case a run resumed where the last stopped
        folder = tmp_path / f"every-{every}-{evaluations}"
        events = RunEvents(TensorboardOptions(str(folder), image_every=every), session)
        for _ in range(evaluations):
            _evaluate(session, events, 1)
        events.close(session, "complete")
        read = read_events(folder)
        assert [step - first for step, _ in read.scalars["eval_loss"]] == list(range(1, evaluations + 1))
        assert [step - first for step, _ in read.images.get("heatmaps/values", [])] == imaged, every
        for _, image in read.images.get("heatmaps/values", []):
            assert image.shape == (16, 3 * 16 + 2 * 2, 3)


def test_a_resumed_run_hides_the_events_past_its_step_and_a_fresh_one_replaces_them(gpu, tmp_path):
    """A run resumed at step 2 into the same folder: TensorBoard shows the first run's events up to
    step 2 and the resumed run's after it (purge_step); a run from step 0 replaces the files."""
    config = validate(Config(hidden=[4], batch_size=256, eval_grid=16, targets=["x*y"]))
    folder = str(tmp_path / "tb")
    first = Session(gpu, config, heatmaps=True)
    events = RunEvents(TensorboardOptions(folder, image_every=0), first)
    for _ in range(4):
        _evaluate(first, events, 1)
    events.close(first, "complete")
    resumed = Session(gpu, config, heatmaps=True)
    resumed.advance(2)
    resumed.apply(config.replace(lr=0.05))  # another rate from step 2 on: other losses
    events = RunEvents(TensorboardOptions(folder, image_every=0), resumed)
    _evaluate(resumed, events, 1)
    events.close(resumed, "complete")
    read = read_events(tmp_path / "tb")
    earlier = dict(read_events_of(first))
    assert [step for step, _ in read.scalars["eval_loss"]] == [1, 2, 3]
    assert read.scalars["eval_loss"][1][1] == pytest.approx(earlier[2], rel=1e-6)
    assert read.scalars["eval_loss"][2][1] == pytest.approx(resumed.eval_loss, rel=1e-6) != earlier[3]
    fresh = Session(gpu, config, heatmaps=True)
    events = RunEvents(TensorboardOptions(folder, image_every=0), fresh)
    _evaluate(fresh, events, 1)
    events.close(fresh, "complete")
    assert [step for step, _ in read_events(tmp_path / "tb").scalars["eval_loss"]] == [1]
    assert len(list((tmp_path / "tb").glob("events.out.tfevents.*"))) == 1


def read_events_of(session: Session) -> list[tuple[int, float]]:
    """The session's eval curve, step and loss (its history, not the event files)."""
    _, at, _, _, mean, _ = session.history.current.eval.rows()
    return [(int(step), float(value)) for step, value in zip(at, mean)]


def test_png_bytes_decode_to_the_same_pixels():
    pixels = np.random.default_rng(3).integers(0, 256, (7, 5, 3), dtype=np.uint8)
    path_free = png_bytes(pixels)
    from tensorboard_reader import _decode

    assert np.array_equal(_decode(path_free), pixels)


@pytest.mark.parametrize(
    "args, says",
    [
        (["--tensorboard-images", "3"], "--tensorboard-images is for --tensorboard DIR, which is not given"),
        (["--tensorboard", "TB", "--tensorboard-images", "-1"], "--tensorboard-images must be 0 or more (got -1)"),
        (["--tensorboard", "FILE"], "cannot write --tensorboard"),
    ],
)
def test_bad_tensorboard_options_are_one_line_before_anything_runs(tmp_path, capsys, args, says):
    (tmp_path / "FILE").write_text("a file, not a folder")
    args = [str(tmp_path / a) if a in ("TB", "FILE") else a for a in args]
    assert main(["--headless", "--iterations", "5", "--out", str(tmp_path / "out"), *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0], err
    assert not (tmp_path / "out").exists() and not (tmp_path / "TB").exists()


def test_the_window_refuses_tensorboard(capsys):
    assert main(["--tensorboard", "tb"]) == 2
    assert capsys.readouterr().err.strip() == "error: --tensorboard is for --headless runs, races and sweeps"


def test_without_tensorboardx_runs_and_sweeps_say_how_to_install_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorboardX", None)  # as if it were not installed
    hint = "pip install 'slang-visual-trainer[tensorboard]'"
    code = main(["--headless", "--iterations", "5", "--out", str(tmp_path / "out"), "--tensorboard", str(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("error: --tensorboard needs tensorboardX") and hint in err, err
    assert "\n" not in err and not (tmp_path / "out").exists()
    (tmp_path / "space.json").write_text(json.dumps({"search": {"lr": {"choice": [0.01, 0.1]}}, "trials": 2}))
    code = sweep_main([str(tmp_path / "space.json"), "--out", str(tmp_path / "sweep"), "--tensorboard", "tb"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("error: --tensorboard needs tensorboardX") and hint in err, err
    assert not (tmp_path / "sweep").exists()
