"""The Training panel's derivative loss weights in the offscreen window, typed as a user types
them: a weight from 0 to above rebuilds the network for the derivative kernel, which goes on from
the same weights and step; back to 0 rebuilds it without; between two weights above 0 the change
is live on the same trainer; a run that cannot take the term (points) shows why and changes
nothing."""

from __future__ import annotations

import imgui_bundle  # noqa: F401 (a dependency: a broken install fails here, never skips)
import numpy as np
import pytest
from helpers import paused_at_a_step_boundary
from test_ui_offscreen import _centre, _type

from app.config.config import Config, validate
from app.loop.session import Session
from app.ui.offscreen import OffscreenApp


def _type_weight(ui, field: str, text: str) -> None:
    ui.click(*_centre(ui, field))
    _type(ui, text)


def _rebuilt(ui) -> None:
    assert ui.frames_until(lambda: ui.session.rebuild is None), "the rebuild finishes"
    ui.frame()


def test_a_gradient_weight_from_0_rebuilds_from_the_same_network_and_back(ui):
    step = paused_at_a_step_boundary(ui)
    assert step > 0, "it trained before the change"
    before, weights = ui.session.trainer, ui.session.trainer.parameters()
    _type_weight(ui, "gradient weight", "0.5")
    assert ui.session.rebuild is not None and ui.session.rebuild.keep_weights, "a rebuild that keeps the network"
    assert ui.session.building.grad_weight == 0.5, "the field shows the network being built"
    _rebuilt(ui)
    trainer = ui.session.trainer
    assert trainer is not before and ui.session.config.grad_weight == 0.5 and trainer.plan.derivatives
    assert trainer.step == step and np.array_equal(trainer.parameters(), weights), "the same weights and step"
    ui.app.running = True
    assert ui.frames_until(lambda: ui.session.trainer.step > step), "and it trains on from there"
    assert np.isfinite(ui.session.train_loss)

    with_derivatives = ui.session.trainer
    _type_weight(ui, "gradient weight", "0")
    _rebuilt(ui)
    assert ui.session.trainer is not with_derivatives and ui.session.config.grad_weight == 0.0
    assert not ui.session.trainer.plan.derivatives and ui.session.trainer.step >= step
    assert ui.app.field_errors == {}


def test_a_weight_between_two_above_0_is_live_on_the_same_trainer(ui):
    _type_weight(ui, "gradient weight", "0.5")
    _rebuilt(ui)
    trainer = ui.session.trainer
    _type_weight(ui, "gradient weight", "0.7")
    assert ui.session.rebuild is None and ui.session.trainer is trainer, "no rebuild"
    assert ui.session.config.grad_weight == 0.7 and trainer.plan.derivatives
    _type_weight(ui, "eikonal weight", "0.1")
    assert ui.session.rebuild is None and ui.session.trainer is trainer
    assert ui.session.config.eikonal == 0.1 and ui.session.config.grad_weight == 0.7


def test_a_weight_typed_while_its_rebuild_is_under_way_wins(ui):
    """0.7 before the rebuild for 0.5 is in: the network built has 0.7. Then 0.4 before the
    rebuild for 0 is in: that rebuild is dropped, and the current network trains on with 0.4
    (never the 0 that rebuild would have put in afterwards)."""
    trainer = ui.session.trainer
    _type_weight(ui, "gradient weight", "0.5")
    held = ui.session.rebuild
    held.ready = lambda: False  # still under way however fast this machine builds it
    _type_weight(ui, "gradient weight", "0.7")
    assert ui.session.rebuild is not held and ui.session.building.grad_weight == 0.7, "it starts again with 0.7"
    _rebuilt(ui)
    assert ui.session.config.grad_weight == 0.7 and ui.session.trainer.plan.derivatives

    with_derivatives = ui.session.trainer
    _type_weight(ui, "gradient weight", "0")
    assert ui.session.rebuild is not None
    ui.session.rebuild.ready = lambda: False
    _type_weight(ui, "gradient weight", "0.4")
    assert ui.session.rebuild is None and ui.session.trainer is with_derivatives, "dropped: 0.4 is live"
    assert ui.session.config.grad_weight == 0.4 and trainer is not with_derivatives


@pytest.fixture
def points_ui(gpu):
    spiral = Config(dataset={"generator": "spiral"}, domain=[-6.0, 6.0, -6.0, 6.0], points=120, hidden=[8])
    app = OffscreenApp(Session(gpu, validate(spiral), grid=64, heatmaps=True), 1280, 800)
    app.frame(3)
    yield app
    app.close()


def test_points_refuse_a_gradient_weight_by_the_field_and_keep_the_network(points_ui):
    ui = points_ui
    trainer = ui.session.trainer
    _type_weight(ui, "gradient weight", "0.5")
    message = ui.app.field_errors["gradient weight"]
    assert "a dataset's points have no gradient between them" in message
    assert ui.session.config.grad_weight == 0.0 and ui.session.rebuild is None and ui.session.trainer is trainer
    ui.frame()
    field, shown = ui.app.rects["gradient weight"], ui.app.rects["gradient weight error"]
    assert 0 <= shown[1] - field[3] < 20, "the message is drawn right under the field"
    step = ui.session.trainer.step
    assert ui.frames_until(lambda: ui.session.trainer.step > step), "the points' network trains on"


def test_the_normal_weight_needs_a_shape_and_on_one_rebuilds_with_boundary_samples(ui, gpu):
    """On the default formulas the field shows why and nothing changes; on the circle, 0.5 rebuilds
    (the step now draws boundary samples), and a change between weights above 0 is live."""
    trainer = ui.session.trainer
    _type_weight(ui, "normal weight", "0.5")
    assert "--normal-weight needs an --sdf shape" in ui.app.field_errors["normal weight"]
    assert ui.session.config.normal_weight == 0.0 and ui.session.rebuild is None and ui.session.trainer is trainer

    circle = OffscreenApp(Session(gpu, validate(Config(sdf="circle", hidden=[8])), grid=64, heatmaps=True), 1280, 800)
    try:
        circle.frame(3)
        _type_weight(circle, "normal weight", "0.5")
        _rebuilt(circle)
        plan = circle.session.trainer.plan
        assert circle.session.config.normal_weight == 0.5 and plan.derivatives and plan.normals
        rebuilt = circle.session.trainer
        _type_weight(circle, "normal weight", "2")
        assert circle.session.rebuild is None and circle.session.trainer is rebuilt, "live between weights above 0"
        assert circle.session.config.normal_weight == 2.0 and circle.app.field_errors == {}
    finally:
        circle.close()
