"""File's actions without a dialog program (no zenity or kdialog), or served to a browser: a modal
window with a path field, filled in by app/ui/files.py, for each of its ACTIONS (and an upload button
in a browser). Enter or the button acts on the path;
a path that fails keeps the window open with the reason under the field; Escape or Cancel closes
it."""

from __future__ import annotations

from imgui_bundle import imgui

from .files import ACTIONS
from .style import BAD, MUTED, em


def draw(app) -> None:
    prompt = app.files.prompt
    if prompt is None:
        return
    kind = ACTIONS[prompt.action]
    title = f"{kind.title}##path"
    if not imgui.is_popup_open(title):
        imgui.open_popup(title)
    viewport = imgui.get_main_viewport()
    imgui.set_next_window_pos(viewport.get_center(), imgui.Cond_.appearing, imgui.ImVec2(0.5, 0.5))
    imgui.set_next_window_size(imgui.ImVec2(min(em(40), viewport.work_size.x - em(2)), 0))
    if not imgui.begin_popup_modal(title, None, imgui.WindowFlags_.no_saved_settings)[0]:
        return
    remote = app.remote
    if remote is None:
        imgui.text_colored(MUTED, "No file dialog program here (zenity or kdialog): type the path.")
    elif prompt.action in remote.uploads:
        imgui.text_colored(MUTED, "A file from this computer, or a path on the server:")
        if imgui.button("Upload from this computer..."):
            remote.ask_upload(prompt.action)  # the page picks it; the upload acts as a path would
        app.remember("path upload")
    else:
        imgui.text_colored(MUTED, "A path on the server; the file then downloads to this computer too.")
    if prompt.focus:
        imgui.set_keyboard_focus_here()
        prompt.focus = False
    imgui.set_next_item_width(-1)
    entered, prompt.text = imgui.input_text("##path", prompt.text, imgui.InputTextFlags_.enter_returns_true)
    app.remember("path field")
    if prompt.error:
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(BAD, prompt.error)
        imgui.pop_text_wrap_pos()
    if imgui.button(kind.button, imgui.ImVec2(em(6), 0)) or entered:
        app.files.submit_prompt()
    app.remember("path ok")
    imgui.same_line()
    if imgui.button("Cancel", imgui.ImVec2(em(6), 0)) or imgui.is_key_pressed(imgui.Key.escape, False):
        app.files.prompt = None
    app.remember("path cancel")
    if app.files.prompt is None:
        imgui.close_current_popup()
    imgui.end_popup()
