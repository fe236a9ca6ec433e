"""A short soak (app/bench/soak.py, scaled to CI): 6,000 offscreen frames of the full UI on
lavapipe, training, with an architecture change every 1,200 frames, must not grow host memory.

The frame is the smallest that runs every part of the per-frame path: a 320x200 window, an 8x8
grid with heatmaps, a 4 ms frame budget, and FRAME_SUBMIT_STEPS lowered to 2 so that a frame's
steps go in several command buffers, as they do on a fast GPU (~4.5 ms a frame here, ~30 s).

The bound comes from the figures measured on the development machine (lavapipe, 2 cores), with
the fixes of "Hours, not minutes": +0.18 MB over these frames, +0.95 MB over 10^4 and +2.0 MB over
2 x 10^4 (about 100 bytes a frame, the loss records filling to their size included; the resident
set grows in pages, so single figures jump); with submits unbounded and rebuilt networks'
textures kept, +8.1 MB over 2 x 10^4 frames (peak 70 command buffers in flight), so about 2.4 MB
over these. BOUND, 1.5 MB, is 2.5x the fixed code's growth at the rate of 10^4 frames. (It ran
2 x 10^4 frames, 86 s, a tenth of CI's time: the textures' and the submits' own asserts below do
not depend on the count, and the growth scales.)"""

from __future__ import annotations

import imgui_bundle  # noqa: F401 (a dependency: a broken install fails here, never skips)
from slangpy.ui import imgui_bundle as spy_imgui

from app.bench.soak import Changes, WarmUp
from app.bench.soak_measure import rss_bytes
from app.config.config import Config, validate
from app.gpu import gpu as gpu_module
from app.loop import frame_driver
from app.loop.history import BUCKETS, COLUMNS, EARLIER_RUNS_KEPT, RECENT
from app.loop.session import Session
from app.ui.offscreen import OffscreenApp

FRAMES = 6_000
CHANGE_EVERY = 1_200
ARCHITECTURES = ([8], [12], [8, 8])
BOUND = 3 << 19  # 1.5 MB
RECORD_BYTES = 16 * RECENT + 8 * COLUMNS * BUCKETS  # a loss record at its largest


def test_short_soak_keeps_memory_flat(gpu, monkeypatch):
    monkeypatch.setattr(frame_driver, "FRAME_SUBMIT_STEPS", 2)
    config = validate(Config(batch_size=32, hidden=list(ARCHITECTURES[0])))
    ui = OffscreenApp(Session(gpu, config, grid=8, heatmaps=True), 320, 200)
    try:
        ui.app.frames.budget.frame_seconds = 1 / 250
        warm_up = WarmUp(ARCHITECTURES)
        while not warm_up.frame(ui.app):
            ui.frame()
        changes, textures = Changes(CHANGE_EVERY, ARCHITECTURES), len(spy_imgui._TEXTURES_BY_ID)
        start = rss_bytes()
        for frame in range(1, FRAMES + 1):
            ui.frame()
            changes.after_frame(ui.app, frame)
        growth = rss_bytes() - start
        assert len(spy_imgui._TEXTURES_BY_ID) <= textures, "rebuilt networks' textures are let go"
        assert ui.session.trainer.step > 0, "the last network trained"
        assert ui.session.history.nbytes <= (EARLIER_RUNS_KEPT + 1) * 2 * RECORD_BYTES
    finally:
        ui.close()
    assert changes.count == FRAMES // CHANGE_EVERY
    assert gpu.peak_in_flight <= gpu_module.MAX_IN_FLIGHT, "submits stay bounded"
    assert growth <= BOUND, f"host memory grew {growth / 2**20:.1f} MB over {FRAMES} frames"
