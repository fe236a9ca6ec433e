"""Checkpoints: what is saved comes back exactly, a run resumed after K steps ends bit-identical to
one never stopped (float and half, whole steps and steps in pieces), writes are atomic, and
anything that is not a checkpoint of this version is refused with one line."""

from __future__ import annotations

import hashlib
import json
import os
import struct

import numpy as np
import pytest
from old_checkpoints import full_series_bytes

from app.config.config import Config, validate
from app.files import checkpoint as ckpt
from app.files.checkpoint import CheckpointError
from app.loop.session import Session


def _session(gpu, **fields) -> Session:
    return Session(gpu, validate(Config(**{"seed": 7, "batch_size": 1000, **fields})))


def _state(session: Session) -> tuple:
    t = session.trainer
    weights = t.gpu.read(t.weights, t.plan.param_count, np.float16) if t.weights is not t.master else None
    return (
        t.parameters(),
        weights,
        t.gpu.read(t.optimizer_state, 2 * t.plan.param_count),
        t.step,
        t.optimizer_steps,
        t.samples_seen,
        t.config,
    )


def _assert_same_state(a: Session, b: Session) -> None:
    for x, y in zip(_state(a), _state(b)):
        if isinstance(x, np.ndarray):
            assert np.array_equal(x, y)
        else:
            assert x == y


def test_round_trip_keeps_everything(gpu):
    session = _session(gpu, precision="half", optimizer="adam", hidden=[8, 8])
    session.advance(20)
    session.evaluate()
    session.reset(seed=3)  # an earlier run in the history
    session.advance(15)
    saved = ckpt.capture(session)
    back = ckpt.decode(ckpt.encode(saved))
    assert back.config == saved.config and back.config.seed == 3
    assert (back.step, back.optimizer_steps, back.samples_seen) == (15, 15, 15 * 1000)
    for a, b in (
        (back.master, saved.master),
        (back.weights, saved.weights),
        (back.optimizer_state, saved.optimizer_state),
    ):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert [r.label for r in back.runs] == [r.label for r in session.history.runs]
    for mine, theirs in zip(back.runs, session.history.runs):
        for series in ("train", "eval"):
            assert np.array_equal(getattr(mine, series).x, getattr(theirs, series).x)
            assert np.array_equal(getattr(mine, series).y, getattr(theirs, series).y)
    assert np.any(back.optimizer_state != 0), "Adam's moments are saved, not zeros"


@pytest.mark.parametrize("precision", ["float", "half"])
def test_resumed_session_is_bit_identical(gpu, precision):
    whole = _session(gpu, precision=precision)
    whole.advance(24)
    first = _session(gpu, precision=precision)
    first.advance(9)
    data = ckpt.encode(ckpt.capture(first))
    later = _session(gpu, precision=precision, lr=0.3, seed=1)  # whatever it held is replaced
    ckpt.restore(later, ckpt.decode(data))
    later.advance(15)
    _assert_same_state(whole, later)
    assert np.array_equal(later.history.current.train.y, whole.history.current.train.y), "the loss curve goes on"


def test_checkpoint_mid_step_finishes_the_step_first(gpu):
    """The window records big steps in pieces; a checkpoint then finishes the step in progress."""
    whole = _session(gpu, hidden=[24, 16], batch_size=20_000)
    whole.advance(3)
    pieces = _session(gpu, hidden=[24, 16], batch_size=20_000)
    pieces.advance(2)
    with gpu.submit() as encoder:
        pieces.guard.record_snapshot(encoder)
        pieces.trainer.record_piece(encoder, 3)
    assert pieces.trainer.progress.started
    saved = ckpt.capture(pieces)
    assert saved.step == 3 and not pieces.trainer.progress.started
    assert np.array_equal(saved.master, whole.trainer.parameters())
    assert pieces.history.current.train.count == 3, "the finished step's loss is recorded"


def test_hot_options_override_and_a_new_optimizer_starts_afresh(gpu):
    first = _session(gpu)
    first.advance(10)
    saved = ckpt.capture(first)
    later = _session(gpu)
    ckpt.restore(later, saved, saved.config.replace(lr=0.002, optimizer="sgd"))
    assert later.config.lr == 0.002 and later.trainer.step == 10
    assert not np.any(later.trainer.gpu.read(later.trainer.optimizer_state, 2 * later.trainer.plan.param_count))
    with pytest.raises(ValueError):
        ckpt.restore(_session(gpu, hidden=[4]), saved)  # another structure needs a rebuild first


def _as_version_1(checkpoint: ckpt.Checkpoint) -> bytes:
    """The checkpoint as format version 1 wrote it (docs/formats.md): two floats of optimizer state a
    parameter whatever the optimizer (SGD's velocity, then zeros), every loss point."""
    return full_series_bytes(checkpoint, 1)


@pytest.mark.parametrize("optimizer,width", [("sgd", 1), ("adam", 2)])
def test_version_1_files_still_load_and_resume_alike(gpu, optimizer, width):
    first = _session(gpu, optimizer=optimizer, beta1=0.5, hidden=[8])
    first.advance(6)
    saved = ckpt.capture(first)
    count = first.trainer.plan.param_count
    assert saved.optimizer_state.size == width * count, "a checkpoint keeps the optimizer's own state"
    assert np.any(saved.optimizer_state[(width - 1) * count :] != 0)
    old = ckpt.decode(_as_version_1(saved), "old.ckpt")
    assert old.optimizer_state.dtype == np.float32 and np.array_equal(old.optimizer_state, saved.optimizer_state)
    resumed = []
    for checkpoint in (saved, old):
        session = _session(gpu, optimizer=optimizer, hidden=[8])
        ckpt.restore(session, checkpoint)
        session.advance(4)
        resumed.append(session)
    _assert_same_state(*resumed)
    assert resumed[0].trainer.step == 10
    if width == 1:  # version 2's SGD payload (P floats of state) is not a version 1 file
        version_2 = full_series_bytes(saved, 2)
        assert np.array_equal(ckpt.decode(version_2).optimizer_state, saved.optimizer_state)
        with pytest.raises(CheckpointError, match="bytes of arrays"):
            ckpt.decode(version_2[:8] + struct.pack("<I", 1) + version_2[12:])


def test_save_is_atomic(gpu, tmp_path, monkeypatch):
    session = _session(gpu)
    path = tmp_path / "run.ckpt"
    ckpt.save(path, ckpt.capture(session))
    before = path.read_bytes()
    session.advance(5)

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        ckpt.save(path, ckpt.capture(session))
    assert path.read_bytes() == before, "the previous checkpoint is untouched"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.ckpt"], "no temporary file is left"


# ---- refusals -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def good_bytes(gpu) -> bytes:
    session = _session(gpu, precision="half")
    session.advance(3)
    return ckpt.encode(ckpt.capture(session))


def _reheader(data: bytes, change) -> bytes:
    """`data` with its JSON header changed by `change(header)`, checksum recomputed: only the
    checks after the checksum can refuse it."""
    _, version, size, payload_size, _ = struct.unpack_from("<8sIIQ32s", data)
    header = json.loads(data[56 : 56 + size])
    change(header)
    new = json.dumps(header).encode()
    body = new + data[56 + size :]
    return struct.pack("<8sIIQ32s", ckpt.MAGIC, version, len(new), payload_size, hashlib.sha256(body).digest()) + body


REFUSED = {
    "empty": (lambda d: b"", "not a Slang Visual Trainer checkpoint"),
    "foreign (PNG)": (lambda d: b"\x89PNG\r\n\x1a\n" + d[8:], "not a Slang Visual Trainer checkpoint"),
    "foreign (JSON)": (lambda d: b'{"lr": 0.1}', "not a Slang Visual Trainer checkpoint"),
    "truncated magic": (lambda d: d[:5], "truncated (5 bytes)"),
    "one byte": (lambda d: d[:1], "truncated (1 byte)"),
    "truncated header": (lambda d: d[:40], "truncated"),
    "truncated payload": (lambda d: d[:-7], "truncated"),
    "extra bytes": (lambda d: d + b"\0", "after its end"),
    "flipped payload bit": (lambda d: d[:-3] + bytes([d[-3] ^ 1]) + d[-2:], "checksum"),
    "flipped header bit": (lambda d: d[:60] + bytes([d[60] ^ 4]) + d[61:], "checksum"),
    "version 4": (lambda d: d[:8] + struct.pack("<I", 4) + d[12:], "version 4"),
    "huge header": (lambda d: d[:12] + struct.pack("<I", 1 << 30) + d[16:], "corrupted"),
    "other app": (lambda d: _reheader(d, lambda h: h.update(app="elsewhere")), "not written by"),
    "bad config": (lambda d: _reheader(d, lambda h: h["config"].update(lr=-1)), "learning rate"),
    "wrong parameter count": (lambda d: _reheader(d, lambda h: h["config"].update(hidden=[17])), "parameters"),
    "precision mismatch": (lambda d: _reheader(d, lambda h: h.update(half_weights=False)), "precision"),
    "negative step": (lambda d: _reheader(d, lambda h: h.update(step=-4)), "'step'"),
    "history longer than the payload": (
        lambda d: _reheader(d, lambda h: h["runs"][0]["train"].update(recent=10**6)),
        "bytes",
    ),
    "history that does not add up": (
        lambda d: _reheader(d, lambda h: h["runs"][0]["train"].update(count=10**6)),
        "inconsistent train loss record",
    ),
    "no runs": (lambda d: _reheader(d, lambda h: h.update(runs=[])), "runs"),
}


@pytest.mark.parametrize("name", REFUSED)
def test_refused_with_one_line(good_bytes, name):
    mutate, words = REFUSED[name]
    with pytest.raises(CheckpointError) as caught:
        ckpt.decode(mutate(good_bytes), "run.ckpt")
    message = str(caught.value)
    assert "\n" not in message and message.startswith("checkpoint 'run.ckpt' ")
    assert words in message, message


def test_non_finite_parameters_are_refused(gpu):
    session = _session(gpu)
    saved = ckpt.capture(session)
    saved.master[3] = np.nan
    with pytest.raises(CheckpointError, match="not finite"):
        ckpt.decode(ckpt.encode(saved))


def test_unreadable_file(tmp_path):
    with pytest.raises(CheckpointError, match="cannot read"):
        ckpt.load(tmp_path)  # a folder
    with pytest.raises(CheckpointError, match="cannot read"):
        ckpt.load(tmp_path / "missing.ckpt")
