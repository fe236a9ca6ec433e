"""Issue 16, Found 1 and 2: every slider's Ctrl+click text entry sets the quantity the slider
shows (the batch size, not its index; the learning rate, not its log10), and a bad value is a
message under the slider, never a crash. Driven by injected input in the offscreen UI."""

from __future__ import annotations

import pytest
from imgui_bundle import imgui  # a dependency: a broken install fails here, never skips
from test_ui_offscreen import _centre, _type


def _ctrl_click(ui, name: str) -> None:
    ui.renderer.make_current()
    imgui.get_io().add_key_event(imgui.Key.mod_ctrl, True)
    ui.click(*_centre(ui, name))
    ui.renderer.make_current()
    imgui.get_io().add_key_event(imgui.Key.mod_ctrl, False)
    ui.frame()


def _type_into_slider(ui, name: str, text: str) -> None:
    _ctrl_click(ui, name)
    assert ui.app.typing is not None and ui.app.typing.name == name, "Ctrl+click opens the text field"
    _type(ui, text)
    assert ui.app.typing is None, "Enter closes it"


def _sgd(ui):
    ui.app.apply_hot("optimizer", optimizer="sgd")
    ui.frame()


def _fourier(ui):
    ui.app.draft = ui.app.draft.replace(encoding="fourier")
    ui.frame()
    # The frequencies slider is below the Network panel's fold at 1280 x 800: scrolled to, as a user would
    x0, y0, x1, y1 = ui.app.windows["Network"]
    ui.move((x0 + x1) / 2, (y0 + y1) / 2)
    ui.renderer.make_current()
    imgui.get_io().add_mouse_wheel_event(0.0, -20.0)
    ui.frame(2)
    assert ui.app.rects["frequencies"][3] <= y1, "scrolled into view"


# name: (set up, what to type, the value it should set, a bad value, its message, what is kept)
SLIDERS = {
    "batch size": (None, "4096", 4096, "4k", "not a number", lambda ui: ui.session.config.batch_size),
    "learning rate": (None, "0.001", 0.001, "-1", "learning rate", lambda ui: ui.session.config.lr),
    "layer 1 width": (None, "100", 100, "300", "hidden", lambda ui: ui.app.draft.hidden[0]),
    "heatmap size": (None, "9", 9.0, "30", "between 4 and 14 em", lambda ui: ui.app.layout.image_em),
    "momentum": (_sgd, "0.5", 0.5, "1.5", "[0, 1)", lambda ui: ui.session.config.beta1),
    "frequencies": (_fourier, "7", 7, "20", "frequencies", lambda ui: ui.app.draft.frequencies),
}


@pytest.mark.parametrize("name", SLIDERS)
def test_typing_into_every_slider_sets_the_quantity_it_shows(ui, name):
    setup, text, expected, bad, message, value = SLIDERS[name]
    if setup is not None:
        setup(ui)
    _type_into_slider(ui, name, text)
    assert value(ui) == pytest.approx(expected), f"typing {text} into {name} set {value(ui)}"
    assert name not in ui.app.field_errors
    _type_into_slider(ui, name, bad)
    assert message in ui.app.field_errors[name], ui.app.field_errors
    assert value(ui) == pytest.approx(expected), "a bad value changes nothing"
    ui.frame(2)  # and the window goes on: the message is drawn under the slider
    field, shown = ui.app.rects[name], ui.app.rects[f"{name} error"]
    assert 0 <= shown[1] - field[3] < 20, "the message is right under the slider"


def test_the_batch_size_the_issue_typed_and_its_text(ui):
    """Found 1: the field held the slider's position ("15"); 4096 crashed with an IndexError."""
    ui.app.apply_hot("batch size", batch_size=65536)
    ui.frame()
    _ctrl_click(ui, "batch size")
    assert ui.app.typing.text == "65536", "the field shows the batch size, not the slider's position"
    _type(ui, "4096")
    assert ui.session.config.batch_size == 4096
    _type_into_slider(ui, "batch size", "3,000")
    assert ui.session.config.batch_size == 3000, "any size the config takes, not only the slider's stops"
    before = ui.session.trainer.step
    assert ui.frames_until(lambda: ui.session.trainer.step > before, seconds=30), "and it trains with it"


def test_escape_keeps_the_slider_value(ui):
    _ctrl_click(ui, "learning rate")
    ui.renderer.make_current()
    imgui.get_io().add_input_characters_utf8("0.5")
    ui.frame()
    ui.press(imgui.Key.escape)
    assert ui.app.typing is None and ui.session.config.lr == pytest.approx(0.01)


def test_a_stale_learning_rate_message_goes_when_the_rate_changes(ui):
    """Found 11: a rejected exact lr's message stayed after the rate was set another way."""
    ui.click(*_centre(ui, "exact lr"))
    _type(ui, "-1")
    assert "exact lr" in ui.app.field_errors
    _type_into_slider(ui, "learning rate", "0.002")
    ui.frame()
    assert ui.session.config.lr == pytest.approx(0.002)
    assert ui.app.field_errors == {}, "the message about the old value is gone"
    ui.frame()
    panel, button = ui.app.windows["Training"], ui.app.rects["gradient check"]
    assert button[3] <= panel[3], "and Gradient check is back in view"
