"""Widgets drawn from declarations: a Config field's by its Spec's widget (app/config/config.py), an
optimizer's hyper-parameters by their Hyper (app/model/optimizers.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from imgui_bundle import imgui

from ..config.config import FIELDS, Config
from ..model.encodings import FEATURES
from ..model.optimizers import Hyper
from .sliders import real, typed_slider, whole
from .style import field_error

FEATURE_LABELS = {name: feature.label for name, feature in FEATURES.items()}


def widget_fields(kind: str, config: Config) -> list[str]:
    """The fields of `kind` that have a widget shown for `config`, in the table's order."""
    return [
        name
        for name, spec in FIELDS.items()
        if spec.kind == kind and spec.widget is not None and (spec.shown is None or spec.shown(config))
    ]


def draw_field(app, name: str, config: Config, apply: Callable[[Any], None], label: str | None = None) -> None:
    """The field's widget (labelled `label`, its label by default); the value the user chose
    goes to `apply`, which reports a refused one in app.field_errors under the field's label. A
    slider's Ctrl+click types the value (app/ui/sliders.py)."""
    spec, value = FIELDS[name], getattr(config, name)
    if spec.widget == "combo":
        chosen = _combo(app, spec.label, label or spec.label, spec.check.options, value)
        if chosen is not None:
            apply(chosen)
        field_error(app, spec.label)
        return
    if spec.widget == "slider":
        typed_slider(
            app,
            spec.label,
            spec.label,
            lambda flags: imgui.slider_int(spec.label, value, spec.check.low, spec.check.high, "%d", flags),
            str(value),
            whole(spec.label),
            apply,
        )
        return
    if spec.widget == "checks":  # a Subset: one checkbox an option, at least one kept
        chosen = _checks(app, spec.label, spec.check.options, value)
        if chosen is not None:
            apply(chosen)
        field_error(app, spec.label)
        return
    raise ValueError(f"{name} has no widget this module draws ({spec.widget!r})")


def _combo(app, name: str, label: str, options: tuple[str, ...], value: str) -> str | None:
    """A combo labelled `label` of `options`; the one chosen, or None. The combo's frame and each
    option, while its list is open, are remembered by `name` ("encoding", "encoding: features")
    for tests to click."""
    result = None
    opened = imgui.begin_combo(label, value)
    app.remember(name, "" if label.startswith("##") else label)
    if not opened:
        return None
    for option in options:
        if imgui.selectable(option, option == value)[0] and option != value:
            result = option
        if option == value:
            imgui.set_item_default_focus()
        app.remember(f"{name}: {option}")
    imgui.end_combo()
    return result


def _checks(app, label: str, options: tuple[str, ...], chosen: list[str]) -> list[str] | None:
    """A checkbox an option, as many to a line as fit, then the label; each checkbox is
    remembered by name ("features xy") for tests to click."""
    imgui.push_id(label)
    result = None
    right = imgui.get_cursor_screen_pos().x + imgui.get_content_region_avail().x
    box = imgui.get_frame_height() + imgui.get_style().item_inner_spacing.x
    for k, option in enumerate(options + (label,)):
        text = FEATURE_LABELS.get(option, option)
        width = imgui.calc_text_size(text).x + (0 if option == label else box)
        if k:
            imgui.same_line()
            if imgui.get_cursor_screen_pos().x + width > right:
                imgui.new_line()
        if option == label:
            imgui.align_text_to_frame_padding()
            imgui.text(label)
            continue
        changed, on = imgui.checkbox(text, option in chosen)
        app.remember(f"{label} {option}")
        if changed and (on or len(chosen) > 1):  # the last one stays
            result = [o for o in options if (o in chosen) != (o == option)]
    imgui.pop_id()
    return result


def draw_hyper(app, hyper: Hyper) -> None:
    """One hyper-parameter of the current optimizer, applied to the session as it changes."""
    value = getattr(app.config, hyper.field)
    if hyper.slider is not None:

        def slider(flags: int) -> tuple[bool, float]:
            flags |= imgui.SliderFlags_.always_clamp
            changed, moved = imgui.slider_float(hyper.name, value, *hyper.slider, hyper.format, flags)
            return changed, round(moved, hyper.digits)

        typed_slider(
            app,
            hyper.name,
            hyper.name,
            slider,
            hyper.format % value,
            real(hyper.name),
            lambda typed: app.apply_hot(hyper.name, **{hyper.field: typed}),
        )
        return
    flags = imgui.InputTextFlags_.enter_returns_true
    changed, value = imgui.input_double(hyper.name, value, 0.0, 0.0, hyper.format, flags)
    app.remember(hyper.name)
    if changed:
        app.apply_hot(hyper.name, **{hyper.field: value})
    field_error(app, hyper.name)
