"""The menu bar's File > Quit (and Ctrl+Q) and Help > About in the offscreen window, clicked and
typed as a user would: each checks what the click or key set, and About the GPU it names. That
Quit keeps the session as closing the window does is the real window's test
(tests/test_ui_window_autosave.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import imgui_bundle  # noqa: F401 (a dependency: a broken install fails here, never skips)
import pytest
import slangpy as spy
from imgui_bundle import imgui
from test_ui_offscreen import _centre

from app.files import about
from app.ui import about as about_box

ROOT = Path(__file__).resolve().parent.parent


def _pyproject_version() -> str:
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    line = next(line for line in (ROOT / "pyproject.toml").read_text().splitlines() if line.startswith("version"))
    return line.split('"')[1]


def test_file_quit_ends_the_window_loop(ui):
    ui.click(*_centre(ui, "menu file"))
    assert not ui.app.quit
    ui.click(*_centre(ui, "file quit"))
    assert ui.app.quit


def _press_with_ctrl(ui, key: imgui.Key) -> None:
    ui.renderer.make_current()
    imgui.get_io().add_key_event(imgui.Key.mod_ctrl, True)
    ui.press(key)
    ui.renderer.make_current()
    imgui.get_io().add_key_event(imgui.Key.mod_ctrl, False)
    ui.frame()


def test_ctrl_q_quits_and_q_alone_does_not(ui):
    ui.press(imgui.Key.q)
    assert not ui.app.quit, "Q alone is no shortcut"
    _press_with_ctrl(ui, imgui.Key.w)
    assert not ui.app.quit
    _press_with_ctrl(ui, imgui.Key.q)
    assert ui.app.quit


def test_help_about_names_the_version_and_opens_the_readme(ui, monkeypatch):
    """The About box shows the version pyproject.toml gives the package, and its README link
    opens the checkout's README.md with the desktop's opener; Close ends it."""
    opened = []
    monkeypatch.setattr(about_box, "open_file", lambda path: opened.append(path) or True)
    assert about.version() == _pyproject_version()
    ui.click(*_centre(ui, "menu help"))
    ui.click(*_centre(ui, "help about"))
    assert ui.app.about_open
    ui.frame()
    assert "about readme" in ui.app.rects and "about close" in ui.app.rects and "about adapter" in ui.app.rects
    device = ui.app.gpu.device.info  # the GPU named as SlangPy lists it: its name and LUID's hex
    adapter = next(a for a in spy.Device.enumerate_adapters(device.type) if a.name == device.adapter_name)
    uuid = "".join(f"{byte:02x}" for byte in adapter.luid)
    assert about_box.adapter_line(ui.app.gpu).endswith(f"{adapter.name}, UUID {uuid}")
    ui.click(*_centre(ui, "about readme"))
    assert opened == [ROOT / "README.md"]
    ui.click(*_centre(ui, "about close"))
    assert not ui.app.about_open


def test_an_installed_wheels_readme_is_its_metadatas(monkeypatch, tmp_path):
    """A wheel holds no README.md beside the package: the one opened is the README text the
    package's metadata keeps as its description, written into the cache folder once."""
    from importlib import metadata

    try:  # CI and the README's setup install the app; the GPU machine runs the checkout on PYTHONPATH
        description = metadata.metadata(about.DISTRIBUTION).get_payload()
    except metadata.PackageNotFoundError:
        pytest.skip("the app runs uninstalled here: no package metadata to read")
    monkeypatch.setattr(about, "import_root", lambda: tmp_path / "site-packages")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = about.readme()
    assert path == tmp_path / "cache" / "slang-visual-trainer" / "README.md"
    assert path.read_text(encoding="utf-8") == description and description.startswith("# Slang Visual Trainer")
    assert about.readme_shown().startswith(str(path))
