"""Issue 16, Found 8: after a divergence, the rate offered to resume with is one that was
replayed from the network put back and trained, so one click resumes without diverging again
(the issue: a divergence at lr 1000, and lr 100, a tenth, diverged again; it took several
clicks). Adam's steps are bounded by the rate, so at lr 1000 its loss climbs to ~1e13 and
comes back down without overflowing; SGD with momentum overflows within a few steps, and on
these targets every rate above ~0.5 does."""

from __future__ import annotations

import imgui_bundle  # noqa: F401 (a dependency: a broken install fails here, never skips)
import numpy as np
from helpers import advance_until
from test_ui_offscreen import _centre

from app.loop.rate_probe import MIN_PROBE_STEPS, PROBE_STEPS, advise, candidates
from app.ui.offscreen import OffscreenApp


def test_one_click_resumes_after_a_divergence_at_lr_1000(make_session):
    ui = OffscreenApp(make_session(optimizer="sgd", lr=0.05), 1280, 800)
    try:
        assert ui.frames_until(lambda: ui.session.trainer.step >= 80), "80 steps"
        ui.app.apply_hot("learning rate", lr=1000.0)
        ui.frames_until(lambda: ui.session.divergence is not None)
        divergence = ui.session.divergence
        assert divergence is not None and divergence.lr == 1000.0
        ui.frames_until_still("resume")  # the panel draws its advice, and its button stays put
        advice = ui.app.rate_advice()
        assert advice.checked and advice.lr < 100 and advice.steps >= MIN_PROBE_STEPS, advice
        assert advice.tried[0][0] == 100 and advice.tried[0][1].startswith("diverged"), "a tenth diverges"
        assert "resume" in ui.app.rects
        assert advice.from_stable, "from the network put back, every rate overflows: it goes back first"
        assert ui.session.trainer.step == divergence.restored_step, "the replays left the network as it was"
        ui.click(*_centre(ui, "resume"))
        assert ui.session.config.lr == advice.lr and ui.app.running
        start = ui.session.stable_step
        ui.frames_until(lambda: ui.session.trainer.step >= start + advice.steps or ui.session.divergence is not None)
        assert ui.session.divergence is None, "one click: no second divergence"
        losses = ui.session.history.current.train.y[-advice.steps :]
        assert np.all(np.isfinite(losses)) and losses[-1] < 1.0
    finally:
        ui.close()


def test_the_replay_is_what_resuming_trains(make_session):
    """The probe trains exactly what Resume trains: its losses are those of the resumed session."""
    session = make_session(optimizer="sgd", lr=0.05)
    session.advance(60)
    session.apply(session.config.replace(lr=200.0))
    advance_until(session, lambda: session.divergence is not None, "a learning rate of 200 diverges")
    advice = advise(session, 0.0)
    assert advice.checked
    step = session.trainer.step
    if advice.from_stable:
        session.go_back_to_stable()
        step = session.trainer.step
    session.resume(lr=advice.lr)
    losses = session.advance(advice.steps)
    assert advice.steps == PROBE_STEPS
    assert session.divergence is None and len(losses) == PROBE_STEPS and session.trainer.step == step + PROBE_STEPS


def test_candidates_and_the_fallback_for_slow_steps(make_session):
    assert candidates(1000.0, 0.01) == [100.0, 10.0, 1.0, 0.1, 0.01, 0.001]
    assert candidates(5.0, 0.3) == [0.5, 0.3, 0.05, 0.005, 0.0005, 5e-05, 5e-06]
    session = make_session(optimizer="sgd", lr=0.05)
    session.advance(60)
    session.apply(session.config.replace(lr=1000.0))
    advance_until(session, lambda: session.divergence is not None, "a learning rate of 1000 diverges")
    slow = advise(session, step_seconds=30.0)
    assert not slow.checked and slow.lr == 0.05 and "not replayed" in slow.reason, slow


def test_resume_names_every_setting_it_changes(make_session):
    """Issue 25: resuming from the last stable network took its optimizer back (sgd to adam)
    without a word. The button names each setting that differs from now, and they are the ones
    that change."""
    from app.ui.panels.divergence import changes

    ui = OffscreenApp(make_session(optimizer="adam", lr=0.01), 1280, 800)
    try:
        assert ui.frames_until(lambda: ui.session.trainer.step >= 80), "80 steps"
        ui.app.apply_hot("optimizer", optimizer="sgd", lr=1e4)
        assert ui.frames_until(lambda: ui.session.divergence is not None), "sgd at 1e4 diverges"
        ui.frame()
        advice = ui.app.rate_advice()
        now, then = ui.session.config, ui.session.restorable_config()
        named = changes(now, (then if advice.from_stable else now).replace(lr=advice.lr))
        assert advice.from_stable and named == [f"learning rate {advice.lr:.3g}", "optimizer adam"], named
        ui.click(*_centre(ui, "resume"))
        after = ui.session.config
        assert changes(now, after) == named, "what the button said is what changed"
        assert after.lr == advice.lr and after.optimizer == (then.optimizer if advice.from_stable else "sgd")
    finally:
        ui.close()
