"""Widgets drawn from declarations: a Config field's by its Spec's widget (app/config.py), an
optimizer's hyper-parameters by their Hyper (app/optimizers.py)."""

from __future__ import annotations

from typing import Any

from imgui_bundle import imgui

from ..config import FIELDS, Config
from ..optimizers import Hyper
from ..ui.style import field_error


def widget_fields(kind: str, config: Config) -> list[str]:
    """The fields of `kind` that have a widget shown for `config`, in the table's order."""
    return [
        name
        for name, spec in FIELDS.items()
        if spec.kind == kind and spec.widget is not None and (spec.shown is None or spec.shown(config))
    ]


def draw_field(name: str, config: Config) -> Any | None:
    """The field's widget; returns the value the user chose, or None where nothing changed."""
    spec, value = FIELDS[name], getattr(config, name)
    if spec.widget == "combo":
        options = spec.check.options
        changed, index = imgui.combo(spec.label, options.index(value), list(options))
        return options[index] if changed else None
    if spec.widget == "slider":
        changed, value = imgui.slider_int(spec.label, value, spec.check.low, spec.check.high)
        return value if changed else None
    raise ValueError(f"{name} has no widget this module draws ({spec.widget!r})")


def draw_hyper(app, hyper: Hyper) -> None:
    """One hyper-parameter of the current optimizer, applied to the session as it changes."""
    value = getattr(app.config, hyper.field)
    if hyper.slider is not None:
        changed, value = imgui.slider_float(
            hyper.name, value, *hyper.slider, hyper.format, imgui.SliderFlags_.always_clamp
        )
        app.remember(hyper.name, hyper.name)
        if changed:
            app.apply_hot(hyper.name, **{hyper.field: round(value, hyper.digits)})
    else:
        flags = imgui.InputTextFlags_.enter_returns_true
        changed, value = imgui.input_double(hyper.name, value, 0.0, 0.0, hyper.format, flags)
        app.remember(hyper.name)
        if changed:
            app.apply_hot(hyper.name, **{hyper.field: value})
    field_error(app, hyper.name)
