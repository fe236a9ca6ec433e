"""A race: two to eight networks, each a variant of one setup, trained on the same device and compared
as they learn, at equal steps or equal time; each racer is a Session of its own, so it trains to the
weights it would alone. Headless races (app/entry/race_run.py) and the window's Race panel drive one
(docs/guide/races.md)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..config.config import Config
from ..config.variants import Variant
from ..gpu.gpu import Gpu
from .session import Session

MIN_RACERS, MAX_RACERS = 2, 8
MODES = ("steps", "time")


@dataclass(frozen=True)
class Metric:
    """What a race is judged by: eval loss for formulas, the test set's loss for a dataset, PSNR
    (higher is better) for an image."""

    name: str
    higher_is_better: bool = False

    def value(self, session: Session) -> float:
        if self.name == "psnr":
            return session.image.psnr if session.image is not None else float("nan")
        if self.name == "test_loss":
            return (session.metrics or {}).get("test_loss", float("nan"))
        return session.eval_loss

    def better(self, a: float, b: float) -> bool:
        """Whether `a` beats `b` (a NaN never does)."""
        if a != a:
            return False
        return b != b or (a > b if self.higher_is_better else a < b)


def metric_for(config: Config) -> Metric:
    if config.image:
        return Metric("psnr", higher_is_better=True)
    return Metric("test_loss") if config.dataset else Metric("eval_loss")


@dataclass
class Mark:
    """One evaluation of a racer: where it stood, by steps and by its own training time."""

    step: int
    seconds: float
    value: float
    accuracy: float | None = None  # a dataset of classes: the test set's accuracy


@dataclass
class Racer:
    name: str
    variant: Variant
    session: Session
    paused: bool = False
    train_seconds: float = 0.0  # its training's time so far
    samples: int = 0  # samples trained within the race (a racer kept from before has more)
    marks: list[Mark] = field(default_factory=list)

    @property
    def step(self) -> int:
        return self.session.trainer.step

    @property
    def diverged_at(self) -> int | None:
        divergence = self.session.divergence
        return divergence.step if divergence is not None else None

    @property
    def active(self) -> bool:
        return not self.paused and self.session.divergence is None

    @property
    def marked_now(self) -> bool:
        """Whether its last evaluation is at the step it stands at."""
        return bool(self.marks) and self.marks[-1].step == self.step

    @property
    def ms_per_step(self) -> float:
        steps = self.samples / self.session.trainer.batch_size
        return 1000 * self.train_seconds / steps if steps else float("nan")

    @property
    def samples_per_second(self) -> float:
        return self.samples / self.train_seconds if self.train_seconds > 0 else float("nan")

    def train(self, steps: int) -> None:
        """`steps` whole steps now, timed (Session.advance waits for them)."""
        before, start = self.session.trainer.samples_seen, time.perf_counter()
        evals = self.session.history.current.eval.count
        self.session.advance(steps)
        self.train_seconds += time.perf_counter() - start
        self.samples += self.session.trainer.samples_seen - before
        if self.session.history.current.eval.count > evals:  # advance evaluated at eval_every
            self.mark()

    def evaluate(self) -> None:
        self.session.evaluate()
        self.mark()

    def mark(self) -> None:
        """Where the racer stands now, by the race's metric (its config's: the data is every racer's)."""
        metric = metric_for(self.session.config)
        if not self.marked_now:
            accuracy = (self.session.metrics or {}).get("test_accuracy")
            self.marks.append(Mark(self.step, self.train_seconds, metric.value(self.session), accuracy))

    def value_at(self, step: int | None = None, seconds: float | None = None) -> float:
        """The metric at its last evaluation no later than `step` (or `seconds` of training)."""
        best = float("nan")
        for mark in self.marks:
            if (step is not None and mark.step > step) or (seconds is not None and mark.seconds > seconds + 1e-9):
                break
            best = mark.value
        return best


class Race:
    """The racers of one setup (`base`), on one device."""

    def __init__(self, gpu: Gpu, base: Config, mode: str = "steps", heatmaps: bool = False):
        if mode not in MODES:
            raise ValueError(f"race mode must be one of {MODES}")
        self.gpu, self.base, self.mode = gpu, base, mode
        self.metric = metric_for(base)
        self.racers: list[Racer] = []
        self._heatmaps = heatmaps

    def add(self, name: str, variant: Variant, session: Session | None = None) -> Racer:
        """A new racer (its network built now, from the variant's seed), or `session` as one."""
        if len(self.racers) >= MAX_RACERS:
            raise ValueError(f"a race has at most {MAX_RACERS} racers")
        if any(r.name == name for r in self.racers):
            raise ValueError(f"a racer is named {name!r} already")
        config = variant.apply(self.base)
        racer = Racer(name, variant, session or Session(self.gpu, config, heatmaps=self._heatmaps))
        self.racers.append(racer)
        return racer

    def remove(self, name: str) -> Racer:
        racer = self.find(name)
        self.racers.remove(racer)
        return racer

    def find(self, name: str) -> Racer:
        for racer in self.racers:
            if racer.name == name:
                return racer
        raise KeyError(name)

    @property
    def active(self) -> list[Racer]:
        return [r for r in self.racers if r.active]

    def leader(self, by: str = "steps") -> Racer | None:
        """The best racer by the metric at the same step (the fewest steps any racer has that is
        not stopped by a divergence), or at the same training time ("time"); None before any
        racer has been evaluated, and in a race of one (it leads nothing)."""
        live = [r for r in self.racers if r.diverged_at is None and r.marks]
        if len(self.racers) < 2 or not live:
            return None
        if by == "steps":
            step = min(r.marks[-1].step for r in live)
            values = {r.name: r.value_at(step=step) for r in live}
        else:
            seconds = min(r.marks[-1].seconds for r in live)
            values = {r.name: r.value_at(seconds=seconds) for r in live}
        best = None
        for racer in live:
            if best is None or self.metric.better(values[racer.name], values[best.name]):
                best = racer
        return best if values[best.name] == values[best.name] else None
