"""Issue 16, Found 6: the loss plot's axes fit the current run (after a Reset the new run is not a
dot at the left edge of the old run's length; after a divergence and "Back to step N" the log
axis fits the recovered curve, not 1 to 1e30), and earlier runs are drawn in colours of their
own, named in the legend."""

from __future__ import annotations

import imgui_bundle  # noqa: F401 (a dependency: a broken install fails here, never skips)
import numpy as np
import pytest
from test_ui_offscreen import _centre

from app.loop.history import Run
from app.ui.offscreen import OffscreenApp
from app.ui.panels import loss_colours, loss_plot


def _run(steps, losses, evals=()) -> Run:
    run = Run("r")
    run.train.extend(np.asarray(steps, float), np.asarray(losses, float))
    for step, loss in evals:
        run.eval.extend(step, loss)
    return run


def test_the_axes_fit_the_current_run():
    earlier = _run(range(1, 5001), np.linspace(10, 0.001, 5000))
    current = _run(range(1, 31), np.linspace(2, 0.5, 30), [(10, 1.0)])
    x0, x1, y0, y1 = loss_plot.axis_limits(current, [earlier])
    assert (x0, x1) == (1, 30), "the new run's steps, not the earlier run's 5000"
    assert y0 == pytest.approx(min(0.5, earlier.train.y[29]) / 1.5)
    assert y1 == pytest.approx(10 * 1.5), "the earlier run's losses over those steps count"
    assert loss_plot.axis_limits(_run([7], [0.3]), [])[:2] == (6, 8), "one step still has a width"


def test_the_earlier_runs_have_colours_of_their_own():
    for colour in loss_colours.EARLIER:
        for current in (loss_colours.TRAIN, loss_colours.EVAL):
            distance = np.linalg.norm(np.subtract([colour.x, colour.y, colour.z], [current.x, current.y, current.z]))
            assert distance > 0.4, "clearly distinct from the current curves"


def test_after_going_back_the_axis_fits_the_recovered_curve_and_runs_are_named(make_session, monkeypatch):
    from imgui_bundle import implot

    drawn = []
    plot_line = implot.plot_line

    def recording(label, x, y, spec):
        drawn.append((label, (spec.line_color.x, spec.line_color.y, spec.line_color.z)))
        plot_line(label, x, y, spec)

    monkeypatch.setattr(implot, "plot_line", recording)
    ui = OffscreenApp(make_session(optimizer="sgd", lr=0.05), 1280, 800)
    try:
        ui.session.advance(40)
        ui.app.reset(3)  # a second run: the first is an earlier one now
        assert ui.frames_until(lambda: ui.session.trainer.step >= 100), "100 steps"
        ui.app.apply_hot("learning rate", lr=1000.0)
        assert ui.frames_until(lambda: ui.session.divergence is not None), "a learning rate of 1000 diverges"
        ui.frames_until_still("back to stable")
        assert loss_plot.axis_limits(ui.session.history.current, ui.session.history.earlier)[3] > 1e20
        ui.click(*_centre(ui, "back to stable"))
        back = ui.session.trainer.step
        assert ui.frames_until(lambda: ui.session.trainer.step >= back + 10), "it trains on from the stable network"
        current = ui.session.history.current
        assert current.train.x[-1] == ui.session.trainer.step and np.all(np.diff(current.train.x) == 1)
        _, _, y0, y1 = loss_plot.axis_limits(current, ui.session.history.earlier)
        assert y1 < 20, f"the log axis fits the recovered curve (top {y1:.3g})"
        drawn.clear()
        ui.frame()
        labels = dict(drawn)
        assert "earlier: formulas, 4-16-4 seed 0##0" in labels, labels
        assert labels["earlier: formulas, 4-16-4 seed 0##0"] == pytest.approx(
            tuple(getattr(loss_colours.EARLIER[0], c) for c in "xyz")
        )
        assert labels["train (batch)"] != labels["earlier: formulas, 4-16-4 seed 0##0"]
    finally:
        ui.close()


@pytest.mark.parametrize(("x1", "pixels"), [(150_000, 150), (37, 400), (2e8, 300), (14_000, 600), (5, 100)])
def test_step_ticks_are_their_labels_width_apart_and_inside_the_axis(x1, pixels):
    """Issue 42: ImPlot's own step labels ran together on a narrow plot ("60000100000140000")."""
    from app.ui.panels.step_ticks import step_ticks

    width_of, gap = (lambda text: 7.0 * len(text)), 14.0
    values, labels = step_ticks(1.0, x1, pixels, width_of, gap)
    assert values, "at least one tick"
    centres = [(value - 1.0) / (x1 - 1.0) * pixels for value in values]
    for (a, left), (b, right) in zip(zip(centres, labels), list(zip(centres, labels))[1:]):
        assert b - a >= (width_of(left) + width_of(right)) / 2 + gap, (labels, centres)
    assert all(width_of(t) / 2 <= c <= pixels - width_of(t) / 2 for c, t in zip(centres, labels))
    assert all(value == int(value) for value in values), "steps are whole"


def test_step_labels_are_short_from_10k():
    from app.ui.panels.step_ticks import step_ticks

    assert step_ticks(1.0, 150_000, 150, lambda text: 7.0 * len(text), 14.0)[1] == ["50k", "100k"]
    assert step_ticks(1.0, 2e8, 600, lambda text: 7.0 * len(text), 14.0)[1][:2] == ["20M", "40M"]
    assert step_ticks(1.0, 9000, 600, lambda text: 7.0 * len(text), 14.0)[1][:2] == ["1000", "2000"]
