"""What the Training panel shows first after the loss diverged: where, what was kept, the ways on.
Each way on says every setting it changes: going back to the last stable network takes the
settings it trained with (an optimizer changed since goes back too)."""

from __future__ import annotations

from imgui_bundle import imgui

from ...config.config import FIELDS, Config
from ...model.half_range import half_hint
from ..style import BAD, GOOD, MUTED, WARN


def changes(now: Config, then: Config) -> list[str]:
    """The settings that differ from `now` in `then`, as "label value" (the rate first)."""
    names = sorted((name for name in FIELDS if getattr(now, name) != getattr(then, name)), key=lambda n: n != "lr")
    return [f"{FIELDS[name].label} {_value(getattr(then, name))}" for name in names]


def _value(value) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def draw(app) -> None:
    d, session = app.session.divergence, app.session
    imgui.push_text_wrap_pos(0.0)
    imgui.text_colored(BAD, f"The loss became non-finite at step {d.step:,} (learning rate {d.lr:.3g}).")
    imgui.text_colored(MUTED, f"Training is paused on the last network with a finite loss (step {d.restored_step:,}).")
    now = session.config
    hint = half_hint(now.encoding_settings, now.domain, now.precision)
    if hint:
        imgui.text_colored(WARN, f"Note: {hint}.")
    imgui.pop_text_wrap_pos()
    full = imgui.ImVec2(imgui.get_content_region_avail().x, 0)
    advice = app.rate_advice()
    then = session.restorable_config() if advice.from_stable else session.config
    changed = changes(session.config, then.replace(lr=advice.lr)) if then is not None else []
    label = f"Resume with {', '.join(changed) or f'lr {advice.lr:.3g}'}"
    if advice.from_stable:
        label += f" from step {session.stable_step:,}"
    if imgui.button(label, full):
        app.resume(advice)
    app.remember("resume")
    if imgui.is_item_hovered():
        tried = "".join(f"\n  lr {lr:.3g}: {outcome}" for lr, outcome in advice.tried)
        imgui.set_tooltip(
            f"from {'the last stable network' if advice.from_stable else 'this network'}, "
            "with the optimizer's moments reset"
            + (f"\nrates replayed from here, largest first:{tried}" if tried else "")
        )
    imgui.push_text_wrap_pos(0.0)
    imgui.text_colored(GOOD if advice.checked else MUTED, f"lr {advice.lr:.3g}: {advice.reason}")
    imgui.pop_text_wrap_pos()
    stable = session.stable_step
    if stable is not None and stable < d.restored_step:
        config = session.restorable_config()
        back = ", ".join(changes(session.config, config)) or "the same settings"
        if imgui.button(f"Back to step {stable:,} ({back})", full):
            app.go_back_to_stable()
        app.remember("back to stable")
        if imgui.is_item_hovered():
            imgui.set_tooltip("the network and settings from before the change that led here")
    imgui.separator()
