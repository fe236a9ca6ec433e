"""The training session: steps split into pieces give the same weights as whole steps, split
evaluations the same results as whole ones, and the divergence guard puts back exactly the last
finite network. The frame budget's decisions are checked on made-up costs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from app.config.config import Config, validate
from app.loop.budget import FrameBudget, StepShape, TrainingWork
from app.loop.session import Session
from app.train.trainer import Trainer
from app.views.evaluation import GridEvaluator

SPLITS = {
    "thread accumulators, float": dict(),
    "thread accumulators, half": dict(precision="half"),
    # 4 samples per thread: the pieces also cut each thread's sample loop
    "group tiles, float": dict(hidden=[24, 16], batch_size=20_000, activation="tanh"),
    "group tiles, half": dict(hidden=[24, 16], batch_size=20_000, precision="half"),
    # 313 tiles over 32 workgroups: the pieces also cut each workgroup's tile loop
    "lane tiles, float": dict(hidden=[24, 16], batch_size=20_000, activation="tanh"),
}


@pytest.mark.parametrize("name", SPLITS)
def test_step_in_pieces_is_bit_identical_to_whole_steps(gpu, monkeypatch, name):
    monkeypatch.setattr(gpu, "lane_tiles", name.startswith("lane tiles"))
    config = validate(Config(seed=5, **SPLITS[name]))
    whole, pieces = Trainer(gpu, config), Trainer(gpu, config)
    whole_losses = whole.train(3)
    losses, sizes, submits = [], itertools.cycle([1, 3, 2, 7, 5]), 0
    while pieces.step < 3:
        with gpu.submit() as encoder:  # each piece in its own submit, as frames would
            steps = pieces.record_piece(encoder, next(sizes))
            pieces.losses.record_readback(encoder, steps)
        losses.extend(pieces.losses.read())
        submits += 1
    assert submits > 3 * 4, "the steps really were split"
    assert np.array_equal(whole.parameters(), pieces.parameters())
    assert np.array_equal(whole_losses, np.asarray(losses, np.float32))
    assert whole.samples_seen == pieces.samples_seen == 3 * config.batch_size


def test_evaluation_in_pieces_matches_a_whole_pass(gpu):
    trainer = Trainer(gpu, validate(Config(hidden=[12], seed=2)))
    trainer.train(5)
    whole = GridEvaluator(trainer, 24).evaluate()
    split = GridEvaluator(trainer, 24)
    done, ranges = False, 0
    while not done:
        with gpu.submit() as encoder:
            done = split.record(encoder, 100)
        ranges += 1
    assert ranges == -(-24 * 24 // 100)
    result = split.read()
    np.testing.assert_array_equal(result.predictions, whole.predictions)
    np.testing.assert_array_equal(result.cell_loss, whole.cell_loss)
    np.testing.assert_array_equal(result.error_max, whole.error_max)


def test_split_evaluation_describes_one_network_even_if_training_goes_on(gpu):
    trainer = Trainer(gpu, validate(Config(hidden=[12], seed=2)))
    evaluator = GridEvaluator(trainer, 16)
    reference = GridEvaluator(trainer, 16).evaluate()
    with gpu.submit() as encoder:
        evaluator.record(encoder, 50)  # the pass copies the weights of step 0 here
    trainer.train(4)
    while evaluator.progress:
        with gpu.submit() as encoder:
            evaluator.record(encoder, 50)
    result = evaluator.read()
    assert result.step == 0
    np.testing.assert_array_equal(result.predictions, reference.predictions)


@pytest.mark.parametrize("where", ["learn", "adjust, none recorded"])
def test_a_change_in_the_middle_of_a_step_keeps_the_stable_network(gpu, where):
    """A change that arrives while a step is recorded in pieces, before its first parameter
    update (a slow device's frames end there), still keeps the network to go back to: the state
    at the step's start, with the settings it trained with."""
    from app.loop.stable_network import STABLE_STEPS

    session = Session(gpu, validate(Config(hidden=[24, 16], batch_size=20_000, seed=3)))
    t = session.trainer
    t.train(STABLE_STEPS)
    start = t.parameters()
    with gpu.submit() as encoder:
        t.record_piece(encoder, 1 if where == "learn" else t.launch.units.learn_units)
    assert t.progress.started and not t.progress.updating and t.progress.phase == where.split(",")[0]
    session.apply(session.config.replace(lr=0.5))
    assert session.stable_step == STABLE_STEPS and session.stable.kept.config.lr == pytest.approx(0.01)
    while t.progress.started:
        with gpu.submit() as encoder:
            t.record_piece(encoder, 1)
    assert not np.array_equal(t.parameters(), start)
    session.go_back_to_stable()
    assert np.array_equal(t.parameters(), start) and t.step == STABLE_STEPS and t.config.lr == pytest.approx(0.01)


def test_guard_puts_back_exactly_the_last_finite_network(gpu):
    config = validate(Config(optimizer="sgd", lr=30.0, seed=1))
    session = Session(gpu, config)
    session.eval_every = 1 << 20
    while session.divergence is None and session.trainer.step < 500:
        session.advance(7)
    divergence = session.divergence
    assert divergence is not None, "sgd at lr 30 diverges"
    assert session.trainer.step == divergence.restored_step == divergence.step - 2
    params = session.trainer.parameters()
    assert np.all(np.isfinite(params))
    replay = Trainer(gpu, config)
    replay.train(divergence.restored_step)
    assert np.array_equal(params, replay.parameters()), "the network put back is the one of that step"
    run = session.history.current
    # the curve ends on the loss of the network put back (a step's loss is taken before its update)
    assert np.array_equal(run.train.x, np.arange(1, divergence.step))
    assert np.all(np.isfinite(run.train.y))
    assert session.restorable_config() is None, "a config that diverged is never saved for the next launch"
    session.advance(1)
    assert session.trainer.step == divergence.restored_step, "no training until resumed"
    session.resume(0.001)
    assert session.config.lr == pytest.approx(0.03) and session.divergence is None
    session.advance(3)  # the network put back may diverge again, even at this rate: it is put back again
    last = session.trainer.step + (session.divergence is not None)  # trained on, or put back again
    assert np.array_equal(run.train.x, np.arange(1, last + 1)), "each step once, in order: none twice"


# ---- the frame budget, on made-up costs ----------------------------------------------------
TUTORIAL = StepShape(batch=4096, learn_units=16, learn_unit_cost=256, adjust_units=149, adjust_unit_cost=256)
WIDE = StepShape(batch=4096, learn_units=576, learn_unit_cost=8, adjust_units=461_001, adjust_unit_cost=144)


def _frames(budget: FrameBudget, shape: StepShape, other: float, step_seconds: float, frames: int = 40):
    """Simulated frames where a step costs `step_seconds` (9/10 of it learnGradient) and the
    rest of a frame `other`; returns each frame's (work, seconds)."""
    phase, position, out = "learn", 0, []
    for _ in range(frames):
        work = budget.plan_training(budget.compute_seconds(), shape, phase, phase != "learn" or position > 0)
        if work.kind == "steps":
            seconds = work.units * step_seconds
        else:
            total = shape.learn_units if phase == "learn" else shape.adjust_units
            seconds = step_seconds * (0.9 if phase == "learn" else 0.1) * work.units / total
            position += work.units
            if position >= total:
                phase, position = ("adjust" if phase == "learn" else "learn"), 0
        budget.observe(work, seconds, 0, 0.0, other)
        out.append((work, seconds))
    return out


def test_budget_fills_the_frame_on_a_fast_gpu():
    budget = FrameBudget()
    budget.forget_network(148, software=False)
    work, seconds = _frames(budget, TUTORIAL, other=0.0015, step_seconds=40e-6)[-1]
    assert work.kind == "steps"
    assert 0.8 / 60 < 0.0015 + seconds <= 1 / 60, f"{work.units} steps: {seconds * 1000:.1f} ms of training a frame"


def test_budget_splits_a_step_that_does_not_fit_and_keeps_frames_short():
    budget = FrameBudget()
    budget.forget_network(461_000, software=True)
    frames = _frames(budget, WIDE, other=0.03, step_seconds=4.0, frames=400)
    assert all(work.kind in ("learn", "adjust") for work, _ in frames)
    assert max(seconds for _, seconds in frames) <= 2 * budget.compute_seconds()
    assert sum(seconds for _, seconds in frames[-100:]) > 50 * budget.compute_seconds(), "yet the frames are used"


def test_budget_grows_work_at_most_twofold_a_frame():
    budget = FrameBudget()
    budget.forget_network(148, software=True)
    counts = []
    for _ in range(6):
        work = budget.plan_training(1.0, TUTORIAL, "learn", False)
        counts.append(work.units)
        budget.observe(work, work.units * 1e-6, 0, 0.0, 0.001)  # far faster than the prior guess
    prior = 4096 * 6 * 148 / 1e9  # seconds a step, guessed for a CPU driver
    assert counts == [int(1.0 / prior) * 2**k for k in range(6)]


def test_budget_sizes_side_by_side_workgroup_tiles_by_trying():
    """Workgroup tiles on a GPU: a piece costs one group's time up to what the GPU runs at once
    (here 256 of 512 groups, 11 ms a round against a ~12 ms budget). Pieces double while they
    fit and settle at the largest that does; planning by a per-group rate gave 1 group a frame."""
    shape = StepShape(
        batch=1 << 22,
        learn_units=512,
        learn_unit_cost=8192,
        adjust_units=300,
        adjust_unit_cost=512,
        learn_side_by_side=True,
    )
    budget = FrameBudget()
    budget.forget_network(20_000, software=False)
    budget.observe(TrainingWork("", 0, 0), 0.0, 0, 0.0, 0.003)
    pieces = []
    for _ in range(16):
        work = budget.plan_training(budget.compute_seconds(), shape, "learn", True)
        budget.observe(work, 0.011 * -(-work.units // 256), 0, 0.0, 0.003)
        pieces.append(work.units)
    assert pieces[:9] == [1, 2, 4, 8, 16, 32, 64, 128, 256] and pieces[-4:] == [256] * 4, pieces
    # one group alone takes longer than a frame allows (a bigger batch): more beside it cost nothing
    slow, pieces = FrameBudget(), []
    slow.forget_network(20_000, software=False)
    slow.observe(TrainingWork("", 0, 0), 0.0, 0, 0.0, 0.003)
    for _ in range(16):
        work = slow.plan_training(slow.compute_seconds(), shape, "learn", True)
        slow.observe(work, 0.030 * -(-work.units // 256), 0, 0.0, 0.003)
        pieces.append(work.units)
    assert pieces[-4:] == [256] * 4, pieces
    one_by_one, fresh = StepShape(**{**shape.__dict__, "learn_side_by_side": False}), FrameBudget()
    fresh.forget_network(20_000, software=False)
    fresh.observe(TrainingWork("learn", 1, 8192), 0.011, 0, 0.0, 0.003)
    assert fresh.plan_training(fresh.compute_seconds(), one_by_one, "learn", True).units == 1, "by a per-group rate"
