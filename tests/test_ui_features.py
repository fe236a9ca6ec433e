"""The Network panel's encoding and its Playground features, clicked as a user would: each test
checks the value the click set."""

from __future__ import annotations

import imgui_bundle  # noqa: F401 (a dependency: a broken install fails here, never skips)
from test_ui_offscreen import _centre


def _shown(ui, name: str) -> tuple[float, float]:
    """The centre of widget `name`, which must be in view in its panel (a click lands there)."""
    x0, y0, x1, y1 = ui.app.rects[name]
    panel = ui.app.windows["Network"]
    assert panel[0] <= x0 and x1 <= panel[2] and panel[1] <= y0 and y1 <= panel[3], (name, ui.app.rects[name], panel)
    return (x0 + x1) / 2, (y0 + y1) / 2


def test_switching_the_encoding_to_features_keeps_the_inputs_and_they_are_editable(ui):
    """The Network panel, clicked as a user would: poly2 -> features starts from poly2's inputs,
    x, y, x2, y2 (it dropped to x, y), each feature's checkbox edits the draft, and Apply builds
    a network of those inputs."""
    ui.resize(1280, 1400)  # the panel tall enough to show the checkboxes under the encoding
    ui.frame(3)
    ui.click(*_shown(ui, "encoding"))
    ui.frame()
    ui.click(*_centre(ui, "encoding: features"))
    assert (ui.app.draft.encoding, ui.app.draft.features) == ("features", ["x", "y", "x2", "y2"])
    ui.frame()
    ui.click(*_shown(ui, "features xy"))
    assert ui.app.draft.features == ["x", "y", "x2", "y2", "xy"]
    ui.frame()
    ui.click(*_shown(ui, "features x2"))
    assert ui.app.draft.features == ["x", "y", "y2", "xy"]
    ui.app.start_rebuild()
    assert ui.frames_until(lambda: ui.session.rebuild is None, 120), "the rebuild finishes"
    assert ui.session.config.features == ["x", "y", "y2", "xy"] and ui.session.trainer.plan.sizes[0] == 4


def test_the_features_a_switch_starts_from():
    """raw's inputs are x, y; Fourier's and a grid's are no Playground features, so the features
    last chosen stay."""
    from app.config.config import Config
    from app.ui.panels.network import _changes

    assert _changes(Config(encoding="raw"), "encoding", "features")["features"] == ["x", "y"]
    chosen = Config(encoding="fourier", features=["sinx", "siny"])
    assert _changes(chosen, "encoding", "features") == {"encoding": "features", "features": ["sinx", "siny"]}
    assert _changes(chosen, "encoding", "hashgrid") == {"encoding": "hashgrid"}
