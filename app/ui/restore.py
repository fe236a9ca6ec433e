"""The kept sessions as the window sees them (app/files/autosave.py): this session's own file,
written when the window ends, and the prompt at the next launch that offers to restore the newest."""

from __future__ import annotations

from imgui_bundle import imgui

from ..errors import first_line
from ..files import autosave
from .style import MUTED, begin_centred_modal, em

PROMPT = "Restore the last session?"


def save_on_exit(app) -> str:
    """Writes the autosave; returns the line the window prints (where it went, or why not)."""
    if app.restore_offer is not None:  # paused since launch: the autosave offered is worth more
        return f"the last session's autosave is kept: {app.restore_offer.path} (its offer was not answered)"
    try:
        path, state = autosave.write(app.session, app.started)
    except Exception as error:  # a full disk, a lost device: the exit goes on, and says so
        return f"note: the session was not autosaved: {first_line(error)}"
    return f"autosaved: {path} (step {state.step:,}; the next launch offers it)"


def draw_offer(app) -> None:
    """A modal prompt while app.restore_offer is set: restore the autosave, or start fresh.
    Nothing trains until the user answers (the window starts paused when it offers one)."""
    offer = app.restore_offer
    if offer is None:
        return
    if not begin_centred_modal(PROMPT):
        return
    imgui.text(f"The last session was saved when it ended: {offer.describe()}.")
    imgui.text_colored(MUTED, f"{offer.path}  (--fresh starts without asking)")
    imgui.spacing()
    if imgui.button("Restore it", imgui.ImVec2(em(9), 0)):
        app.restore_offer, app.running = None, True
        app.files.load(str(offer.path))
        imgui.close_current_popup()
    app.remember("restore autosave")
    imgui.same_line()
    if imgui.button("Start fresh", imgui.ImVec2(em(9), 0)):
        app.restore_offer, app.running = None, True
        imgui.close_current_popup()
    app.remember("decline autosave")
    if imgui.is_item_hovered():
        imgui.set_tooltip(
            f"this session is kept as it is, and the new one in a file of its own when it ends:\n"
            f"the last {autosave.KEEP} sessions stay under File > Recent sessions"
        )
    imgui.end_popup()
