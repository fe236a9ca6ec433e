"""Ctrl+C held while native code sets itself up (app/interrupts.py): pressed during the import of a
package held so, the import finishes and the KeyboardInterrupt comes after it; the command line
holds SlangPy's, imgui-bundle's and Ray's imports so."""

from __future__ import annotations

import signal
import sys

import pytest

from app.interrupts import NATIVE_PACKAGES, _HeldImports, ctrl_c_deferred


def _package(root, name: str) -> None:
    """A package whose import presses Ctrl+C half-way, then records that it got to its end."""
    (root / name).mkdir()
    (root / name / "__init__.py").write_text(
        "import os, pathlib, signal, time\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "time.sleep(0.05)  # the signal arrives here, in the package's own set-up\n"
        "pathlib.Path(__file__).with_name('finished').touch()\n"
    )


def test_an_import_held_finishes_and_ctrl_c_comes_after_it(tmp_path, monkeypatch):
    _package(tmp_path, "held_native")
    _package(tmp_path, "plain_native")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "meta_path", [_HeldImports(("held_native",)), *sys.meta_path])
    with pytest.raises(KeyboardInterrupt):
        import held_native  # noqa: F401
    assert (tmp_path / "held_native" / "finished").exists(), "its set-up ran to its end"
    with pytest.raises(KeyboardInterrupt):
        import plain_native  # noqa: F401
    assert not (tmp_path / "plain_native" / "finished").exists(), "not held: the interrupt cut its set-up short"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_nothing_pressed_nothing_raised_and_the_handler_comes_back():
    before = signal.getsignal(signal.SIGINT)
    with ctrl_c_deferred():
        assert signal.getsignal(signal.SIGINT) is not before
    assert signal.getsignal(signal.SIGINT) is before


def test_the_command_line_holds_the_native_packages(monkeypatch):
    """Its main installs the hook before anything imports SlangPy or Ray (a Ctrl+C there aborted the
    process in nanobind, or was lost in Ray's Cython: the sweep then ran to its end)."""
    import app.__main__ as entry
    from app.entry import cli

    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if not isinstance(f, _HeldImports)])
    monkeypatch.setattr(cli, "main", lambda: 0)
    assert entry.main() == 0
    held = [finder for finder in sys.meta_path if isinstance(finder, _HeldImports)]
    assert len(held) == 1 and {"slangpy", "imgui_bundle", "ray"} <= set(held[0].packages)
    assert set(NATIVE_PACKAGES) == set(held[0].packages)
