"""The window's frames drive the one training session: a divergence pauses and puts back the last
finite network, and a network whose step does not fit in a frame trains in pieces that keep
the frames short and the weights identical to whole steps."""

from __future__ import annotations

import math
import statistics
import time

import numpy as np
import pytest
from imgui_bundle import imgui  # a dependency: a broken install fails here, never skips
from test_ui_offscreen import _centre, _type

from app.config.config import Config, validate
from app.loop.budget import FRAME_SECONDS
from app.train.trainer import Trainer
from app.ui.offscreen import OffscreenApp

MAX_TEST_BATCH = 1 << 22


@pytest.fixture
def ui(make_session):
    app = OffscreenApp(make_session(optimizer="sgd"), 1280, 800)
    app.frame(2)
    yield app
    app.close()


def _diverge(ui) -> None:
    """Trains a stable stretch at the default lr, then types a learning rate that diverges."""
    while ui.session.trainer.step < 80:
        ui.frame()
    ui.click(*_centre(ui, "exact lr"))
    _type(ui, "5")  # plain SGD diverges on these targets above lr ~0.5, at 5 within a few steps
    assert ui.session.config.lr == 5
    if ui.frames_until(lambda: ui.session.divergence is not None):
        ui.frames_until_still("resume", "back to stable")  # then aims at where the buttons stay


def test_divergence_pauses_and_puts_back_the_last_finite_network(ui, tmp_path, monkeypatch):
    _diverge(ui)
    divergence = ui.session.divergence
    assert divergence is not None, "the loss diverged"
    assert not ui.app.running, "training paused"
    steps = ui.session.trainer.step
    assert steps == divergence.restored_step == divergence.step - 2
    assert np.all(np.isfinite(ui.session.trainer.parameters())), "the last finite network is back"
    train = ui.session.history.current.train
    # the loss plot ends on the loss of the network put back: every step up to it once, none after
    assert np.array_equal(train.x, np.arange(1, steps + 2)), train.x[-5:]
    assert np.all(np.isfinite(train.y)) and np.all(train.y > 0), "no NaN on the loss plot"
    ui.frame(3)
    assert ui.session.trainer.step == steps, "it stays paused"
    # the next launch starts from the settings that trained stably, never from those that diverged
    from app.files import saved
    from app.ui import settings

    monkeypatch.setattr(saved, "settings_path", lambda: tmp_path / "settings.json")
    settings.save(ui.app)
    assert saved.saved_config(saved.load(tmp_path / "settings.json")).lr == pytest.approx(0.01)
    advice = ui.app.rate_advice()  # issue 16, Found 8: a rate replayed from here, not lr/10 blindly
    assert advice.checked and advice.lr < 5
    ui.click(*_centre(ui, "resume"))
    assert ui.session.config.lr == pytest.approx(advice.lr)
    while ui.session.trainer.step < steps + 50 and ui.session.divergence is None:
        ui.frame()
    assert ui.session.divergence is None, "it trains on without diverging again"


def test_divergence_offers_the_network_from_before_the_change(ui):
    _diverge(ui)
    stable = ui.session.stable_step
    assert stable is not None and 80 <= stable < ui.session.divergence.restored_step
    ui.click(*_centre(ui, "back to stable"))
    assert ui.session.config.lr == pytest.approx(0.01) and ui.app.running and ui.session.divergence is None
    assert ui.session.trainer.step >= stable
    ui.frame(5)
    assert ui.session.divergence is None and np.isfinite(ui.session.train_loss) and ui.session.train_loss < 1


def test_single_steps_while_paused_are_counted_and_a_reset_forgets_them(ui):
    ui.click(*_centre(ui, "pause"))
    ui.frame(2)
    before = ui.session.trainer.step
    for _ in range(3):
        ui.press(imgui.Key.s)
    ui.frames_until(
        lambda: ui.session.trainer.step >= before + 3, seconds=30
    )  # a loaded machine's frames may hold none
    ui.frame(3)
    assert ui.session.trainer.step == before + 3, "one step per S, none besides"
    ui.app.step_once()
    ui.app.step_once()
    ui.app.reset()
    ui.frame(3)
    assert ui.session.trainer.step == 0, "the steps asked for before a reset are forgotten"
    assert ui.app.frames.samples_per_second() == 0.0


def _batch_that_outlasts_frames(gpu, fields: dict) -> tuple[int, float]:
    """A batch whose step takes at least three frames on this device (4096 on a CPU driver, far
    more on a GPU), with the seconds a step takes once compiled."""
    batch = 4096
    while True:
        trainer = Trainer(gpu, validate(Config(**fields, batch_size=batch)))
        trainer.train(1)  # compiles and warms up
        start = time.perf_counter()
        trainer.train(1)
        seconds = time.perf_counter() - start
        if seconds >= 3 * FRAME_SECONDS or batch >= MAX_TEST_BATCH:
            return batch, seconds
        batch = min(MAX_TEST_BATCH, batch * max(2, math.ceil(3 * FRAME_SECONDS / seconds)))


def test_a_step_too_big_for_a_frame_is_split_and_gives_the_same_weights(make_session, gpu):
    fields = dict(hidden=[96, 96], seed=3)
    batch, step_seconds = _batch_that_outlasts_frames(gpu, fields)
    fields["batch_size"] = batch
    ui = OffscreenApp(make_session(**fields), 1280, 800)
    try:
        training_ms, split_frames = [], 0
        for _ in range(400):
            ui.frame()
            training_ms.append(ui.app.stats.gpu_ms.get("training", 0.0))
            split_frames += ui.app.stats.training.startswith("1 step in")
            if ui.session.trainer.step >= 2:
                break
        assert ui.session.trainer.step >= 2, "two steps within 400 frames"
        assert split_frames > 4, f"a step ({step_seconds * 1000:.0f} ms) was split over frames"
        budget_ms = ui.app.frames.budget.compute_seconds() * 1000
        # a frame's piece is a fraction of the step; within 2 budgets unloaded, but a loaded CI
        # machine's lavapipe timed pieces at 2.5 budgets (14.5 ms against 5.7), so half a step also passes
        assert statistics.median(training_ms[5:]) <= max(2 * budget_ms, 0.5 * step_seconds * 1000)
        # Side-by-side workgroup tiles (a GPU) find their piece size by trying: one frame may hold
        # a piece twice the size that fitted, which ran two rounds of groups (27 ms on an H200).
        later = sorted(training_ms[5:])
        assert later[-2] <= max(0.5 * step_seconds * 1000, 2 * budget_ms)
        assert later[-1] <= max(0.75 * step_seconds * 1000, 2 * budget_ms)
        reference = Trainer(gpu, validate(Config(**fields)))
        reference.train(ui.session.trainer.step)
        assert np.array_equal(ui.session.trainer.parameters(), reference.parameters())
    finally:
        ui.close()


@pytest.fixture
def split_steps(make_session, gpu):
    """A window whose steps each take several frames, and its network's fields."""
    fields = dict(hidden=[96, 96], seed=3)
    fields["batch_size"], _ = _batch_that_outlasts_frames(gpu, fields)
    ui = OffscreenApp(make_session(**fields), 1280, 800)
    yield ui, fields
    ui.close()


def test_gradient_check_while_paused_in_the_middle_of_a_step(split_steps, gpu):
    """Paused while a step is recorded in pieces (a slow device, a large batch), the check still
    runs: a step that has updated no parameter yet is dropped and, resumed, runs again to the
    same weights; one whose updates have begun is finished by the frames, paused or not."""
    ui, fields = split_steps
    t = ui.session.trainer
    ui.frames_until(lambda: t.progress.started and t.progress.phase == "learn")
    ui.app.running = False
    ui.frame()
    assert t.progress.started and not t.progress.updating, "paused in the middle of a step"
    step, before = t.step, t.parameters()
    ui.click(*_centre(ui, "gradient check"))
    ui.frames_until(lambda: not ui.app.grad_check_wanted)
    check = ui.app.grad_check
    assert check is not None and check.passed and check.step == step, check
    assert t.step == step and not t.progress.started and np.array_equal(t.parameters(), before)
    ui.click(*_centre(ui, "pause"))  # resumes
    ui.frames_until(lambda: t.step > step)
    reference = Trainer(gpu, validate(Config(**fields)))
    reference.train(step + 1)
    assert t.step == step + 1 and np.array_equal(t.parameters(), reference.parameters())
    # Paused after the step's first parameter updates: the frames finish the step.
    ui.app.running = False
    with gpu.submit() as encoder:
        t.record_piece(encoder, t.launch.units.learn_units)
        t.record_piece(encoder, 1)
    assert t.progress.updating and t.launch.units.adjust_units > 1
    ui.frames_until(lambda: not t.progress.started)
    assert not t.progress.started and t.step == step + 2 and not ui.app.running
    reference.train(1)
    assert np.array_equal(t.parameters(), reference.parameters())


def test_heatmaps_follow_a_network_paused_between_a_steps_two_phases(split_steps, gpu):
    """Paused once learnGradient's pieces are done and before adjustParameters' first: the
    weights are still one step's, so the evaluation goes on (it waited for ever before)."""
    ui, _ = split_steps
    t = ui.session.trainer
    ui.app.running = False
    ui.frame()
    with gpu.submit() as encoder:
        t.record_piece(encoder, t.launch.units.learn_units)
    assert t.progress.phase == "adjust" and not t.progress.updating
    t.set_parameters(np.full(t.plan.param_count, np.nan, np.float32))  # a new network to show
    ui.frames_until(lambda: ui.session.evaluator.complete.version == t.version)
    assert ui.session.evaluator.complete.version == t.version
    assert ui.session.invalid_cells.all(), "the heatmaps show the network paused there"
    assert t.progress.phase == "adjust" and not t.progress.updating, "and nothing trained"
