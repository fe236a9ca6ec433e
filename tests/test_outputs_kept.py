"""Issue 16, Found 7 and the step counter of Found 11: "+ output" and "-" keep what the other
outputs learned (the new output row starts fresh), and a rebuild that keeps the weights goes on
counting steps instead of starting again at 0."""

from __future__ import annotations

import imgui_bundle  # noqa: F401 (a dependency: a broken install fails here, never skips)
import numpy as np
import pytest
from test_ui_offscreen import _centre, _type

from app.kernels.planning import plan_for
from app.loop.carry import carry_weights
from app.ui.offscreen import OffscreenApp


@pytest.fixture
def ui(make_session):
    app = OffscreenApp(make_session(), 1280, 800)
    # trained a little: 40 steps, on the clock (a loaded machine's 20 frames held 14 steps, too few)
    app.frames_until(lambda: app.session.trainer.step >= 40, seconds=120)
    app.app.running = False
    app.frame()
    yield app
    app.close()


def _rebuilt(ui, seconds=120):
    ui.frames_until(lambda: ui.session.rebuild is None, seconds)
    assert ui.session.rebuild is None and ui.session.rebuild_error is None, ui.session.rebuild_error


def _output_losses(session) -> np.ndarray:
    evaluation = session.evaluator.evaluate()
    return np.mean((evaluation.predictions - evaluation.truths) ** 2, axis=(0, 1), dtype=np.float64)


def test_adding_an_output_keeps_the_others_fit(ui):
    before, step = _output_losses(ui.session), ui.session.trainer.step
    samples = ui.session.trainer.samples_seen
    assert before.max() < 0.2, "trained"
    ui.click(*_centre(ui, "add output"))
    _rebuilt(ui)
    assert ui.session.config.output_dim == 5
    after = _output_losses(ui.session)
    np.testing.assert_allclose(after[:4], before, rtol=1e-5)
    assert ui.session.trainer.step == step and ui.session.trainer.samples_seen == samples, "the count goes on"
    ui.app.running = True
    assert ui.frames_until(lambda: ui.session.trainer.step > step, seconds=30)
    assert ui.session.history.current.train.x[0] == step + 1, "the new run's curve starts where the old ended"


def test_removing_an_output_keeps_the_others_fit(ui):
    before = _output_losses(ui.session)
    ui.click(*_centre(ui, "remove f2"))
    _rebuilt(ui)
    assert ui.session.config.targets == ["(x + y) / (1 + y*y)", "0.5*x*x + 1.2*y", "x + 0.5*y*y"]
    np.testing.assert_allclose(_output_losses(ui.session), before[[0, 2, 3]], rtol=1e-5)


def test_a_target_edit_goes_on_counting(ui):
    step = ui.session.trainer.step
    ui.click(*_centre(ui, "target f2"))
    _type(ui, "sin(3*x)")
    _rebuilt(ui)
    assert ui.session.trainer.step == step, "the step counter goes on (it restarted at 0)"


def test_carry_weights_copies_hidden_layers_and_the_rows_named(make_session):
    old, new = plan_for(make_session().config), plan_for(make_session(targets=["x", "y", "x*y"]).config)
    rng = np.random.default_rng(0)
    old_params = rng.standard_normal(old.param_count).astype(np.float32)
    fresh = rng.standard_normal(new.param_count).astype(np.float32)
    params = carry_weights(old, old_params, new, fresh, [3, None, 0])
    hidden = old.layers[0]
    np.testing.assert_array_equal(params[hidden.offset : hidden.end], old_params[hidden.offset : hidden.end])
    out_old, out_new = old.layers[-1], new.layers[-1]
    np.testing.assert_array_equal(out_new.weights(params)[0], out_old.weights(old_params)[3])
    np.testing.assert_array_equal(out_new.weights(params)[1], out_new.weights(fresh)[1])
    np.testing.assert_array_equal(out_new.biases(params)[[0, 2]], out_old.biases(old_params)[[3, 0]])


def test_carry_weights_copies_a_grids_tables_whole():
    """A hash grid's tables follow the MLP in the parameters: a carried network keeps them (a shape
    after a shape, an output added to an image fit), where they were once left fresh."""
    from app.config.config import Config, validate

    grid = dict(encoding="hashgrid", grid_levels=4, grid_log2_size=10)
    old = plan_for(validate(Config(**grid)))
    new = plan_for(validate(Config(**grid, targets=["x", "y"])))
    rng = np.random.default_rng(1)
    old_params = rng.standard_normal(old.param_count).astype(np.float32)
    fresh = rng.standard_normal(new.param_count).astype(np.float32)
    params = carry_weights(old, old_params, new, fresh, [1, None])
    assert new.grid_param_count > 0
    np.testing.assert_array_equal(new.tables(params), old.tables(old_params))
    with pytest.raises(ValueError, match="only the output count"):
        carry_weights(old, old_params, plan_for(validate(Config(**{**grid, "grid_levels": 5}))), fresh, [0, 1])
