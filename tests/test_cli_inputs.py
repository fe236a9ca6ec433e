"""What the command line accepts and says, checked in-process: --config reads a sweep's
best.json; --out makes the folder an export names inside it, and refuses a folder of another
kind (a race's, a sweep's); network options beside --resume that agree with the checkpoint are
accepted; derivative terms through a piecewise-linear activation get a note; a resumed run and a
run of no steps say what they trained (one real run of a 4-wide network)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import slangpy as spy

from app.config.config import Config
from app.config.files import load_file
from app.entry import cli
from app.entry.cli_args import build_parser, resolve_start
from app.entry.cli_checks import check_headless
from app.errors import UserError, counted
from app.files import checkpoint as ckpt
from app.kernels.planning import plan_for
from app.loop.history import Run
from app.sweep.space import space_from
from app.sweep.table import TrialRecord, best_document


def _checked(*argv: str) -> None:
    check_headless(build_parser().parse_args(["--headless", *argv]))


def _refusal(check, *argv: str) -> str:
    with pytest.raises(UserError) as caught:
        check(*argv)
    return str(caught.value)


def _resumed(argv: list[str]):
    """The start of a headless run with these options, checked as the command line checks them."""
    args = build_parser().parse_args(["--headless", *argv])
    check_headless(args)
    return resolve_start(args)


def _save_checkpoint(path, config: Config, step: int = 5) -> None:
    """A checkpoint of `config` at `step`, as a run would leave it (its weights all 0.1), its
    history a loss a step and an evaluation at its last."""
    p = plan_for(config).param_count
    run = Run("run 1")
    run.train.extend(np.arange(1, step + 1), np.full(step, 0.5))
    run.eval.extend(step, 0.5)
    state = ckpt.Checkpoint(config, step, step, step * config.batch_size, np.full(p, 0.1, np.float32), None,
                            np.zeros(2 * p, np.float32), [run])  # fmt: skip
    ckpt.save(path, state)


def test_counts_in_messages_take_the_right_number():
    assert [counted(n, "row") for n in (0, 1, 2, 1024)] == ["0 rows", "1 row", "2 rows", "1,024 rows"]
    assert (counted(1, "match", "matches"), counted(3, "match", "matches")) == ("1 match", "3 matches")


def test_config_loads_a_sweeps_best_json_and_names_the_file_of_a_bad_field(tmp_path):
    space = space_from({"base": {"hidden": [8], "iterations": 50}, "search": {"lr": {"loguniform": [1e-4, 0.1]}}}, "s")
    record = TrialRecord(3, "complete", 0.01, 50, 1.0, "gpu", 0, {"lr": 0.0042}, "")
    best = tmp_path / "best.json"
    best.write_text(json.dumps(best_document(record, space)))  # as the sweep writes it
    config = load_file(best)
    assert (config.hidden, config.lr) == ([8], 0.0042)
    bad = tmp_path / "bad.json"
    bad.write_text('{"dataset": "spiral"}')
    assert _refusal(load_file, bad).startswith(f"config file {str(bad)!r}: dataset must be null or an object")


def test_out_makes_the_folder_of_an_export_inside_it(tmp_path):
    run = tmp_path / "run"
    _checked("--out", str(run), "--export-slang", str(run / "net.slang"), "--save-checkpoint", str(run / "a.ckpt"))
    _checked("--out", str(run), "--screenshot", str(run / "pictures" / "shot.png"))
    assert not run.exists(), "checking writes nothing"
    elsewhere = _refusal(_checked, "--out", str(run), "--export-slang", str(tmp_path / "other" / "net.slang"))
    assert elsewhere.endswith(f"the folder {str(tmp_path / 'other')!r} does not exist")


def test_out_refuses_a_folder_of_another_kind(tmp_path):
    kinds = {"race": ("race.csv", "summary.json"), "sweep": ("space.json", "trials.csv"), "run": ("summary.json",)}
    for kind, names in kinds.items():
        (tmp_path / kind).mkdir()
        for name in names:
            (tmp_path / kind / name).write_text("{}")
    race = ("--variant", "", "--variant", "lr=0.1")
    _checked("--out", str(tmp_path / "run"))  # a run over a run's folder: it replaces the files it wrote
    _checked("--out", str(tmp_path / "race"), *race)
    for out, options, says in (
        ("race", (), "a race's folder: a headless run would write over"),
        ("sweep", (), "a sweep's folder: a headless run would write over"),
        ("run", race, "a headless run's folder: a race would write over"),
        ("sweep", race, "a sweep's folder: a race would write over"),
    ):
        message = _refusal(_checked, "--out", str(tmp_path / out), *options)
        assert message.startswith(f"--out {str(tmp_path / out)!r} is {says} some of its files"), message
    assert json.loads((tmp_path / "race" / "summary.json").read_text()) == {}


def test_resume_takes_network_options_that_agree_with_the_checkpoint(tmp_path):
    path = tmp_path / "r.ckpt"
    _save_checkpoint(path, Config(hidden=[32], activation="tanh", sdf="circle"))

    def start(*argv: str):
        return _resumed(["--resume", str(path), *argv])

    config = start("--hidden", "32", "--activation", "tanh", "--sdf", "circle", "--encoding", "poly2", "--lr", "0.1")
    assert (config.config.hidden, config.config.lr, config.step) == ([32], 0.1, 5)
    for argv, says in (
        (["--hidden", "64"], "--hidden 64 cannot be combined with --resume: the checkpoint has --hidden 32"),
        (["--hidden", "32", "--activation", "relu"], "--activation relu cannot be combined with --resume: the "),
        (["--sdf", "star"], "--sdf star cannot be combined with --resume: the checkpoint learns the shape circle"),
        (["--target", "x"], "--target x cannot be combined with --resume: the checkpoint learns the shape circle"),
        (["--features", "x,y"], "--features x,y cannot be combined with --resume: the checkpoint has --encoding"),
    ):
        assert _refusal(start, *argv).startswith(says)


def test_resume_takes_its_own_image_and_slang_file_and_no_other(tmp_path):
    from app.truth import image_truth

    pixels = (np.arange(48, dtype=np.uint8).reshape(4, 4, 3) * 5).astype(np.uint8)
    image, other = tmp_path / "a.png", tmp_path / "b.png"
    spy.Bitmap(pixels).write(str(image))
    spy.Bitmap(255 - pixels).write(str(other))
    info, _ = image_truth.load(image)
    _save_checkpoint(tmp_path / "image.ckpt", Config(image=info))
    slang = tmp_path / "t.slang"
    slang.write_text(
        "static const int TARGET_COUNT = 1;\n[Differentiable] float target(float2 p, int k) { return p.x; }\n"
    )
    _save_checkpoint(
        tmp_path / "slang.ckpt", Config(slang_target={"file": str(slang), "source": slang.read_text(), "count": 1})
    )

    def start(ckpt_name: str, *argv: str):
        return _resumed(["--resume", str(tmp_path / ckpt_name), *argv])

    assert start("image.ckpt", "--image", str(image)).config.image == info
    assert start("slang.ckpt", "--target-file", str(slang)).config.slang_target["source"] == slang.read_text()
    says = f"--image {other} cannot be combined with --resume: the checkpoint learns the image {image}"
    assert _refusal(start, "image.ckpt", "--image", str(other)).startswith(says)
    assert _refusal(start, "slang.ckpt", "--image", str(image)).startswith(f"--image {image} cannot be combined")
    slang.write_text(slang.read_text().replace("p.x", "p.y"))
    assert _refusal(start, "slang.ckpt", "--target-file", str(slang)).startswith("--target-file ")


def test_derivative_terms_through_a_piecewise_linear_activation_get_a_note(monkeypatch, capsys, tmp_path):
    def no_device(*args, **kwargs):
        raise UserError("no device in this test")

    monkeypatch.setattr("app.gpu.gpu.create_gpu", no_device)
    out = ["--headless", "--out", str(tmp_path / "out")]
    for options, note in (
        (
            ["--sdf", "circle", "--eikonal", "0.1", "--activation", "leaky_relu"],
            "note: --eikonal fits the network's input gradient, which leaky_relu",
        ),
        (["--grad-weight", "1", "--activation", "relu"], "note: --grad-weight fits the network's input gradient"),
        (["--sdf", "circle", "--eikonal", "0.1", "--activation", "softplus"], None),
        (["--activation", "relu"], None),
    ):
        assert cli.main([*out, *options]) == cli.EXIT_USAGE
        lines = capsys.readouterr().err.strip().splitlines()
        assert lines[-1] == "error: no device in this test"
        if note is None:
            assert len(lines) == 1, lines
        else:
            assert len(lines) == 2 and lines[0].startswith(note), lines
            assert lines[0].endswith("a smooth activation fits it far better: --activation softplus, silu, sin or tanh")


def test_a_race_of_no_steps_is_refused(capsys, tmp_path):
    assert cli.main(["--headless", "--iterations", "0", "--variant", "", "--variant", "lr=0.1"]) == cli.EXIT_USAGE
    assert capsys.readouterr().err.strip() == (
        "error: --iterations 0 races no step: a race needs --iterations of at least 1"
    )


def test_a_resumed_run_and_a_run_of_no_steps_say_what_they_trained(gpu, monkeypatch, capsys, tmp_path):
    monkeypatch.setattr("app.gpu.gpu.create_gpu", lambda *args, **kwargs: gpu)
    tiny = Config(hidden=[4], batch_size=64, eval_grid=8)
    _save_checkpoint(tmp_path / "r.ckpt", tiny, step=5)
    resumed = tmp_path / "resumed"
    argv = ["--headless", "--quiet", "--resume", str(tmp_path / "r.ckpt"), "--hidden", "4", "--iterations", "9"]
    assert cli.main([*argv, "--out", str(resumed), "--export-slang", str(resumed / "net.slang")]) == 0
    done = capsys.readouterr().out.strip().splitlines()
    assert done[0] == f"slang: {resumed / 'net.slang'}"
    assert done[1].startswith("done: 4 steps in ") and " s (resumed at step 5: 9 in all), train loss " in done[1]
    assert json.loads((resumed / "summary.json").read_text())["steps"] == 9
    argv[-1] = "5"  # the checkpoint's own step: no step, the checkpoint's network evaluated and written
    assert cli.main([*argv, "--out", str(tmp_path / "again")]) == 0
    done = capsys.readouterr().out.strip()
    assert (
        done.startswith("done: no steps trained, the network as it starts at step 5: eval loss ") and "nan" not in done
    )
    start = tmp_path / "start"
    fresh = ["--headless", "--quiet", "--hidden", "4", "--batch-size", "64", "--eval-grid", "8", "--iterations", "0"]
    assert cli.main([*fresh, "--out", str(start)]) == 0
    done = capsys.readouterr().out.strip()
    assert (
        done.startswith("done: no steps trained, the network as it starts at step 0: eval loss ") and "nan" not in done
    )
    summary = json.loads((start / "summary.json").read_text())
    assert summary["steps"] == 0 and summary["train_loss"] is None and summary["eval_loss"] > 0
