"""Issue 16, autosave, and issue 25's kept sessions: the window's state goes to a checkpoint of its
own in the cache folder's sessions/ when it ends, and the next launch offers to restore the
newest; the restored network is byte for byte the one saved, and trains on exactly as the saved
one would have. No launch replaces another session's file. Offscreen here; the real window's
SIGINT, a crash and the next launch are in test_ui_window_autosave.py."""

from __future__ import annotations

import datetime

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
        [kept] = (cache / "sessions").glob("*.ckpt")
        assert kept.name == f"{first.app.started:%Y%m%d-%H%M%S}-4-16-4-formulas.ckpt", "its date, network, data"
        assert line.startswith(f"autosaved: {kept} (step {saved[2][0]:,}")
        later = _launch(make_session)
        try:
            assert "restore autosave" in later.app.rects, "the prompt is shown"
            assert later.session.trainer.step == 0
            stored = checkpoint.load(kept)
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
    [first_file] = (cache / "sessions").glob("*.ckpt")
    offered = first_file.read_bytes()
    later = _launch(make_session, seed=1)
    later.app.started += datetime.timedelta(seconds=1)  # a later launch
    try:
        assert "kept" in save_on_exit(later.app), "an offer not answered yet writes nothing"
        assert list((cache / "sessions").glob("*.ckpt")) == [first_file]
        before = _state(later.session)
        later.click(*_centre(later, "decline autosave"))
        assert later.app.restore_offer is None and "decline autosave" not in _drawn(later)
        assert later.app.running, "training starts once answered"
        assert _state(later.session)[3] == before[3] and later.session.trainer.step > 0
        assert save_on_exit(later.app).startswith("autosaved")
        assert first_file.read_bytes() == offered, "the declined session is kept as it was"
        assert len(list((cache / "sessions").glob("*.ckpt"))) == 2
        assert autosave.find().path != first_file, "the newest is offered next"
    finally:
        later.close()


def test_nothing_trains_behind_the_prompt_not_even_a_network_built_for_the_start(make_session, cache):
    """Issue 42: a wide network opens on a placeholder (app/ui/opening.py); once built it started
    training behind the unanswered prompt (step 2,281 to 4,137 in 6 s). Space and S did too."""
    from imgui_bundle import imgui

    from app.config.config import Config, validate
    from app.files.start import Start
    from app.ui.opening import build_restored

    ui = OffscreenApp(make_session(), 1280, 800)  # the placeholder; the start's kernels are compiled
    offer = autosave.Offer(cache / "s.ckpt", 42, "4-16-4", "formulas", datetime.datetime(2026, 1, 1))
    ui.app.restore_offer, ui.app.running = offer, False
    try:
        build_restored(ui.app, Start(validate(Config(seed=2))))
        assert ui.frames_until(lambda: ui.app.restoring is None, 120), "the start's network is built"
        assert ui.session.config.seed == 2
        for key in (imgui.Key.space, imgui.Key.s):
            ui.press(key)
        ui.frame(4)
        assert ui.session.trainer.step == 0 and not ui.app.running, "nothing trained, and it says paused"
        ui.click(*_centre(ui, "decline autosave"))
        ui.frame()
        assert ui.app.restore_offer is None
        assert ui.frames_until(lambda: ui.session.trainer.step > 0, seconds=30), "answered: it trains"
    finally:
        ui.close()


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
    path, saved = autosave.write(session, datetime.datetime(2026, 11, 26, 15, 0, 0))
    assert saved.step == 3 and not t.progress.started
    assert _state(session) == reference
    after = make_session(hidden=[32, 32], batch_size=8192)
    checkpoint.restore(after, checkpoint.load(path))
    session.advance(2)
    after.advance(2)
    assert _state(after) == _state(session)


def test_an_unreadable_session_is_not_offered_and_the_next_is(make_session, cache, capsys):
    (cache / "sessions").mkdir(parents=True)
    path, _ = autosave.write(make_session(), datetime.datetime(2026, 11, 1, 9, 0, 0))
    (cache / "sessions" / "20261126-090000-4-16-4-formulas.ckpt").write_bytes(b"SVTCKPT\0 truncated")
    assert autosave.find().path == path, "the newest that loads"
    assert "not offered" in capsys.readouterr().err


def test_no_launch_replaces_another_sessions_file(make_session, cache):
    """Issue 25: a 124,702-step session was gone after two launches that never asked (Start
    fresh, then --fresh). Now each session writes its own file; the newest KEEP stay."""
    first, _ = autosave.write(make_session(dataset={"generator": "spiral"}), datetime.datetime(2026, 1, 1))
    assert first.name == "20260101-000000-4-16-1-spiral.ckpt"
    kept = first.read_bytes()
    for day in range(2, 2 + autosave.KEEP - 1):  # launches after it, each ending with its own file
        autosave.write(make_session(seed=day), datetime.datetime(2026, 1, day))
    assert first.read_bytes() == kept and len(autosave.kept_sessions()) == autosave.KEEP
    session = make_session()
    started = datetime.datetime(2026, 2, 1)
    autosave.write(session, started)
    session.advance(3)
    autosave.write(session, started)  # the same session again: its own file, replaced
    assert not first.exists(), "one more than KEEP: the oldest goes"
    assert len(autosave.kept_sessions()) == autosave.KEEP
    assert autosave.find().step == 3 and autosave.find().data == "formulas"


def test_an_earlier_versions_autosave_is_still_offered(make_session, cache):
    cache.mkdir(parents=True)
    checkpoint.save(cache / "autosave.ckpt", checkpoint.capture(make_session()))
    [kept] = autosave.kept_sessions()
    assert kept.path == cache / "autosave.ckpt" and autosave.find().path == kept.path


def test_a_diverged_session_is_autosaved_with_its_stable_rate(make_session, cache):
    session = make_session(optimizer="sgd", lr=0.05, beta1=0.0)
    session.advance(60)
    session.apply(session.config.replace(lr=1e4))
    session.advance(40)
    assert session.divergence is not None
    _, saved = autosave.write(session, datetime.datetime.now())
    assert saved.config.lr == 0.05, "never the rate that diverged"
    assert np.all(np.isfinite(saved.master))


def test_file_recent_sessions_lists_and_loads_them(make_session, cache):
    older = make_session(seed=3)
    older.advance(5)
    autosave.write(older, datetime.datetime(2026, 1, 1, 10, 0, 0))
    newer = make_session(hidden=[12], seed=4)
    newer.advance(9)
    autosave.write(newer, datetime.datetime(2026, 1, 2, 10, 0, 0))
    ui = OffscreenApp(make_session(seed=1), 1280, 800)
    try:
        ui.app.running = False
        ui.frame(3)
        ui.click(*_centre(ui, "menu file"))
        ui.move(*_centre(ui, "file recent"))
        assert ui.frames_until(lambda: "recent 1" in ui.app.rects, seconds=10), "the submenu opens on hover"
        assert [k.network for k in ui.app.recent] == ["4-12-4", "4-16-4"], "newest first"
        ui.move(*_centre(ui, "recent 1"))
        ui.frame()
        ui.click(*_centre(ui, "recent 1"))
        ui.frame()
        assert ui.session.trainer.step == 5 and np.array_equal(
            ui.session.trainer.parameters(), older.trainer.parameters()
        )
    finally:
        ui.close()


def test_a_sessions_file_is_named_after_what_it_learned():
    """A shape's session was named "formulas", a CSV's "points": the file says what it holds."""
    from app.config.config import Config

    assert autosave.data_name(Config()) == "formulas"
    assert autosave.data_name(Config(sdf="star")) == "shape_star"
    assert autosave.data_name(Config(sdf="/tmp/outlines/notch 15.svg")) == "shape_notch_15"
    assert autosave.data_name(Config(dataset={"csv": "/tmp/heights.csv"})) == "heights"
    assert autosave.data_name(Config(dataset={"generator": "spiral"})) == "spiral"
    assert autosave.data_name(Config(image={"file": "/tmp/grey.png", "width": 4, "height": 4})) == "grey"
