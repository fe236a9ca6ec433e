"""What the Training panel shows first after the loss diverged: where, what was kept, the ways on."""

from __future__ import annotations

from imgui_bundle import imgui

from ...ui.style import BAD, MUTED


def draw(app) -> None:
    d, session = app.session.divergence, app.session
    imgui.push_text_wrap_pos(0.0)
    imgui.text_colored(BAD, f"The loss became non-finite at step {d.step:,} (learning rate {d.lr:.3g}).")
    imgui.text_colored(MUTED, f"Training is paused on the last network with a finite loss (step {d.restored_step:,}).")
    imgui.pop_text_wrap_pos()
    full = imgui.ImVec2(imgui.get_content_region_avail().x, 0)
    if imgui.button(f"Resume with lr {d.lr / 10:.3g}", full):
        app.resume(0.1)
    app.remember("resume lr/10")
    if imgui.is_item_hovered():
        imgui.set_tooltip("from this network, with the optimizer's moments reset")
    stable = session.stable_step
    if stable is not None and stable < d.restored_step:
        config = session.restorable_config()
        if imgui.button(f"Back to step {stable:,} ({config.optimizer}, lr {config.lr:.3g})", full):
            app.go_back_to_stable()
        app.remember("back to stable")
        if imgui.is_item_hovered():
            imgui.set_tooltip("the network and settings from before the change that led here")
    imgui.separator()
