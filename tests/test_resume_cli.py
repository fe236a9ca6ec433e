"""--save-checkpoint, --resume, --export-slang and --load-network on the command line: a run
resumed after K steps writes a network.json byte-identical to an uninterrupted run, bad files
and contradicting options are one line and exit code 2 with nothing written."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from helpers import run_headless_here


@pytest.fixture
def run(gpu):
    """A headless run with these options, in this process (helpers.run_app)."""

    def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
        return run_headless_here(gpu, tmp_path, *args)

    return run


def assert_refused(result: subprocess.CompletedProcess, *words: str) -> None:
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.stderr, result.stderr
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.parametrize("precision", ["float", "half"])
def test_resumed_run_writes_a_byte_identical_network(run, tmp_path, precision):
    common = ["--precision", precision, "--batch-size", "2048", "--eval-every", "50", "--seed", "5"]
    whole = run(tmp_path, *common, "--iterations", "130", "--out", str(tmp_path / "whole"))
    first = run(
        tmp_path,
        *common,
        "--iterations",
        "55",
        "--out",
        str(tmp_path / "first"),
        "--save-checkpoint",
        str(tmp_path / "at55.ckpt"),
    )
    resumed = run(
        tmp_path,
        "--resume",
        str(tmp_path / "at55.ckpt"),
        "--iterations",
        "130",
        "--eval-every",
        "50",
        "--out",
        str(tmp_path / "resumed"),
    )
    for result in (whole, first, resumed):
        assert result.returncode == 0, result.stderr
    assert "checkpoint: " in first.stdout
    expected = (tmp_path / "whole" / "network.json").read_bytes()
    assert (tmp_path / "resumed" / "network.json").read_bytes() == expected
    assert (tmp_path / "first" / "network.json").read_bytes() != expected, "the first part really stopped early"
    whole_rows, resumed_rows, first_rows = (
        (tmp_path / name / "loss.csv").read_text().splitlines() for name in ("whole", "resumed", "first")
    )
    # One loss history, every column: the resumed run's differs only where the first part ended,
    # at step 55, with the evaluation it took then (its summary's eval loss).
    assert resumed_rows[0] == whole_rows[0] == "step,train_loss,eval_loss"
    first_end = json.loads((tmp_path / "first" / "summary.json").read_text())["eval_loss"]
    assert first_rows[55] == resumed_rows[55] == whole_rows[55] + repr(first_end)
    assert resumed_rows[:55] + resumed_rows[56:] == whole_rows[:55] + whole_rows[56:]
    summary, whole_summary = (json.loads((tmp_path / n / "summary.json").read_text()) for n in ("resumed", "whole"))
    assert summary["steps"] == 130 and summary["config"]["precision"] == precision
    assert resumed_rows[-1] == f"130,{whole_rows[-1].split(',')[1]},{summary['eval_loss']!r}"
    assert summary["eval_loss"] == whole_summary["eval_loss"]


def test_resume_defaults_and_overrides(run, tmp_path):
    assert (
        run(
            tmp_path, "--iterations", "20", "--out", str(tmp_path / "a"), "--save-checkpoint", str(tmp_path / "a.ckpt")
        ).returncode
        == 0
    )
    more = run(
        tmp_path,
        "--resume",
        str(tmp_path / "a.ckpt"),
        "--lr",
        "0.003",
        "--iterations",
        "25",
        "--out",
        str(tmp_path / "b"),
        "--export-slang",
        str(tmp_path / "b.slang"),
    )
    assert more.returncode == 0, more.stderr
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert summary["steps"] == 25 and summary["config"]["lr"] == 0.003
    source = (tmp_path / "b.slang").read_text()
    assert "25 steps" in source and "void trained_network(float2 xy, out float outputs[TRAINED_OUTPUTS])" in source
    assert_refused(
        run(tmp_path, "--resume", str(tmp_path / "a.ckpt"), "--iterations", "5", "--out", str(tmp_path / "c")),
        "--iterations 5",
        "step 20",
    )
    assert_refused(
        run(tmp_path, "--resume", str(tmp_path / "a.ckpt"), "--hidden", "8", "--out", str(tmp_path / "c")),
        "--hidden",
        "--resume",
    )
    assert not (tmp_path / "c").exists()


def test_load_network_starts_from_the_saved_weights(run, tmp_path):
    assert (
        run(
            tmp_path,
            "--iterations",
            "40",
            "--hidden",
            "12,6",
            "--activation",
            "tanh",
            "--encoding",
            "fourier",
            "--frequencies",
            "2",
            "--out",
            str(tmp_path / "a"),
        ).returncode
        == 0
    )
    again = run(
        tmp_path,
        "--load-network",
        str(tmp_path / "a" / "network.json"),
        "--iterations",
        "0",
        "--out",
        str(tmp_path / "b"),
    )
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "b" / "network.json").read_bytes() == (tmp_path / "a" / "network.json").read_bytes()
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert summary["config"]["hidden"] == [12, 6] and summary["config"]["encoding"] == "fourier"
    assert summary["eval_loss"] == pytest.approx(json.loads((tmp_path / "a" / "summary.json").read_text())["eval_loss"])


@pytest.mark.parametrize(
    "content,words",
    [
        (b"", ["not a Slang Visual Trainer checkpoint"]),
        (b"SVTCKPT\0\x01\0\0\0", ["truncated"]),
        (b"SVTCKPT\0\x09\0\0\0" + bytes(60), ["version 9"]),
    ],
)
def test_bad_checkpoint_writes_nothing(run, tmp_path, content, words):
    path = tmp_path / "bad.ckpt"
    path.write_bytes(content)
    out = tmp_path / "out"
    assert_refused(
        run(tmp_path, "--resume", str(path), "--out", str(out), "--save-checkpoint", str(tmp_path / "new.ckpt")),
        "bad.ckpt",
        *words,
    )
    assert not out.exists() and not (tmp_path / "new.ckpt").exists()


def test_output_files_are_checked_before_training(run, tmp_path):
    assert_refused(run(tmp_path, "--export-slang", str(tmp_path / "net.txt")), "--export-slang", ".slang")
    assert_refused(run(tmp_path, "--save-checkpoint", str(tmp_path)), "--save-checkpoint", "folder")
    assert_refused(
        run(tmp_path, "--save-checkpoint", str(tmp_path / "missing" / "x" / "a.ckpt"), "--out", str(tmp_path / "o")),
        "--save-checkpoint",
    )  # parent folders are not created
    assert not (tmp_path / "o").exists()


SDF_RUN = ["--sdf", "circle", "--preset", "default", "--eikonal", "0.1", "--batch-size", "1024", "--eval-every", "50"]
SDF_RUN += ["--seed", "3"]


def test_a_distance_fields_network_json_brings_its_shape_back(run, tmp_path):
    """network.json names the shape; --load-network of it learns the same truth: the same
    eval losses (value and gradient) on the untouched weights, and the same network.json."""
    first = run(tmp_path, *SDF_RUN, "--iterations", "40", "--out", str(tmp_path / "a"))
    assert first.returncode == 0, first.stderr
    network = json.loads((tmp_path / "a" / "network.json").read_text())
    assert network["sdf"] == {"shape": "circle"} and network["targets"] == []
    again = run(
        tmp_path, "--load-network", str(tmp_path / "a" / "network.json"), "--eikonal", "0.1",
        "--iterations", "0", "--out", str(tmp_path / "b"),
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "b" / "network.json").read_bytes() == (tmp_path / "a" / "network.json").read_bytes()
    before, after = (json.loads((tmp_path / name / "summary.json").read_text()) for name in "ab")
    assert after["config"]["sdf"] == "circle"
    assert after["eval_loss"] == before["eval_loss"] and after["eval_grad_loss"] == before["eval_grad_loss"]


def test_a_resumed_distance_field_run_writes_a_byte_identical_network(run, tmp_path):
    """100 steps straight, or 50, a checkpoint and 50 more: the same network.json, shape and all."""
    whole = run(tmp_path, *SDF_RUN, "--iterations", "100", "--out", str(tmp_path / "whole"))
    first = run(
        tmp_path, *SDF_RUN, "--iterations", "50", "--out", str(tmp_path / "first"),
        "--save-checkpoint", str(tmp_path / "at50.ckpt"),
    )  # fmt: skip
    resumed = run(
        tmp_path, "--resume", str(tmp_path / "at50.ckpt"), "--iterations", "100", "--out", str(tmp_path / "resumed")
    )
    for result in (whole, first, resumed):
        assert result.returncode == 0, result.stderr
    expected = (tmp_path / "whole" / "network.json").read_bytes()
    assert (tmp_path / "resumed" / "network.json").read_bytes() == expected
    assert (tmp_path / "first" / "network.json").read_bytes() != expected, "the first part really stopped early"
    assert json.loads(expected)["sdf"] == {"shape": "circle"}
    config = json.loads((tmp_path / "resumed" / "summary.json").read_text())["config"]
    assert config["sdf"] == "circle" and config["eikonal"] == 0.1 and config["seed"] == 3


@pytest.mark.parametrize(
    "entry,words", [("circle", ['sdf must be {"shape"']), ({"shape": "hexagon"}, ["hexagon", "circle"])]
)
def test_a_bad_sdf_entry_is_one_line(tmp_path, entry, words):
    from app.config.config import Config, validate
    from app.errors import UserError
    from app.files.network_io import export_network, load_network
    from app.kernels.planning import plan_for

    config = validate(Config(sdf="circle"))
    plan = plan_for(config)
    document = export_network(plan, config, np.zeros(plan.param_count, np.float32))
    document["sdf"] = entry
    (tmp_path / "network.json").write_text(json.dumps(document))
    with pytest.raises(UserError) as error:
        load_network(str(tmp_path / "network.json"), Config())
    message = str(error.value)
    assert "\n" not in message and message.startswith("--load-network ")
    assert all(word in message for word in words), message
