"""Help > About: the app's version (from the package's metadata), what it is, the GPU it runs on,
and a link that opens the README (app/files/about.py finds it, in a checkout or an installed
wheel) with the desktop's opener, xdg-open."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from imgui_bundle import imgui

from ..errors import first_line
from ..files import about
from .style import MUTED, begin_centred_modal, em

TITLE = "About Slang Visual Trainer"
OPENER = "xdg-open"


def open_file(path: Path) -> bool:
    """Opens `path` with the desktop's opener, in the background; False where there is none."""
    opener = shutil.which(OPENER)
    if opener is None:
        return False
    subprocess.Popen(
        [opener, str(path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # the viewer outlives the app, and a Ctrl+C in its terminal
    )
    return True


def adapter_line(gpu) -> str:
    """The GPU the window runs on, named as summary.json's adapter names it (its index and UUID
    tell a multi-GPU machine's GPUs apart; app/gpu/adapters.py)."""
    api = gpu.device.info.type.name.lower()
    if gpu.adapter is None:  # SlangPy listed no adapter of that name
        return f"Runs on {gpu.device.info.adapter_name} ({api})"
    return f"Runs on {api} adapter {gpu.adapter.text()}"


def _open_readme(app) -> None:
    try:
        path = about.readme()
    except OSError as error:
        app.say(f"README not opened: {first_line(error)}")
        return
    if not open_file(path):
        app.say(f"no {OPENER} to open it: the README is {path}", 8.0)


def draw(app) -> None:
    """The About box, while app.about_open: a modal that Close or Escape ends."""
    if not app.about_open:
        return
    if not begin_centred_modal(TITLE):
        return
    imgui.text(f"Slang Visual Trainer {about.version()}")
    imgui.text_colored(MUTED, about.summary())
    imgui.text(adapter_line(app.gpu))
    app.remember("about adapter")
    imgui.spacing()
    imgui.align_text_to_frame_padding()
    imgui.text("Documentation:")
    imgui.same_line()
    shown = about.readme_shown()
    if imgui.text_link(shown):
        _open_readme(app)
    app.remember("about readme")
    if imgui.is_item_hovered():
        imgui.set_tooltip(f"opens the README with {OPENER}")
    docs = Path(shown).parent / "docs"
    if docs.is_dir():  # a checkout: the developer's documents beside the README
        imgui.text_colored(MUTED, f"how it works, benchmarks, file formats, extending it: {docs}")
    imgui.spacing()
    if imgui.button("Close", imgui.ImVec2(em(6), 0)) or imgui.is_key_pressed(imgui.Key.escape, False):
        app.about_open = False
        imgui.close_current_popup()
    app.remember("about close")
    imgui.end_popup()
