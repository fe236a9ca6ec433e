"""The Training panel's surface metrics of a signed distance of (x, y, z), live (app/views/surface_tracker.py):
a pass over the lattice INTERVAL_S after the last one's figures came, recorded in small ranges into
the frames' encoders (app.gpu_draws), taken the frame after, its figures computed beside the frames
in a worker thread (the zero levels and the nearest-point searches take tens of milliseconds)."""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor

import slangpy as spy

from ..views.surface_metrics import surface_metrics
from ..views.surface_tracker import SurfaceTracker, tracks_surface

# By gpu.software: a CPU driver's lattice pass is slow (docs/benchmarks.md, 'Mesh export and surface
# metrics'), so it takes a few points a frame and a pass now and then.
INTERVAL_S = {True: 10.0, False: 2.0}  # from one pass's figures to the next pass
POINTS_PER_FRAME = {True: 1024, False: 1 << 18}


class LiveSurface:
    def __init__(self) -> None:
        self.tracker: SurfaceTracker | None = None
        self._recorded = False  # the last range recorded completed a pass: take it
        self._figures: Future | None = None  # (step, figures) being computed
        self._finished = -float("inf")  # when the last pass's figures came
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="surface-metrics")

    def update(self, app) -> dict | None:
        """Once a frame, from the Training panel: the last figures (None before the first, or for a
        network that is no distance of (x, y, z)); takes what finished, and queues the next range."""
        session = app.session
        if not tracks_surface(session.trainer.plan, session.config):
            self.tracker = None
            return None
        if self.tracker is None or self.tracker.trainer is not session.trainer:
            self.tracker, self._recorded, self._figures = SurfaceTracker(session.trainer), False, None
        tracker = self.tracker
        if self._figures is not None and self._figures.done():
            step, figures = self._figures.result()
            tracker.add(step, None, figures)
            self._figures, self._finished = None, time.perf_counter()
        if self._recorded:  # the frame that recorded it has run
            self._recorded = False
            volume = tracker.take()
            truth = tracker.truth_surface(volume)
            self._figures = self._worker.submit(lambda: (volume.step, surface_metrics(volume, truth)))
        elif self._figures is None and self._wanted(tracker, session.gpu.software):
            points = POINTS_PER_FRAME[session.gpu.software]
            app.gpu_draws.append(lambda encoder: self._record(tracker, encoder, points))
        return tracker.latest

    def _wanted(self, tracker: SurfaceTracker, software: bool) -> bool:
        """A pass under way goes on; a new one starts INTERVAL_S after the last one's figures, if
        the weights changed since it began."""
        if tracker.evaluator.progress > 0:
            return True
        return tracker.stale() and time.perf_counter() - self._finished >= INTERVAL_S[software]

    def _record(self, tracker: SurfaceTracker, encoder: spy.CommandEncoder, points: int) -> None:
        if tracker is self.tracker:  # not a network replaced since the frame queued it
            self._recorded = tracker.record(encoder, points)


def live_surface(app) -> LiveSurface:
    """The app's LiveSurface, made on first use."""
    live = getattr(app, "surface_live", None)
    if live is None:
        live = app.surface_live = LiveSurface()
    return live
