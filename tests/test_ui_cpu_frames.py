"""The window on a machine without a GPU (issue 16): a paused, untouched window keeps its last
frame instead of drawing it again; input or a change draws at once; a CPU driver training draws
the UI at most UI_HZ times a second; samples/s is measured over completed steps, so a step that
spans many frames never reads 0; a network whose step would take over a second warns before it
is applied; a rebuild's compile moves its progress bar stage by stage; and a wide network
restored at start opens on a placeholder while it compiles."""

from __future__ import annotations

import io
import time

import numpy as np
import pytest
from test_ui_offscreen import _centre

from app.config.config import Config, validate
from app.files.start import Start
from app.gpu.compile_progress import STAGES, CompileProgress
from app.kernels.paths import path_of
from app.loop.budget import TrainingWork
from app.loop.frame_driver import FrameWork
from app.loop.step_cost import StepCost, step_flops
from app.ui import redraw, state
from app.ui.offscreen import OffscreenApp
from app.ui.opening import HEATMAP_GRID, build_restored, open_session


@pytest.fixture
def ui(make_session):
    app = OffscreenApp(make_session(), 1280, 800)
    app.app.running = False
    app.frame(4, force=True)
    yield app
    app.close()


def test_an_untouched_paused_window_keeps_its_frame_and_input_draws_it(ui, monkeypatch):
    monkeypatch.setattr(redraw, "REFRESH_S", 60.0)
    monkeypatch.setattr(state, "STATS_INTERVAL_S", 60.0)  # the frame figures shown stay put
    ui.frame(5)  # the figures' table settles its column widths
    drawn = ui.app.redraw.count
    ui.frame(20)
    assert ui.app.redraw.count == drawn, "nothing changed: nothing drawn again"
    ui.target.copy_from_numpy(np.zeros((800, 1280, 4), np.uint8))  # what the target holds is kept
    ui.frame()
    assert ui.target.to_numpy().max() == 0
    ui.move(2, 790)  # input that changes nothing shown (no widget there): nothing drawn
    assert ui.app.redraw.count == drawn
    ui.move(*_centre(ui, "pause"))  # hovering highlights the button: drawn at once
    assert ui.app.redraw.count == drawn + 1 and ui.target.to_numpy().std() > 10
    ui.app.view = 1  # a change of what is shown: drawn
    ui.frame()
    assert ui.app.redraw.count == drawn + 2


def test_an_unchanged_frame_is_drawn_again_after_refresh_s(ui, monkeypatch):
    monkeypatch.setattr(redraw, "REFRESH_S", 0.2)
    ui.frame(2)
    drawn, previous = ui.app.redraw.count, ui.app.redraw.drawn_at
    assert ui.frames_until(lambda: ui.app.redraw.count > drawn, seconds=10), "drawn again"
    # from the last draw, on the redraw's clock (a clock started after it ran 0.199 s on an H100)
    assert ui.app.redraw.count == drawn + 1 and ui.app.redraw.drawn_at - previous >= 0.2, "once, after REFRESH_S"


def test_a_cpu_driver_training_draws_the_ui_at_most_ui_hz(ui, monkeypatch):
    monkeypatch.setattr(type(ui.session.gpu), "software", property(lambda self: True))
    ui.app.running = True
    ui.frame(5)
    drawn, start = ui.app.redraw.count, time.perf_counter()
    for _ in range(40):
        ui.frame()
    seconds = time.perf_counter() - start
    assert ui.session.trainer.step > 0
    assert ui.app.redraw.count - drawn <= redraw.UI_HZ * seconds + 2, "throttled"
    ui.move(500, 400)  # input is drawn at once, whatever the throttle
    assert ui.app.redraw.count > drawn


def test_samples_per_second_counts_completed_steps_of_a_step_spanning_frames(ui, monkeypatch):
    """A wide network on a CPU driver completes one step in many frames: the rate is over the
    completed steps, not over the last second (which held none, and read 0)."""
    driver, clock = ui.app.frames, [100.0]
    monkeypatch.setattr(time, "perf_counter", lambda: clock[0])
    piece = FrameWork(0, 0.0, training=TrainingWork("learn", 1, 64))
    samples = 0
    for frame in range(600):  # 30 frames a second, one step of 4096 samples every 2 s
        clock[0] += 1 / 30
        if frame % 60 == 59:
            samples += 4096
        driver._note_throughput(piece, samples)
    assert driver.samples_per_second() == pytest.approx(4096 / 2.0)
    driver._note_throughput(FrameWork(0, 0.0), samples)
    assert driver.samples_per_second() == 0.0, "a pause ends the series"


def test_step_cost_scales_by_flops_and_by_the_paths_measured_rates(gpu):
    cost = StepCost(software=True)
    small = gpu.plan(validate(Config()))
    wide = gpu.plan(validate(Config(hidden=[256] * 8)))
    cost.observe(small, 4096, 0.004)
    per_flop = 0.004 / step_flops(small, 4096)
    assert cost.seconds(small, 8192) == pytest.approx(2 * 0.004)
    software_rate = {plan.gradient_path: path_of(plan).rates[0] for plan in (small, wide)}  # GFLOP/s
    expected = (
        step_flops(wide, 4096) * per_flop * software_rate[small.gradient_path] / software_rate[wide.gradient_path]
    )
    assert cost.seconds(wide, 4096) == pytest.approx(expected)
    cost.observe(wide, 4096, 3.0)
    assert cost.seconds(wide, 2048) == pytest.approx(1.5), "its own path's measure wins"


def test_network_panel_warns_before_applying_a_network_with_slow_steps(ui):
    ui.app.frames.step_cost.observe(ui.session.trainer.plan, 4096, 0.01)  # as measured: 10 ms a step
    ui.app.draft = ui.app.config.replace(hidden=[32])
    ui.frame(2, force=True)
    assert "slow step warning" not in ui.app.rects
    ui.app.draft = ui.app.config.replace(hidden=[256] * 8)
    ui.frame(2, force=True)
    assert "slow step warning" in ui.app.rects


def test_compile_progress_moves_within_a_stage_and_by_the_stages():
    progress = CompileProgress(io.StringIO())  # an empty stream: no stage announced
    assert progress.fraction() == 0.0 and progress.label == "starting the compile"
    progress.stage, progress.since = 1, time.perf_counter() - 1.0
    first = progress.fraction()
    progress.since -= 10.0
    later = progress.fraction()
    end_of_stage = sum(s for _, s in STAGES[:2]) / sum(s for _, s in STAGES)
    assert 0 < first < later < end_of_stage, "moves with time, never past the stage's end"
    assert progress.label == f"{STAGES[1][0]} (2/{len(STAGES)})"


def test_compile_progress_reads_the_stages_the_child_announces():
    progress = CompileProgress(io.StringIO("some warning\n0\n1\n2\n"))
    for _ in range(100):
        if progress.stage == 2:
            break
        time.sleep(0.01)
    assert progress.stage == 2 and progress.label.startswith(STAGES[2][0])


def test_a_wide_network_at_start_opens_on_a_placeholder_then_swaps_in(gpu):
    config = validate(Config(hidden=[64, 64], seed=3))
    if not gpu.software:
        pytest.skip("a CPU driver's behaviour: a GPU builds the network before the window opens")
    session, placeholder = open_session(gpu, Start(config), HEATMAP_GRID)
    assert placeholder and session.trainer.plan.gradient_path == "thread"
    ui = OffscreenApp(session, 1280, 800)
    try:
        build_restored(ui.app, Start(config))
        assert not ui.app.running and ui.app.restoring == config
        ui.frames_until(lambda: ui.session.rebuild is None, 600, force=True)
        assert ui.session.config.hidden == [64, 64] and ui.session.rebuild_error is None
        assert ui.app.running and ui.app.restoring is None
        assert len(ui.session.history.runs) == 1, "no run of the placeholder's"
        assert ui.session.trainer.step <= 1, "a fresh network, training from the swap on"
    finally:
        ui.close()
