"""A user's own Slang file as the ground truth: one that compiles (its values and derivatives
against numpy), ones that don't (the compiler's message and line, nothing changed), one whose
truth is not finite, one trained headless, and one edited while the window runs."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import run_headless_here
from reference import grid_centres

from app.config.config import Config, validate
from app.errors import UserError
from app.files.network_io import forward
from app.gpu import target_probe
from app.loop.session import Session
from app.train.trainer import Trainer
from app.truth.slang_file import SlangTargetError
from app.views.evaluation import GridEvaluator

ROOT = Path(__file__).resolve().parent.parent
RIPPLE = """// two targets: a ripple and a saddle
static const int TARGET_COUNT = 2;

[Differentiable]
float target(float2 p, int k)
{
    float r = length(p);
    if (k == 0)
        return sin(6.0 * r) / (1.0 + r);
    return 0.5 * p.x * p.y;
}
"""


def ripple(x, y):
    r = np.hypot(x, y)
    return np.stack([np.sin(6 * r) / (1 + r), 0.5 * x * y], axis=-1)


def _write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def test_a_file_that_compiles_is_the_truth(gpu, tmp_path):
    target = target_probe.load(gpu, _write(tmp_path / "ripple.slang", RIPPLE))
    assert target["count"] == 2 and target["source"] == RIPPLE
    config = validate(Config(slang_target=target, hidden=[8]))
    assert config.output_dim == 2 and config.target_labels() == ["target(p, 0)", "target(p, 1)"]
    evaluation = GridEvaluator(Trainer(gpu, config), 16).evaluate()
    x, y = (a.astype(np.float64) for a in grid_centres(config.domain, 16))
    np.testing.assert_allclose(evaluation.truths, ripple(x, y), atol=2e-6)
    h = 1e-6
    np.testing.assert_allclose(
        evaluation.derivatives[..., 2], (ripple(x + h, y) - ripple(x - h, y)) / (2 * h), rtol=1e-4, atol=2e-5
    )
    np.testing.assert_allclose(
        evaluation.derivatives[..., 3], (ripple(x, y + h) - ripple(x, y - h)) / (2 * h), rtol=1e-4, atol=2e-5
    )


def test_the_example_file_compiles(gpu):
    target = target_probe.load(gpu, str(ROOT / "assets" / "example-target.slang"))
    assert target["count"] == 2


BROKEN = {
    "syntax": (
        RIPPLE.replace("return 0.5 * p.x * p.y;", "return 0.5 * p.x * p.y"),
        ["broken.slang:11:1", "expected ';'"],
    ),
    "unknown name": (RIPPLE.replace("length(p)", "lenght(p)"), ["broken.slang:7:15", "lenght"]),
    "no TARGET_COUNT": (RIPPLE.replace("static const int TARGET_COUNT = 2;", ""), ["must define", "TARGET_COUNT"]),
    "not differentiable": (RIPPLE.replace("[Differentiable]\n", ""), ["must define", "fwd_diff"]),
    "wrong signature": (RIPPLE.replace("float2 p, int k", "float2 p"), ["broken.slang:8:9", "'k'", "and 1 more"]),
    "too many targets": (
        RIPPLE.replace("TARGET_COUNT = 2", "TARGET_COUNT = 9"),
        ["TARGET_COUNT must be between 1 and 8"],
    ),
}


@pytest.mark.parametrize("name", BROKEN)
def test_a_file_that_does_not_compile_is_an_error_with_the_compilers_line(gpu, tmp_path, name):
    text, words = BROKEN[name]
    with pytest.raises(SlangTargetError) as caught:
        target_probe.load(gpu, _write(tmp_path / "broken.slang", text))
    message = str(caught.value)
    assert "\n" not in message and message.startswith(("target file", "broken.slang"))
    for word in words:
        assert word in message, message
    assert caught.value.messages and all("\n" not in line for line in caught.value.messages)


@pytest.mark.parametrize(
    "content,words",
    [(None, "cannot read"), (b"\xff\xfe", "not UTF-8"), (b"x" * 70000, "larger than"), (b"a\0b", "NUL")],
)
def test_an_unreadable_file_is_an_error(gpu, tmp_path, content, words):
    path = tmp_path / "bad.slang"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(UserError, match=words):
        target_probe.load(gpu, str(path))


def test_a_truth_that_is_not_finite_is_refused(gpu, tmp_path):
    text = RIPPLE.replace("return 0.5 * p.x * p.y;", "return log(p.x);")
    target = target_probe.load(gpu, _write(tmp_path / "log.slang", text))
    with pytest.raises(UserError, match=r"target f2 = target\(p, 1\) of log.slang is nan at x = -0.9"):
        Session(gpu, validate(Config(slang_target=target, hidden=[8])), grid=16)


def test_headless_run_with_a_target_file_fits(gpu, tmp_path):
    path = _write(tmp_path / "ripple.slang", RIPPLE)
    out = tmp_path / "run"
    result = run_headless_here(
        gpu,
        tmp_path,
        "--target-file",
        path,
        "--hidden",
        "8",
        "--encoding",
        "fourier",
        "--frequencies",
        "2",
        "--activation",
        "tanh",
        "--iterations",
        "400",
        "--eval-grid",
        "32",
        "--out",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["config"]["slang_target"]["source"] == RIPPLE, "the run keeps the code it fit"
    network = json.loads((out / "network.json").read_text())
    assert network["targets"] == [] and network["slang_target"] == {"file": path, "count": 2}
    x, y = (a.ravel() for a in grid_centres([-1, 1, -1, 1], 32))
    loss = np.mean(np.sum((forward(network, x, y) - ripple(x, y)) ** 2, axis=1))
    untrained = np.mean(np.sum((ripple(x, y) - ripple(x, y).mean(axis=0)) ** 2, axis=1))
    assert loss == pytest.approx(summary["eval_loss"], rel=1e-3)
    assert loss < 0.1 * untrained, (loss, untrained)


def test_a_broken_target_file_on_the_command_line(gpu, tmp_path):
    path = _write(tmp_path / "broken.slang", BROKEN["syntax"][0])
    out = tmp_path / "run"
    result = run_headless_here(gpu, tmp_path, "--target-file", path, "--out", str(out))
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert lines[0].startswith("error: target file 'broken.slang' does not compile: broken.slang:11:1")
    assert not out.exists()


def test_a_file_edited_while_the_window_runs(gpu, tmp_path):
    from app.ui.offscreen import OffscreenApp

    path = _write(tmp_path / "live.slang", RIPPLE)
    config = validate(Config(slang_target=target_probe.load(gpu, path), hidden=[8]))
    ui = OffscreenApp(Session(gpu, config, grid=32, heatmaps=True), 1280, 800)
    try:
        ui.frame(3)

        def frames_until(condition, seconds=90):
            deadline = time.monotonic() + seconds
            while not condition() and time.monotonic() < deadline:
                ui.frame()
                time.sleep(0.02)  # the watch looks twice a second
            return condition()

        # A good edit: the truth follows, the network keeps training.
        _write(tmp_path / "live.slang", RIPPLE.replace("0.5 * p.x * p.y", "p.x - p.y"))
        assert frames_until(lambda: "p.x - p.y" in ui.session.config.slang_target["source"])
        evaluation = ui.session.evaluator.evaluate()
        x, y = grid_centres(config.domain, 32)
        np.testing.assert_allclose(evaluation.truths[..., 1], x - y, atol=1e-6)
        # A broken edit: the compiler's line in the panel, the previous targets stay, training goes on.
        _write(tmp_path / "live.slang", RIPPLE.replace("length(p)", "lenght(p)"))
        assert frames_until(lambda: bool(ui.app.targets.file_messages))
        assert any("live.slang:7:15" in line for line in ui.app.targets.file_messages)
        assert "p.x - p.y" in ui.session.config.slang_target["source"] and ui.session.rebuild is None
        step = ui.session.trainer.step
        assert frames_until(lambda: ui.session.trainer.step > step) and np.isfinite(ui.session.train_loss)
        assert "target file error" in ui.app.rects, "the messages are on screen"
        # Fixed again: picked up.
        _write(tmp_path / "live.slang", RIPPLE)
        assert frames_until(lambda: ui.session.config.slang_target["source"] == RIPPLE)
        assert not ui.app.targets.file_messages
    finally:
        ui.close()
