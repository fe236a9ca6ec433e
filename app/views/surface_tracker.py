"""The surface metrics of a signed distance of (x, y, z) over a run (surface_metrics.py), measured on
a lattice at evaluations, whole (`measure`, headless) or in ranges over frames (`record`, `take`, then
`add`: the window), kept against the steps and the seconds trained. They cost a lattice evaluation with
gradients and two zero-level searches, so a run measures only while they take under SHARE of its time."""

from __future__ import annotations

import time

import slangpy as spy

from ..config.config import Config
from ..kernels.plan import NetworkPlan, learned_distance
from ..train.trainer import Trainer
from .surface_metrics import BAND_SHARE, Surface, diagonal, surface_metrics, truth_surface
from .volume import SLOPES, TRUTH, Volume, VolumeEvaluator

SIDE = 64  # the lattice's points an axis
SOFTWARE_SIDE = 32  # ...on a CPU driver, where 64^3 points with gradients take seconds
SHARE = 0.2  # the measurements' time, at most, against the run's training time
FIGURES = ("iou", "chamfer", "normal_consistency", "eikonal_band", "eikonal_box")


class SurfaceTracker:
    def __init__(self, trainer: Trainer, side: int | None = None):
        side = side or (SOFTWARE_SIDE if trainer.gpu.software else SIDE)
        self.trainer = trainer
        self.evaluator = VolumeEvaluator(trainer, side, SLOPES | TRUTH)
        self.history: list[dict] = []  # {step, seconds, *FIGURES}, oldest first
        self.spent = 0.0  # seconds the measurements took
        self.evaluator.warm()

    @property
    def latest(self) -> dict | None:
        return self.history[-1] if self.history else None

    def due(self, seconds_trained: float) -> bool:
        """Whether a measurement now keeps the measurements' time under SHARE of the training's."""
        return self.spent <= SHARE * seconds_trained

    def add(self, step: int, seconds: float | None, figures: dict) -> dict:
        """The history's row of `figures` (surface_metrics') at `step`; one at the same step replaces it."""
        row = {"step": step, "seconds": seconds, **figures}
        if self.history and self.history[-1]["step"] == step:
            self.history[-1] = row
        else:
            self.history.append(row)
        return row

    def measure(self, seconds_trained: float) -> dict:
        """The figures of the current network, now, as a row at `seconds_trained`."""
        start = time.perf_counter()
        volume = self.evaluator.evaluate()
        row = self.add(volume.step, seconds_trained, surface_metrics(volume, self.truth_surface(volume)))
        self.spent += time.perf_counter() - start
        return row

    def truth_surface(self, volume: Volume) -> Surface:
        """What the learned zero level is compared with (surface_metrics.truth_surface)."""
        return truth_surface(volume, self.trainer.plan.mesh)

    def stale(self) -> bool:
        """A pass over frames is under way, or the weights changed since the last one began."""
        return self.evaluator.progress > 0 or self.evaluator.version != self.trainer.version

    def record(self, encoder: spy.CommandEncoder, points: int) -> bool:
        """The next `points` of a pass over frames; True when it completes: `take` it once `encoder`
        has run. A pass starts only at a whole step (as the grid's evaluation)."""
        if self.evaluator.progress == 0 and self.trainer.progress.updating:
            return False
        return self.evaluator.record(encoder, points)

    def take(self) -> Volume:
        """The lattice of the pass `record` completed, once its encoder has run (the figures are
        surface_metrics(volume, self.truth_surface(volume)), to `add`)."""
        return self.evaluator.take()

    def to_dict(self) -> dict:
        """summary.json's `surface`: the lattice, the eikonal band, the last figures and the history."""
        latest = self.latest or {}
        return {
            "grid": self.evaluator.side,
            "band": BAND_SHARE * diagonal(self.evaluator.box()),
            "seconds_measuring": self.spent,
            **{name: latest.get(name) for name in ("step", *FIGURES)},
            "history": list(self.history),
        }


def tracks_surface(plan: NetworkPlan, config: Config) -> bool:
    """Whether the network is a signed distance of (x, y, z) (app/kernels/plan.py: learned_distance), whose
    zero level the surface metrics compare with the truth's (app/views/surface_tracker.py)."""
    return plan.point_dim == 3 and learned_distance(plan, config)
