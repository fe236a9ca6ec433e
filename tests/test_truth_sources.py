"""One ground truth at a time, and the one the command line names wins (issue 25): conflicting
truth options are one line and exit 2, and in the window a preset, a file or a named truth is never
overridden by what the last session left selected; the window says what it restored."""

from __future__ import annotations

import json

import numpy as np
import pytest
import slangpy as spy
from reference import grid_centres
from test_bad_input import _assert_rejected, _run

from app.config.config import Config, validate
from app.config.files import SHAPE_PRESET, load_preset
from app.config.truths import with_dataset
from app.entry import cli
from app.entry.cli_args import build_parser, resolve_start
from app.files.network_io import forward


@pytest.mark.parametrize(
    "options,named",
    [
        (["--image", "{image}", "--dataset", "spiral"], ("--image", "--dataset")),
        (["--target", "x*y", "--dataset", "spiral"], ("--target", "--dataset")),
        (["--target-file", "assets/example-target.slang", "--image", "{image}"], ("--target-file", "--image")),
        (["--target", "x", "--target-file", "assets/example-target.slang"], ("--target", "--target-file")),
    ],
    ids=["image-dataset", "target-dataset", "file-image", "target-file"],
)
def test_two_truths_on_the_command_line_are_one_line_and_exit_2(gpu, tmp_path, options, named):
    spy.Bitmap(np.zeros((4, 4, 3), np.uint8)).write(str(tmp_path / "i.png"))
    args = [option.format(image=tmp_path / "i.png") for option in options]
    _assert_rejected(*_run(gpu, args, tmp_path), ["one ground truth", *named])


def test_dataset_none_goes_back_to_formulas_and_names_no_truth(gpu, tmp_path):
    """--dataset none beside --target trains on the formula: one output, x*y, no data in the
    summary, and an eval loss that is the trained network's error against x*y (numpy)."""
    result, out = _run(gpu, ["--dataset", "none", "--target", "x*y", "--eval-grid", "8"], tmp_path)
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    config = summary["config"]
    assert config["targets"] == ["x*y"] and config["dataset"] is None and "data" not in summary
    network = json.loads((out / "network.json").read_text())
    x, y = (a.ravel() for a in grid_centres(config["domain"], summary["eval_grid"]))
    predicted = forward(network, x, y)
    assert predicted.shape == (x.size, 1)
    assert np.mean((predicted[:, 0] - x * y) ** 2) == pytest.approx(summary["eval_loss"], rel=1e-4)


@pytest.fixture
def last_session(tmp_path) -> Config:
    """What a session that ended on the spiral, with L2 and another rate, would have saved."""
    spiral = validate(Config(hidden=[12], lr=0.03, regularization="l2", reg_rate=0.01))
    from app import datasets

    return with_dataset(spiral, datasets.entry_for("spiral"))


def _window_start(argv: list[str], last: Config) -> Config:
    args = build_parser().parse_args(argv)
    start = resolve_start(args, last)
    return cli._with_image(start.config, args)


def test_a_preset_and_an_image_beat_the_last_sessions_dataset(tmp_path, last_session):
    pixels = np.random.default_rng(0).integers(0, 256, (8, 12, 3), dtype=np.uint8)
    spy.Bitmap(pixels).write(str(tmp_path / "photo.png"))
    config = _window_start(["--preset", "photo", "--image", str(tmp_path / "photo.png")], last_session)
    assert config.dataset is None and config.image is not None and config.output_dim == 3
    photo = load_preset("photo")  # the preset's own fields, over the defaults
    assert (config.encoding, config.hidden, config.lr, config.regularization) == (
        photo.encoding,
        photo.hidden,
        photo.lr,
        "none",
    ), "nothing of the last session's (its rate, its L2) under a preset"
    assert config.domain == [-1.0, 1.0, -8 / 12, 8 / 12], "the image's domain, not the spiral's"


def test_a_named_target_beats_the_last_sessions_dataset_and_its_domain(last_session):
    config = _window_start(["--target", "x*y"], last_session)
    assert config.dataset is None and config.targets == ["x*y"] and config.domain == [-1.0, 1.0, -1.0, 1.0]
    assert config.hidden == [12] and config.lr == 0.03, "the rest of the last session stays"


def test_the_window_says_what_it_restored(last_session):
    said = cli._restored(last_session, build_parser().parse_args([]))
    assert "restored" in said and "dataset" in said and "regularization" in said and "--fresh" in said
    assert cli._restored(last_session, build_parser().parse_args(["--preset", "photo"])) == ""
    assert cli._restored(validate(Config()), build_parser().parse_args([])) == ""


def test_half_precision_that_cannot_hold_the_inputs_says_why(gpu, tmp_path):
    """Issue 25: a CSV of x and y in [0, 1000] in half precision ended in "loss became non-finite
    at step 1", exit 3, and no reason: poly2's x^2 reaches 1e6, past half's 65504."""
    rng = np.random.default_rng(2)
    points = rng.uniform(0, 1000, (60, 2))
    path = tmp_path / "big.csv"
    path.write_text("x,y,label\n" + "".join(f"{a:.2f},{b:.2f},{int(a > b)}\n" for a, b in points))
    result, out = _run(gpu, ["--dataset", str(path), "--precision", "half"], tmp_path)
    _assert_rejected(result, out, ["half precision", "poly2", "e+06", "--precision float"])
    result, _ = _run(gpu, ["--dataset", str(path), "--precision", "half", "--encoding", "raw"], tmp_path)
    assert result.returncode in (0, 3), result.stderr  # raw inputs of 1000 fit in half
    if result.returncode == 3:
        assert "large for half precision" in result.stderr, "a divergence names the likely cause"


def test_a_shape_starts_from_the_shape_preset_and_its_options_override_it(last_session):
    """--sdf alone trains on the shape preset's network, not the last session's; an option beside it
    changes that field only; --preset or --config name another starting point."""
    preset = load_preset(SHAPE_PRESET)
    assert preset.encoding != Config().encoding, "the preset is a network of its own"
    alone = _window_start(["--sdf", "circle"], last_session)
    assert alone.sdf == "circle" and alone.dataset is None and alone.lr == preset.lr
    assert (alone.encoding, alone.hidden, alone.eikonal, alone.grid_levels) == (
        preset.encoding,
        preset.hidden,
        preset.eikonal,
        preset.grid_levels,
    )
    wider = _window_start(["--sdf", "circle", "--hidden", "40"], last_session)
    assert wider.hidden == [40] and (wider.encoding, wider.eikonal) == (preset.encoding, preset.eikonal)
    tutorial = _window_start(["--sdf", "circle", "--preset", "tutorial"], last_session)
    assert tutorial.encoding == load_preset("tutorial").encoding and tutorial.sdf == "circle"
