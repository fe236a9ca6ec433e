"""The loss plot of very long runs: drawn from bounded records within the vertex budget of one
ImGui draw list (SlangPy's renderer takes at most 65,536 vertices per list; before records
were bounded, about 10^5 steps with an eval every 100 overflowed it and the frame failed)."""

from __future__ import annotations

import numpy as np
from imgui_bundle import imgui  # a dependency: a broken install fails here, never skips

from app.ui.offscreen import OffscreenApp
from app.ui.panels import loss_plot

VERTEX_LIMIT = 1 << 16


def _long_run(record_train, record_eval, steps: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = np.arange(1, steps + 1, dtype=np.float64)
    record_train.extend(x, (0.5 * np.exp(-x / (steps / 8)) + 2e-4) * np.exp(rng.normal(0, 0.6, steps)))
    evals = np.arange(100, steps + 1, 100, dtype=np.float64)
    record_eval.extend(evals, 0.5 * np.exp(-evals / (steps / 8)) + 1e-4)


def test_three_long_runs_plot_within_one_draw_list(make_session):
    session = make_session()
    for k in range(3):
        if k:
            session.reset(seed=k)
        _long_run(session.history.current.train, session.history.current.eval, 10**6, seed=k)
    ui = OffscreenApp(session, 1280, 800)
    try:
        ui.app.running = False
        ui.frame(3)  # raises if a draw list overflows
        ui.renderer.make_current()
        lists = imgui.get_draw_data().cmd_lists
        largest = max(draw_list.vtx_buffer.size() for draw_list in lists)
    finally:
        ui.close()
    assert largest < 0.8 * VERTEX_LIMIT, f"{largest} vertices in one draw list"
    train = loss_plot.curve(session.history.current.train)
    assert len(train[0]) <= loss_plot.MAX_POINTS and train[2].sum() == 10**6, "every step is in the curve"
