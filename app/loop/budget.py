"""How much GPU work fits in one frame, learned from what earlier frames measured: a fast GPU's frame
fills with whole steps, and on a slow device a step or a grid evaluation is split over frames.
Costs are rates per unit of work that does not change with the batch size, and work grows at most
GROWTH-fold a frame, so a mismeasured cost never stalls the window for long."""

from __future__ import annotations

from dataclasses import dataclass

FRAME_SECONDS = 1 / 60
HEADROOM = 0.9  # of a frame: room for jitter so that a frame does not miss its vsync
MIN_COMPUTE_SECONDS = 0.002
# Where the UI alone takes a frame or more (a CPU driver), training and evaluation still get
# this share of the UI's time: ~1.25x the UI-only frame time, instead of no progress at all.
SLOW_DEVICE_SHARE = 0.25
EVAL_SHARE = 0.25  # of the compute budget, for an evaluation pass that does not fit whole
GROWTH = 2.0
# Before anything is measured, costs are guessed from the network's size at these speeds, well
# below what each kind of device does, so that the first frames err on the small side.
PRIOR_FLOPS = {"software": 1e9, "gpu": 1e11}
PRIOR_BYTES_PER_S = {"software": 1e9, "gpu": 1e11}


class Rate:
    """Seconds per unit of work, smoothed; it follows falls faster than rises, so that one slow
    frame (a driver compile) is soon forgotten. A prior guess gives way to the first measure."""

    def __init__(self, prior: float | None = None) -> None:
        self.value: float | None = prior
        self.measured = False

    def observe(self, seconds: float, amount: float) -> None:
        if amount <= 0 or seconds <= 0:
            return
        sample = seconds / amount
        if not self.measured:
            self.value, self.measured = sample, True
        else:
            self.value += (0.5 if sample < self.value else 0.25) * (sample - self.value)


@dataclass(frozen=True)
class StepShape:
    """One training step in the units the budget plans in (from the trainer's launch shape)."""

    batch: int  # samples of a whole step
    learn_units: int  # learnGradient groups
    learn_unit_cost: int  # samples a group walks
    adjust_units: int  # adjustParameters groups
    adjust_unit_cost: int  # gradient slots each of them sums
    # learnGradient groups that run side by side (workgroup tiles on a GPU, whose count is chosen
    # to fill it): a piece of many costs about what one does, so pieces are sized by trying, not
    # by a per-group rate (docs/benchmarks.md, 'Frame time').
    learn_side_by_side: bool = False


@dataclass
class TrainingWork:
    kind: str  # "steps", "learn" or "adjust" (a piece of a step), or "" for none
    units: int  # steps, or groups of the phase
    amount: float  # units in the rate's measure (samples, or parameter-slots)


class FrameBudget:
    def __init__(self, frame_seconds: float = FRAME_SECONDS):
        self.frame_seconds = frame_seconds
        self.rates = {"steps": Rate(), "learn": Rate(), "adjust": Rate(), "cells": Rate(), "pixels": Rate()}
        self._other = Rate()  # seconds of a frame's work besides training and evaluation
        self._last = {"steps": 0, "learn": 0, "adjust": 0, "cells": 0, "pixels": 0}  # last nonzero units planned
        self._learn_piece, self._learn_ceiling, self._learn_floor = (0, 0.0), 1 << 30, float("inf")

    def forget_network(self, param_count: int, software: bool) -> None:
        """A new architecture: its costs are guessed again from its size (the UI's are known)."""
        kind = "software" if software else "gpu"
        per_sample = 6 * param_count / PRIOR_FLOPS[kind]  # forward, backward and dW multiply-adds
        self.rates = {
            "steps": Rate(per_sample),
            "learn": Rate(per_sample),
            "adjust": Rate(4 / PRIOR_BYTES_PER_S[kind]),
            "cells": Rate(per_sample / 3),
            "pixels": Rate(per_sample),  # an image target's evaluation: one forward pass a pixel
        }
        self._last = dict.fromkeys(self._last, 0)
        # side-by-side pieces: the last (size, seconds), the size found too big, the quickest piece
        self._learn_piece, self._learn_ceiling, self._learn_floor = (0, 0.0), 1 << 30, float("inf")

    def compute_seconds(self) -> float:
        if self.other_seconds is None:  # the first frame: the UI's cost is not known yet
            return self.frame_seconds * HEADROOM / 2
        return max(
            self.frame_seconds * HEADROOM - self.other_seconds,
            SLOW_DEVICE_SHARE * self.other_seconds,
            MIN_COMPUTE_SECONDS,
        )

    def _limit(self, kind: str, units: float, most: int) -> int:
        """`units` within [1, most], and at most GROWTH times the last amount of this kind (the
        first amount follows the prior guess, which errs on the small side)."""
        grown = max(1, int(self._last[kind] * GROWTH)) if self._last[kind] else most
        chosen = max(1, min(int(units), grown, most))
        self._last[kind] = chosen
        return chosen

    def plan_eval(self, remaining: int, total: int, kind: str = "cells") -> tuple[int, float]:
        """(cells to evaluate this frame, seconds that will take) for a pass with `remaining` of
        `total` cells left: the rest of the pass when a whole pass fits in EVAL_SHARE. `kind`
        "pixels" plans an image target's evaluation (app/views/image_eval.py), at its own rate."""
        rate = self.rates[kind].value
        share = EVAL_SHARE * self.compute_seconds()
        if total * rate <= share:
            return self._limit(kind, remaining, remaining), remaining * rate
        cells = self._limit(kind, share / rate, remaining)
        return cells, cells * rate

    def step_seconds(self, shape: StepShape) -> float:
        steps, learn, adjust = (self.rates[k] for k in ("steps", "learn", "adjust"))
        if steps.measured or not (learn.measured and adjust.measured):
            return shape.batch * steps.value
        return (
            shape.learn_units * shape.learn_unit_cost * learn.value
            + shape.adjust_units * shape.adjust_unit_cost * adjust.value
        )

    def step_measured(self) -> bool:
        """Whether step_seconds comes from measures rather than the prior guess."""
        return self.rates["steps"].measured or (self.rates["learn"].measured and self.rates["adjust"].measured)

    def plan_training(self, seconds: float, shape: StepShape, phase: str, started: bool) -> TrainingWork:
        """Whole steps if one fits in `seconds`, else the next piece of the current step."""
        step_seconds = self.step_seconds(shape)
        if not started and step_seconds <= seconds:
            count = self._limit("steps", seconds / step_seconds, 1 << 20)
            return TrainingWork("steps", count, count * shape.batch)
        if phase == "learn" and shape.learn_side_by_side:
            units = self._side_by_side_units(seconds, shape.learn_units)
            return TrainingWork(phase, units, units * shape.learn_unit_cost)
        if phase == "learn":
            # learnGradient is nearly all of a step: the step rate stands in until pieces measure it
            learn = self.rates["learn"]
            rate = learn.value if learn.measured or not self.rates["steps"].measured else self.rates["steps"].value
            total, unit_cost = shape.learn_units, shape.learn_unit_cost
        else:
            rate, total, unit_cost = self.rates["adjust"].value, shape.adjust_units, shape.adjust_unit_cost
        units = self._limit(phase, seconds / (rate * unit_cost), total)
        return TrainingWork(phase, units, units * unit_cost)

    def _side_by_side_units(self, seconds: float, total: int) -> int:
        """The next piece of side-by-side groups: twice the last while the last took no longer
        than allowed, or than the quickest piece so far (one group's own time: where even that
        exceeds a frame, more groups beside it cost nothing more); half of it, and never that
        size again, once it took half as long again."""
        size, took = self._learn_piece
        if not size:
            return 1
        allowed = max(seconds, 1.25 * self._learn_floor)
        if took > 1.5 * allowed:
            self._learn_ceiling = size
            return max(1, size // 2)
        if took <= allowed and size * 2 < self._learn_ceiling:
            return min(total, size * 2)
        return min(total, size)

    def observe(
        self,
        training: TrainingWork,
        training_seconds: float,
        cells: int,
        eval_seconds: float,
        other_seconds: float,
        eval_kind: str = "cells",
    ) -> None:
        if training.kind == "learn":
            self._learn_piece = (training.units, training_seconds)
            self._learn_floor = min(self._learn_floor, training_seconds)
        if training.kind:
            self.rates[training.kind].observe(training_seconds, training.amount)
        if cells:
            self.rates[eval_kind].observe(eval_seconds, cells)
        self._other.observe(max(other_seconds, 1e-6), 1)

    @property
    def other_seconds(self) -> float | None:
        return self._other.value
