"""Files written whole or not at all (app/files/atomic.py), as the settings file and a headless run's
folder use them; and the one-line error text every message shows (app/errors.first_line)."""

from __future__ import annotations

import json
import os

import pytest

from app.config.config import Config
from app.errors import first_line
from app.files import saved
from app.files.atomic import staged_folder


def test_staged_folder_appears_whole_in_a_new_folder(tmp_path):
    out = tmp_path / "runs" / "one"  # its parent does not exist yet
    with staged_folder(out) as staging:
        (staging / "a.txt").write_text("a")
        assert not out.exists(), "nothing is visible before the block ends"
    assert sorted(p.name for p in out.iterdir()) == ["a.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs"], "no staging folder is left"


def test_staged_folder_adds_to_an_existing_folder_and_leaves_nothing_on_error(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("old")
    with pytest.raises(RuntimeError):
        with staged_folder(out) as staging:
            (staging / "new.txt").write_text("half")
            raise RuntimeError("disk full")
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]
    with staged_folder(out) as staging:
        (staging / "keep.txt").write_text("new")
    assert (out / "keep.txt").read_text() == "new" and sorted(p.name for p in out.iterdir()) == ["keep.txt"]


def test_settings_are_replaced_atomically(tmp_path, monkeypatch, capsys):
    path = tmp_path / "settings.json"
    saved.save(Config(lr=0.5), {"view": 1}, path)
    before = path.read_bytes()
    assert json.loads(before)["config"]["lr"] == 0.5

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    saved.save(Config(lr=0.25), {"view": 2}, path)  # a note, never an exception
    assert "could not save settings" in capsys.readouterr().err
    assert path.read_bytes() == before, "the previous settings are untouched"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"], "no temporary file is left"


def test_first_line_of_an_error():
    assert first_line(RuntimeError("\n  compile failed: x\nat line 3\n")) == "compile failed: x"
    assert first_line(RuntimeError("")) == "RuntimeError"
    assert first_line(OSError()) == "OSError"
