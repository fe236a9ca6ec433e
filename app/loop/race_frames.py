"""The window's side of a race (race.py): each frame, the racers' training, sized to the frame's
training time, and every EVAL_INTERVAL_S an evaluation of each racer with its heatmaps drawn. Each
racer's steps are submitted and waited for on their own, so its time is its own, the cost the race
compares; the main network does not train while a race runs."""

from __future__ import annotations

import time

from .race import Race

EVAL_INTERVAL_S = 0.5  # each racer evaluated (a point on its curve, its heatmaps) at most this often
STEPS_BEFORE_MEASURED = 1  # a racer's first frame: one step, to learn its cost


class RaceFrames:
    def __init__(self, race: Race, frame_seconds: float):
        self.race = race
        self.frame_seconds = frame_seconds  # the training's share of a frame
        self._evaluated = -1.0  # when the racers were last evaluated

    def steps_now(self) -> dict[str, int]:
        """Each active racer's steps for this frame."""
        active = self.race.active
        costs = [r.ms_per_step / 1000 for r in active]
        if not active or any(cost != cost for cost in costs):  # a racer not measured yet
            return {r.name: STEPS_BEFORE_MEASURED for r in active}
        if self.race.mode == "steps":
            return {r.name: max(1, int(self.frame_seconds / sum(costs))) for r in active}
        share = self.frame_seconds / len(active)
        return {r.name: max(1, int(share / cost)) for r, cost in zip(active, costs)}

    def frame(self, running: bool) -> None:
        """One frame's race work: training if `running`, then the evaluations if due."""
        if running:
            steps = self.steps_now()
            for racer in self.race.active:
                racer.train(steps[racer.name])
        now = time.perf_counter()
        if now - self._evaluated >= EVAL_INTERVAL_S and self.evaluate_due():
            self._evaluated = now

    def evaluate_due(self) -> bool:
        """Every racer that trained since its last evaluation is evaluated and its heatmaps drawn
        (all in the same frame, so that at equal steps they stand at the same step)."""
        evaluated = False
        for racer in self.race.racers:
            if racer.marked_now:
                continue
            racer.evaluate()
            images = racer.session.heatmaps
            if images is not None:
                with racer.session.gpu.submit() as encoder:
                    images.record_draw(encoder)
            evaluated = True
        return evaluated
