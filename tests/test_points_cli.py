"""Datasets on the command line: a headless run's files (split.csv, summary.json's data block,
loss.csv's columns, a network.json that numpy evaluates to the summary's figures), --resume
restoring the same split bit for bit, --load-network, the Slang export of a classifier, and bad
data as one line with exit code 2 and nothing written."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
import slangpy as spy
from helpers import run_headless_here

from app.errors import UserError
from app.files.network_io import predict
from app.model.losses import LOSSES

SPIRAL = ["--dataset", "spiral", "--features", "x,y,x2,y2,xy,sinx,siny", "--hidden", "8", "--activation", "tanh"]


@pytest.fixture(scope="module")
def spiral_run(gpu, tmp_path_factory):
    folder = tmp_path_factory.mktemp("spiral")
    common = [*SPIRAL, "--noise", "0.1", "--points", "400", "--train-ratio", "0.3", "--batch-size", "32"]
    result = run_headless_here(
        gpu, folder, *common, "--iterations", "300", "--eval-every", "100", "--out", str(folder / "out"),
        "--save-checkpoint", str(folder / "run.ckpt"), "--export-slang", str(folder / "net.slang"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "test loss" in result.stdout and "accuracy" in result.stdout
    return folder, common


def test_the_run_writes_its_points_and_figures(spiral_run):
    folder, _ = spiral_run
    out = folder / "out"
    summary = json.loads((out / "summary.json").read_text())
    data = summary["data"]
    assert data["source"] == {"generator": "spiral"} and (data["points"], data["train"], data["test"]) == (
        400,
        120,
        280,
    )
    assert data["noise"] == 0.1 and data["problem"] == "binary" and data["classes"] == ["-1", "1"]
    assert data["epochs"] == pytest.approx(300 * 32 / 120)
    assert summary["eval_loss"] == data["metrics"]["test_loss"] and summary["eval_grad_loss"] is None
    rows = list(csv.DictReader((out / "split.csv").open()))
    assert len(rows) == 400 and sum(r["set"] == "train" for r in rows) == 120
    network = json.loads((out / "network.json").read_text())
    assert network["output"] == {"kind": "logistic", "classes": ["-1", "1"]} and network["data"]["train"] == 120
    assert network["encoding"] == {"kind": "features", "features": ["x", "y", "x2", "y2", "xy", "sinx", "siny"]}
    # numpy, from network.json and split.csv alone, gives the summary's figures
    x, y = (np.array([float(r[k]) for r in rows]) for k in "xy")
    label = np.array([r["label"] == "1" for r in rows])
    probability = predict(network, x, y)[:, 0]
    outputs = np.log(probability / (1 - probability))[:, None]
    losses = LOSSES["logistic"].numpy(outputs, label[:, None].astype(float))
    test = np.array([r["set"] == "test" for r in rows])
    metrics = data["metrics"]
    assert np.mean(losses[test]) == pytest.approx(metrics["test_loss"], rel=1e-4)
    assert np.mean((probability > 0.5)[test] == label[test]) == pytest.approx(metrics["test_accuracy"])
    assert np.mean((probability > 0.5)[~test] == label[~test]) == pytest.approx(metrics["train_accuracy"])
    header = (out / "loss.csv").read_text().splitlines()[0]
    assert header == "step,train_loss,test_loss,train_set_loss,train_accuracy,test_accuracy"


def test_resume_restores_the_split_and_the_batches(spiral_run, gpu):
    """The checkpoint after 300 steps, resumed to 400, against 400 steps in one go (in process:
    the command line's --resume is tests/test_resume_cli.py's)."""
    from app.files import checkpoint
    from app.files.start import Start
    from app.loop.session import Session

    folder, _ = spiral_run
    saved = checkpoint.load(folder / "run.ckpt")
    assert saved.data_position == 300 * 32
    resumed = Session(gpu, saved.config)
    Start(saved.config, checkpoint=saved).apply(resumed)
    assert resumed.trainer.data_position == 300 * 32
    resumed.advance(100)
    straight = Session(gpu, saved.config)
    straight.advance(400)
    assert np.array_equal(resumed.trainer.parameters(), straight.trainer.parameters())
    assert resumed.trainer.data.dataset.split_csv() == (folder / "out" / "split.csv").read_bytes()


def test_load_network_brings_its_dataset(spiral_run):
    from app.entry.cli_args import build_parser, resolve_start
    from app.entry.cli_checks import check_headless

    folder, _ = spiral_run
    args = build_parser().parse_args(["--headless", "--load-network", str(folder / "out" / "network.json")])
    check_headless(args)
    start = resolve_start(args)
    summary = json.loads((folder / "out" / "summary.json").read_text())
    config = summary["config"]
    for name in ("dataset", "points", "noise", "train_ratio", "data_seed", "features", "encoding", "domain"):
        assert getattr(start.config, name) == config[name], name
    refused = build_parser().parse_args(["--load-network", "n.json", "--dataset", "xor"])
    with pytest.raises(UserError, match="--dataset cannot be combined with --load-network"):
        check_headless(refused)


def test_the_export_gives_the_class_probabilities(spiral_run, gpu):
    folder, _ = spiral_run
    source = (folder / "net.slang").read_text()
    assert "// Trained on generator spiral: 400 points, 120 to train and 280 to test." in source
    device = spy.create_device(type=gpu.device.info.type, enable_hot_reload=False)
    device.load_module_from_source("exported_classifier", source)
    harness = (
        "import exported_classifier;\nfloat probability(float2 xy) { return trained_network_probabilities(xy)[0]; }\n"
    )
    module = spy.Module(device.load_module_from_source("classifier_harness", harness))
    xy = np.random.default_rng(2).uniform(-6, 6, (64, 2)).astype(np.float32)
    network = json.loads((folder / "out" / "network.json").read_text())
    expected = predict(network, xy[:, 0].astype(np.float64), xy[:, 1].astype(np.float64))[:, 0]
    assert np.allclose(module.probability(xy, _result="numpy"), expected, atol=2e-6)


BAD = {
    "ragged": ("x,y,label\n1,2,a\n3,4\n", "row 3 has 2 cells"),
    "not a number": ("x,y,label\n1,2,a\n3,x4,b\n", "row 3, column 2 (y): 'x4' is not a number"),
    "one class": ("1,2,a\n3,4,a\n", "single class"),
    "1e30": ("x,y,v\n1,2,3\n4,5,1e30\n", "row 3, column 3 (v)"),
}


def _main(capsys, *argv: str) -> str:
    """app.entry.cli's main in this process: its exit code must be 2 and stderr one line."""
    from app.entry.cli import main

    assert main(["--headless", "--quiet", *argv]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


@pytest.mark.parametrize("case", BAD.values(), ids=BAD.keys())
def test_bad_data_is_one_line_and_nothing_is_written(tmp_path, capsys, case):
    text, words = case
    path = tmp_path / "bad.csv"
    path.write_text(text)
    assert words in _main(capsys, "--dataset", str(path), "--iterations", "5", "--out", str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_unknown_features_and_datasets_are_refused(tmp_path, capsys):
    for args, words in (
        (["--features", "x,z"], "unknown features 'z'"),
        (["--features", "x", "--encoding", "poly2"], "--features is the feature encoding's setting"),
        (["--dataset", "spirals"], "unknown dataset 'spirals'"),
        (["--dataset", str(tmp_path)], "is a folder, not a CSV file"),
        (["--dataset", "xor", "--noise", "0.7"], "noise must be between 0 and 0.5"),
    ):
        assert words in _main(capsys, *args, "--iterations", "1", "--out", str(tmp_path / "out"))
