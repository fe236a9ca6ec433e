"""Loss curves: a run is the train and eval series from one reset or rebuild to the next; the
history keeps the current run and a few earlier ones (the window shows them faded)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

EARLIER_RUNS_KEPT = 2


class Series:
    """A growing (step, value) series in numpy arrays with amortised appends."""

    def __init__(self) -> None:
        self._x = np.zeros(1024, np.float64)
        self._y = np.zeros(1024, np.float64)
        self.count = 0

    def extend(self, xs, ys) -> None:
        xs, ys = np.atleast_1d(xs), np.atleast_1d(ys)
        need = self.count + len(xs)
        if need > len(self._x):
            size = max(need, 2 * len(self._x))
            self._x, self._y = np.resize(self._x, size), np.resize(self._y, size)
        self._x[self.count : need] = xs
        self._y[self.count : need] = ys
        self.count = need

    def drop_after(self, x: float) -> None:
        """Forgets the points past `x` (a network put back to an earlier step)."""
        self.count = int(np.searchsorted(self._x[: self.count], x, side="right"))

    @property
    def x(self) -> np.ndarray:
        return self._x[: self.count]

    @property
    def y(self) -> np.ndarray:
        return self._y[: self.count]

    @property
    def last(self) -> float:
        return float(self._y[self.count - 1]) if self.count else float("nan")


@dataclass
class Run:
    label: str
    train: Series = field(default_factory=Series)  # x: 1-based step, y: mean loss of its batch
    eval: Series = field(default_factory=Series)  # x: steps taken by the network evaluated


class RunHistory:
    def __init__(self) -> None:
        self.runs: list[Run] = []

    def start(self, label: str) -> Run:
        self.runs = (self.runs + [Run(label)])[-(EARLIER_RUNS_KEPT + 1) :]
        return self.runs[-1]

    @property
    def current(self) -> Run:
        return self.runs[-1]

    @property
    def earlier(self) -> list[Run]:
        return self.runs[:-1]
