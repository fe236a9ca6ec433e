"""The main menu bar and the short notices shown at the bottom of the window."""

from __future__ import annotations

import time

from imgui_bundle import imgui

from ..files import autosave
from . import about
from .race_state import open_race
from .style import BAD, MUTED, em

KEYS = (
    ("Space", "play / pause"),
    ("S", "one step while paused"),
    ("R", "reset (same seed)"),
    ("F12", "save a screenshot"),
    ("Ctrl+Q", "quit (the session is kept, as when the window is closed)"),
)
_OVERLAY = (
    imgui.WindowFlags_.no_decoration
    | imgui.WindowFlags_.no_inputs
    | imgui.WindowFlags_.no_saved_settings
    | imgui.WindowFlags_.always_auto_resize
    | imgui.WindowFlags_.no_focus_on_appearing
    | imgui.WindowFlags_.no_nav
    | imgui.WindowFlags_.no_docking
)


FILE_ITEMS = (
    ("Open image...", "image"),
    ("Open shape...", "shape"),
    ("Save checkpoint...", "save"),
    ("Load checkpoint...", "load"),
    ("Export Slang...", "export"),
    ("Export mesh...", "mesh"),
    ("Save network.json...", "network"),
    ("Load CSV of points...", "csv"),
    ("Open sweep...", "sweep"),
)


def _recent_sessions(app) -> None:
    """File > Recent sessions: every kept session (app/files/autosave.py), newest first; one
    chosen is loaded as a checkpoint is (built first where its network differs)."""
    opened = imgui.begin_menu("Recent sessions")
    app.remember("file recent")
    if not opened:
        app.recent = None  # read again when the menu next opens: sessions end while the app runs
        return
    if app.recent is None:
        app.recent = autosave.kept_sessions()
    if not app.recent:
        imgui.text_colored(MUTED, "none yet: a session is kept when the window ends")
    for k, kept in enumerate(app.recent):
        if imgui.menu_item(f"{kept.describe()}##recent{k}", "", False, app.files.pending is None)[0]:
            app.files.load(str(kept.path))
        app.remember(f"recent {k}")
        if imgui.is_item_hovered():
            imgui.set_tooltip(str(kept.path))
    imgui.end_menu()


def draw(app) -> None:
    if not imgui.begin_main_menu_bar():
        return
    opened = imgui.begin_menu("File")
    app.remember("menu file")
    if opened:
        for label, action in FILE_ITEMS:
            offered = action != "mesh" or app.session.trainer.plan.point_dim == 3  # a zero level in 3D
            if imgui.menu_item(label, "", False, app.files.pending is None and offered)[0]:
                app.files.request(action)
            app.remember(f"file {action}")
        _recent_sessions(app)
        imgui.separator()
        if imgui.menu_item("Quit", "Ctrl+Q", False)[0]:
            app.quit = True  # the window's loop ends and keeps the session, as a close does
        app.remember("file quit")
        imgui.end_menu()
    opened = imgui.begin_menu("View")
    app.remember("menu view")
    if opened:
        if imgui.menu_item("Reset layout", "", False)[0]:
            app.layout_reset = True
            app.layout.follow_window()  # the heatmaps' size too
        app.remember("reset layout")
        if imgui.menu_item("Save screenshot", "F12", False)[0]:
            app.request_screenshot()
        changed, app.vsync = imgui.menu_item("Vsync", "", app.vsync)
        changed, shown = imgui.menu_item("Sweep window", "", app.sweep.visible, app.sweep.path is not None)
        if changed:
            app.sweep.visible = shown  # the sweep opened last, hidden while a trial trains
        app.remember("view sweep")
        imgui.end_menu()
    opened = imgui.begin_menu("Race")
    app.remember("menu race")
    if opened:
        if imgui.menu_item("Race networks", "", app.race is not None)[0]:
            open_race(app)
        app.remember("race networks")
        if imgui.menu_item("End race", "", False, app.race is not None)[0]:
            app.race = None
        imgui.end_menu()
    opened = imgui.begin_menu("Help")
    app.remember("menu help")
    if opened:
        for key, action in KEYS:
            imgui.text(key)
            imgui.same_line(em(4))
            imgui.text_colored(MUTED, action)
        imgui.separator()
        if imgui.menu_item("About", "", False)[0]:
            app.about_open = True
        app.remember("help about")
        imgui.end_menu()
    _failure(app)
    imgui.end_main_menu_bar()
    about.draw(app)
    if imgui.get_io().key_ctrl and imgui.is_key_pressed(imgui.Key.q, False):
        app.quit = True


def _failure(app) -> None:
    """The latest failure caught in a frame (app/ui/failures.py), until dismissed."""
    line = app.failures.line
    if not line:
        return
    if imgui.small_button("dismiss"):  # first: a long line may run past the window's edge
        app.failures.dismiss()
    app.remember("dismiss failure")
    imgui.text_colored(BAD, line)
    app.remember("failure")
    if imgui.is_item_hovered():
        imgui.set_tooltip(f"{line}\ncaught: the app and its training go on; the traceback is in the file named")


def notice(app) -> None:
    """The latest notice (a saved screenshot, say), for a few seconds, bottom right."""
    text, until = app.notice
    if not text or time.monotonic() > until:
        return
    viewport = imgui.get_main_viewport()
    corner = imgui.ImVec2(
        viewport.work_pos.x + viewport.work_size.x - em(1), viewport.work_pos.y + viewport.work_size.y - em(1)
    )
    imgui.set_next_window_pos(corner, imgui.Cond_.always, imgui.ImVec2(1.0, 1.0))
    imgui.set_next_window_bg_alpha(0.9)
    if imgui.begin("##notice", None, _OVERLAY)[0]:
        imgui.text(text)
    imgui.end()
