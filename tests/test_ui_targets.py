"""The window's new views and controls, driven by injected input in the offscreen UI: targets typed
live (a good one rebuilds keeping the weights, a bad or hostile one is reported at its column
and changes nothing), outputs added and removed, presets, the derivative views, a neuron shown
large, the gradient check button."""

from __future__ import annotations

import numpy as np
from imgui_bundle import imgui  # a dependency: a broken install fails here, never skips
from reference import grid_centres
from test_ui_offscreen import _centre, _type


def _rebuilt(ui, seconds=120):
    ui.frames_until(lambda: ui.session.rebuild is None, seconds)
    assert ui.session.rebuild is None and ui.session.rebuild_error is None, ui.session.rebuild_error
    ui.frame(2)


def test_typing_targets_live(ui):
    ui.click(*_centre(ui, "pause"))
    before = ui.session.trainer.parameters()
    # A bad expression: the column is named, the network and its targets stay, training goes on.
    ui.click(*_centre(ui, "target f2"))
    _type(ui, "2*x + sin(")
    error = ui.app.targets.errors[1]
    assert error.column == 10 and "at column 10" in str(error)
    assert ui.session.rebuild is None and ui.session.config.targets[1] == "2*x + y"
    field, message = ui.app.rects["target f2"], ui.app.rects["target f2 error"]
    assert 0 <= message[1] - field[3] < 25, "the message is right under the field"
    ui.click(*_centre(ui, "pause"))
    step = ui.session.trainer.step  # on the clock: a loaded machine's frames may hold no step
    assert ui.frames_until(lambda: ui.session.trainer.step > step, seconds=30), "training goes on"
    ui.click(*_centre(ui, "pause"))
    before = ui.session.trainer.parameters()
    # Hostile input never starts a build.
    for text in ("__import__('os').system('ls')", "x; } void f() {", "(" * 300 + "x"):
        ui.click(*_centre(ui, "target f2"))
        _type(ui, text)
        assert ui.session.rebuild is None and 1 in ui.app.targets.errors, text
    # A good one rebuilds, with the weights the network had: the other outputs keep their fit.
    ui.click(*_centre(ui, "target f2"))
    _type(ui, "sin(3*x) * cos(2*y)")
    assert 1 not in ui.app.targets.errors and ui.session.rebuild is not None
    _rebuilt(ui)
    assert ui.session.config.targets[1] == "sin(3*x) * cos(2*y)"
    assert np.array_equal(ui.session.trainer.parameters(), before)
    truth = ui.session.evaluator.evaluate().truths[..., 1]
    x, y = grid_centres([-1, 1, -1, 1], 64)
    np.testing.assert_allclose(truth, np.sin(3 * x) * np.cos(2 * y), atol=1e-6)
    assert ui.app.targets.mine[0] == "sin(3*x) * cos(2*y)", "remembered for the menu"


def test_outputs_added_removed_and_chosen_from_presets(ui):
    """Each change builds on the one being built: three clicks, one network at the end."""
    ui.click(*_centre(ui, "target menu f1"))
    ui.frame()
    ui.click(*_centre(ui, "preset Gaussian bump"))
    assert ui.session.rebuild.config.targets[0] == "exp(-4 * (x*x + y*y))"
    ui.click(*_centre(ui, "add output"))
    assert ui.session.rebuild.config.targets == [
        "exp(-4 * (x*x + y*y))",
        "2*x + y",
        "0.5*x*x + 1.2*y",
        "x + 0.5*y*y",
        "x * y",
    ]
    ui.click(*_centre(ui, "remove f2"))
    _rebuilt(ui)
    assert ui.session.config.targets == ["exp(-4 * (x*x + y*y))", "0.5*x*x + 1.2*y", "x + 0.5*y*y", "x * y"]
    assert ui.session.trainer.plan.sizes == (4, 16, 4)
    ui.click(*_centre(ui, "add output"))
    assert ui.session.rebuild.config.output_dim == 5, "the output layer follows the number of targets"


def test_views_neurons_and_gradient_check(ui):
    ui.click(*_centre(ui, "pause"))
    ui.frame(2)
    pixels = ui.target.to_numpy()[..., :3].astype(np.float32)
    ui.click(*_centre(ui, "view ∂/∂x"))
    assert ui.app.view == 1
    ui.frame()
    x0, y0, x1, y1 = (int(v) for v in ui.app.windows["Heatmaps"])
    changed = np.abs(ui.target.to_numpy()[..., :3].astype(np.float32) - pixels)[y0:y1, x0:x1]
    assert changed.mean() > 5, "the panels show the derivatives now"
    # A hidden neuron clicked in the diagram is shown large over the Loss panel.
    neuron = ui.session.trainer.plan.input_dim + 3
    nx0, ny0, nx1, ny1 = ui.app.diagram_nodes[neuron]
    ui.click((nx0 + nx1) / 2, (ny0 + ny1) / 2)
    assert ui.app.selected_neuron == neuron
    ui.frame()
    assert ui.app.windows["Neuron"][:2] == ui.app.windows["Loss"][:2]
    ix0, iy0, ix1, iy1 = (int(v) for v in ui.app.rects["neuron image"])
    assert ix1 - ix0 > 200, "large"
    image = ui.target.to_numpy()[iy0 + 2 : iy1 - 2, ix0 + 2 : ix1 - 2, :3].astype(np.float32)
    assert image.std() > 3, "not a flat image"
    ui.click((nx0 + nx1) / 2, (ny0 + ny1) / 2)
    assert ui.app.selected_neuron is None
    ui.click(*_centre(ui, "gradient check"))
    ui.frames_until(lambda: not ui.app.grad_check_wanted)  # a loaded machine's frames leave steps in pieces
    check = ui.app.grad_check
    assert check is not None and check.passed and check.parameters == 148
    assert "gradient check result" in ui.app.rects


def _shown(ui, name: str) -> bool:
    """Whether the last frame drew the widget remembered as `name` (rects outlive their frames)."""
    ui.app.rects.pop(name, None)
    ui.frame()
    return name in ui.app.rects


def test_text_not_entered_stays_unapplied_and_enter_escape_caret_and_poles(ui):
    """Issue 16, Found 11: a click away neither applies a field nor loses what was typed in it
    (the field keeps it, marked "not applied"; Enter applies the text the widget kept, Escape
    goes back); x^2 is a power on the GPU as in numpy; 1/x is refused under its field."""
    ui.click(*_centre(ui, "pause"))
    edits = ui.app.targets
    ui.click(*_centre(ui, "target f2"))
    ui.renderer.make_current()
    imgui.get_io().add_input_characters_utf8(" + 3*x")
    ui.frame()
    ui.click(*_centre(ui, "pause"))  # away from the field, without Enter
    ui.click(*_centre(ui, "pause"))
    assert ui.session.rebuild is None and ui.session.config.targets[1] == "2*x + y", "not applied"
    assert edits.texts[1] == "2*x + y + 3*x" and edits.unapplied == {1}, "what was typed is kept"
    assert _shown(ui, "target f2 unapplied")
    field, hint = ui.app.rects["target f2"], ui.app.rects["target f2 unapplied"]
    assert 0 <= hint[1] - field[3] < 25, "the hint is right under the field"
    # Another field applied by Enter (with ^ as the power): the unapplied text survives its rebuild.
    ui.click(*_centre(ui, "target f3"))
    _type(ui, "x^2 - y")
    assert ui.session.rebuild is not None and ui.session.rebuild.config.targets[2] == "x^2 - y"
    _rebuilt(ui)
    assert ui.session.config.targets[1:3] == ["2*x + y", "x^2 - y"] and edits.texts[1] == "2*x + y + 3*x"
    truth = ui.session.evaluator.evaluate().truths[..., 2]
    x, y = grid_centres([-1, 1, -1, 1], 64)
    np.testing.assert_allclose(truth, x**2 - y, atol=1e-6)
    # Enter in f2, nothing typed: the text the field kept is what applies.
    ui.click(*_centre(ui, "target f2"))
    ui.press(imgui.Key.enter)
    assert ui.session.rebuild is not None and ui.session.rebuild.config.targets[1] == "2*x + y + 3*x"
    assert not edits.unapplied and not _shown(ui, "target f2 unapplied")
    _rebuilt(ui)
    # Escape after typing: the field shows the applied target again, nothing is rebuilt.
    ui.click(*_centre(ui, "target f2"))
    ui.renderer.make_current()
    imgui.get_io().add_input_characters_utf8(" - 7")
    ui.frame()
    assert edits.unapplied == {1}
    ui.press(imgui.Key.escape)
    assert edits.texts[1] == "2*x + y + 3*x" and not edits.unapplied and ui.session.rebuild is None
    # A pole on the domain: one line under the field, the network and its targets kept.
    before = ui.session.trainer.parameters()
    ui.click(*_centre(ui, "target f2"))
    _type(ui, "1/x")
    error = str(edits.errors[1])
    assert "'1/x' is inf at x = 0" in error and "must be finite over the whole domain" in error, error
    assert "\n" not in error and ui.session.rebuild is None and ui.session.config.targets[1] == "2*x + y + 3*x"
    assert np.array_equal(ui.session.trainer.parameters(), before)
    assert _shown(ui, "target f2 error")
