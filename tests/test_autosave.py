"""Issue 16, autosave: the window's state goes to a checkpoint in the cache folder when it ends,
and the next launch offers to restore it; the restored network is byte for byte the one saved,
and trains on exactly as the saved one would have. Offscreen here; the real window's SIGINT, a
crash and the next launch are in test_ui_window_autosave.py."""

from __future__ import annotations

import imgui_bundle  # noqa: F401 (a dependency: a broken install fails here, never skips)
import numpy as np
import pytest
from test_ui_offscreen import _centre

from app.files import autosave, checkpoint
from app.ui.offscreen import OffscreenApp
from app.ui.restore import save_on_exit


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "slang-visual-trainer"


def _state(session):
    t = session.trainer
    return (
        t.parameters().tobytes(),
        t.optimizer_state_values().tobytes(),
        (t.step, t.optimizer_steps, t.samples_seen),
        t.config,
    )


def _launch(make_session, **fields) -> OffscreenApp:
    """The next launch: a new session from the defaults, with the autosave offered."""
    ui = OffscreenApp(make_session(**fields), 1280, 800)
    ui.app.restore_offer = autosave.find()
    ui.app.running = False
    ui.frame(3)
    return ui


def test_the_autosave_is_offered_and_restores_the_same_network(make_session, cache):
    first = OffscreenApp(make_session(seed=5, lr=0.02), 1280, 800)
    try:
        first.frame(12)
        first.app.running = False
        first.frame()
        line = save_on_exit(first.app)
        saved = _state(first.session)
        assert saved[2][0] > 0
        assert line.startswith(f"autosaved: {cache / 'autosave.ckpt'} (step {saved[2][0]:,}")
        assert (cache / "autosave.ckpt").is_file()
        later = _launch(make_session)
        try:
            assert "restore autosave" in later.app.rects, "the prompt is shown"
            assert later.session.trainer.step == 0
            stored = checkpoint.load(cache / "autosave.ckpt")
            assert (stored.master.tobytes(), stored.optimizer_state.tobytes()) == saved[:2], "saved byte for byte"
            later.click(*_centre(later, "restore autosave"))
            later.app.running = False  # it trains on once restored: stop it to compare
            assert later.app.restore_offer is None and "restore autosave" not in _drawn(later)
            t = later.session.trainer
            assert t.config == saved[3] and t.step >= saved[2][0]
            first.session.advance(t.step - saved[2][0])  # the steps it took since, on the saved one
            assert _state(later.session) == _state(first.session), "the same network, byte for byte"
            assert later.session.history.current.train.count == first.session.history.current.train.count
            first.session.advance(7)
            later.session.advance(7)
            assert _state(later.session) == _state(first.session), "and it trains on as the saved one would"
        finally:
            later.close()
    finally:
        first.close()


def _drawn(ui) -> set:
    ui.app.rects.clear()
    ui.frame()
    return set(ui.app.rects)


def test_starting_fresh_keeps_the_new_network(make_session, cache):
    first = OffscreenApp(make_session(seed=5), 1280, 800)
    try:
        first.frame(6)
        save_on_exit(first.app)
    finally:
        first.close()
    offered = (cache / "autosave.ckpt").read_bytes()
    later = _launch(make_session, seed=1)
    try:
        assert "kept" in save_on_exit(later.app), "an offer not answered yet writes nothing"
        assert (cache / "autosave.ckpt").read_bytes() == offered
        before = _state(later.session)
        later.click(*_centre(later, "decline autosave"))
        assert later.app.restore_offer is None and "decline autosave" not in _drawn(later)
        assert later.app.running, "training starts once answered"
        assert _state(later.session)[3] == before[3] and later.session.trainer.step > 0
        assert save_on_exit(later.app).startswith("autosaved")
        assert (cache / "autosave-previous.ckpt").read_bytes() == offered, "the declined one is kept beside it"
    finally:
        later.close()


def test_a_step_in_pieces_is_dropped_not_finished(make_session, cache):
    """At exit, a step recorded in pieces that has only summed gradients is dropped: the
    autosave is the step boundary before it, and resumes bit for bit."""
    session = make_session(hidden=[32, 32], batch_size=8192)
    session.advance(3)
    reference = _state(session)
    t = session.trainer
    with t.gpu.submit() as encoder:
        t.record_piece(encoder, 1)
    assert t.progress.started and t.progress.phase == "learn"
    saved = autosave.write(session)
    assert saved.step == 3 and not t.progress.started
    assert _state(session) == reference
    after = make_session(hidden=[32, 32], batch_size=8192)
    checkpoint.restore(after, checkpoint.load(autosave.autosave_path()))
    session.advance(2)
    after.advance(2)
    assert _state(after) == _state(session)


def test_an_unreadable_autosave_is_not_offered(cache, capsys):
    cache.mkdir(parents=True)
    (cache / "autosave.ckpt").write_bytes(b"SVTCKPT\0 truncated")
    assert autosave.find() is None
    assert "not offered" in capsys.readouterr().err


def test_a_diverged_session_is_autosaved_with_its_stable_rate(make_session, cache):
    session = make_session(optimizer="sgd", lr=0.05, beta1=0.0)
    session.advance(60)
    session.apply(session.config.replace(lr=1e4))
    session.advance(40)
    assert session.divergence is not None
    saved = autosave.write(session)
    assert saved.config.lr == 0.05, "never the rate that diverged"
    assert np.all(np.isfinite(saved.master))
