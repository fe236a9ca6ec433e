"""Loss curves: a run is the train and eval series from one reset or rebuild to the next; the history
keeps the current run and a few earlier ones. A series is a LossRecord of bounded size, the same bit
for bit however its points were appended, so a resumed run holds what a run never stopped holds
(docs/architecture.md, 'Files and the loss history')."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

EARLIER_RUNS_KEPT = 2
RECENT = 16_384  # points kept exactly (the recent past)
BUCKETS = 4_096  # buckets of older points; even, so that they merge in pairs
MAX_SPAN = 1 << 40  # far beyond any run (steps are 32-bit): a bound for checking saved records
FIRST, LAST, COUNT, MIN, SUM, MAX = range(6)  # the columns of a bucket row
COLUMNS = 6


class LossRecord:
    """A bounded record of a (step, loss) series whose steps increase: the last RECENT points
    exactly, every earlier one in one of at most BUCKETS buckets of `span` points (first and last
    step, min, sum and max); when the buckets fill, neighbours merge pairwise and `span` doubles.
    It depends only on the points appended, never on how appends were chunked: a bucket's sum is
    added left to right (np.cumsum), and pairs merge at a fixed count of closed buckets."""

    def __init__(self) -> None:
        self.count = 0  # points ever appended
        self.span = 1  # points per closed bucket
        self._x = np.zeros(64, np.float64)  # the recent points, oldest first
        self._y = np.zeros(64, np.float64)
        self._held = 0
        self._rows = np.zeros((16, COLUMNS), np.float64)
        self._closed = 0  # full buckets, rows [0, closed); row `closed` is the open one
        self._open = 0  # points in the open bucket

    def drop_after(self, x: float) -> None:
        """Forgets the points past step `x` (a network put back to an earlier step). Recent
        points go one by one; buckets go whole: those that start after `x` (one that straddles
        `x` stays, standing for its steps up to its last)."""
        keep = int(np.searchsorted(self._x[: self._held], x, side="right"))
        self.count -= self._held - keep
        self._held = keep
        if keep:
            return
        if self._open and self._rows[self._closed, FIRST] > x:
            self.count -= self._open
            self._open = 0
        while self._closed and not self._open and self._rows[self._closed - 1, FIRST] > x:
            self.count -= self.span
            self._closed -= 1

    # ---- what is held -----------------------------------------------------------------------
    @property
    def x(self) -> np.ndarray:
        """Steps of the points held exactly: every point of a run shorter than RECENT + BUCKETS,
        else the last RECENT."""
        if self.span == 1 and self._closed + self._open:
            return np.concatenate([self.buckets[:, FIRST], self._x[: self._held]])
        return self._x[: self._held]

    @property
    def y(self) -> np.ndarray:
        if self.span == 1 and self._closed + self._open:
            return np.concatenate([self.buckets[:, SUM], self._y[: self._held]])
        return self._y[: self._held]

    @property
    def recent_x(self) -> np.ndarray:
        return self._x[: self._held]

    @property
    def recent_y(self) -> np.ndarray:
        return self._y[: self._held]

    @property
    def buckets(self) -> np.ndarray:
        """Rows of (first step, last step, count, min, sum, max), the open bucket last."""
        return self._rows[: self._closed + (1 if self._open else 0)]

    @property
    def exact(self) -> bool:
        """Whether every point appended is held as it was (no bucket holds more than one)."""
        return self.span == 1

    @property
    def last(self) -> float:
        return float(self._y[self._held - 1]) if self._held else float("nan")

    @property
    def last_x(self) -> float:
        return float(self._x[self._held - 1]) if self._held else float("nan")

    @property
    def nbytes(self) -> int:
        """Host memory the record holds."""
        return self._x.nbytes + self._y.nbytes + self._rows.nbytes

    def parts(self) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """The buckets, then the recent points, each as (first step, last step, count, min,
        mean, max) columns (a recent point is a row of its own)."""
        b, n = self.buckets, self._held
        x, y = self._x[:n], self._y[:n]
        older = (b[:, FIRST], b[:, LAST], b[:, COUNT], b[:, MIN], b[:, SUM] / np.maximum(b[:, COUNT], 1), b[:, MAX])
        return older, (x, x, np.ones(n), y, y, y)

    def rows(self) -> tuple[np.ndarray, ...]:
        """The whole record, oldest first, as the columns of `parts`."""
        older, recent = self.parts()
        return tuple(np.concatenate([a, b]) for a, b in zip(older, recent))

    # ---- appending ----------------------------------------------------------------------------
    def extend(self, xs, ys) -> None:
        xs = np.atleast_1d(np.asarray(xs, np.float64))
        ys = np.atleast_1d(np.asarray(ys, np.float64))
        if len(xs) != len(ys):
            raise ValueError(f"{len(xs)} steps for {len(ys)} losses")
        n = len(xs)
        if n == 0:
            return
        self.count += n
        drop = max(0, self._held + n - RECENT)  # the oldest points leave the exact window
        from_held = min(drop, self._held)
        if from_held:
            self._bucket(self._x[:from_held], self._y[:from_held])
        if drop > from_held:
            self._bucket(xs[: drop - from_held], ys[: drop - from_held])
        kept = self._held - from_held
        xs, ys = xs[drop - from_held :], ys[drop - from_held :]
        self._reserve_recent(kept + len(xs))
        if from_held and kept:
            self._x[:kept] = self._x[from_held : self._held]
            self._y[:kept] = self._y[from_held : self._held]
        self._x[kept : kept + len(xs)] = xs
        self._y[kept : kept + len(ys)] = ys
        self._held = kept + len(xs)

    def _reserve_recent(self, need: int) -> None:
        if need > len(self._x):
            size = min(RECENT, max(need, 2 * len(self._x)))
            self._x, self._y = np.resize(self._x, size), np.resize(self._y, size)

    def _row(self, index: int) -> np.ndarray:
        if index >= len(self._rows):
            size = min(BUCKETS, max(index + 1, 2 * len(self._rows)))
            self._rows = np.resize(self._rows, (size, COLUMNS))
        return self._rows[index]

    def _bucket(self, xs: np.ndarray, ys: np.ndarray) -> None:
        """Puts points leaving the exact window, oldest first, into the buckets."""
        i, n = 0, len(xs)
        while i < n:
            span = self.span
            if self._open == 0 and n - i >= span:  # whole buckets at once
                k = min((n - i) // span, BUCKETS - self._closed)
                self._row(self._closed + k - 1)
                bx = xs[i : i + k * span].reshape(k, span)
                by = ys[i : i + k * span].reshape(k, span)
                rows = self._rows[self._closed : self._closed + k]
                rows[:, FIRST], rows[:, LAST], rows[:, COUNT] = bx[:, 0], bx[:, -1], span
                rows[:, MIN], rows[:, MAX] = by.min(axis=1), by.max(axis=1)
                rows[:, SUM] = np.cumsum(by, axis=1)[:, -1]
                self._closed += k
                i += k * span
            else:  # into the open bucket
                take = min(span - self._open, n - i)
                chunk = ys[i : i + take]
                row = self._row(self._closed)
                if self._open == 0:
                    row[:] = (xs[i], 0.0, 0.0, chunk[0], 0.0, chunk[0])
                row[LAST], row[COUNT] = xs[i + take - 1], self._open + take
                row[MIN], row[MAX] = np.minimum(row[MIN], chunk.min()), np.maximum(row[MAX], chunk.max())
                row[SUM] = np.cumsum(np.concatenate([[row[SUM]], chunk]))[-1]
                self._open += take
                i += take
                if self._open == span:
                    self._closed, self._open = self._closed + 1, 0
            if self._closed == BUCKETS:
                self._merge_pairs()

    def _merge_pairs(self) -> None:
        """BUCKETS closed buckets become BUCKETS / 2 of twice the span (the open one is empty)."""
        rows = self._rows[:BUCKETS]
        a, b = rows[0::2], rows[1::2]
        merged = np.empty((BUCKETS // 2, COLUMNS))
        merged[:, FIRST], merged[:, LAST] = a[:, FIRST], b[:, LAST]
        merged[:, COUNT], merged[:, SUM] = a[:, COUNT] + b[:, COUNT], a[:, SUM] + b[:, SUM]
        merged[:, MIN], merged[:, MAX] = np.minimum(a[:, MIN], b[:, MIN]), np.maximum(a[:, MAX], b[:, MAX])
        self._rows[: BUCKETS // 2] = merged
        self._closed, self.span = BUCKETS // 2, 2 * self.span

    # ---- saving and loading (app/files/checkpoint_format.py) ----------------------------------------
    def state(self) -> tuple[dict, list[np.ndarray]]:
        """What a checkpoint stores: counts, then the recent steps, recent losses and bucket rows."""
        meta = {"count": self.count, "span": self.span, "recent": self._held, "buckets": len(self.buckets)}
        return meta, [self.recent_x.copy(), self.recent_y.copy(), self.buckets.reshape(-1).copy()]

    @staticmethod
    def array_lengths(meta: dict) -> list[int]:
        """The lengths of the arrays `state` wrote for `meta` (checked by the caller first)."""
        return [meta["recent"], meta["recent"], COLUMNS * meta["buckets"]]

    @classmethod
    def from_state(cls, meta: dict, arrays: list[np.ndarray]) -> LossRecord:
        """The record `state` saved; a ValueError names what is inconsistent."""
        count, span, held, used = (meta[k] for k in ("count", "span", "recent", "buckets"))
        rows = np.asarray(arrays[2], np.float64).reshape(used, COLUMNS)
        sizes = rows[:, COUNT]
        open_count = int(sizes[-1]) if used and sizes[-1] < span else 0
        closed = used - (1 if open_count else 0)
        if not 1 <= span <= MAX_SPAN or span & (span - 1):
            raise ValueError(f"a bucket span of {span}")
        if held != min(count, RECENT) or used > BUCKETS or closed >= BUCKETS:
            raise ValueError(f"{held} recent points and {used} buckets for {count} points")
        if np.any(sizes[:closed] != span) or not 0 <= open_count < span or sizes.sum() + held != count:
            raise ValueError("buckets that do not add up to its point count")
        if span > 1 and closed < BUCKETS // 2:
            raise ValueError(f"{closed} full buckets of {span} points")
        record = cls()
        record.count, record.span, record._held = count, span, held
        record._x, record._y = np.array(arrays[0], np.float64), np.array(arrays[1], np.float64)
        record._reserve_recent(held)
        record._rows = np.zeros((max(16, used), COLUMNS))
        record._rows[:used] = rows
        record._closed, record._open = closed, open_count
        return record

    @classmethod
    def from_points(cls, xs, ys) -> LossRecord:
        """A record of a whole series (a version 1 checkpoint saved every point)."""
        record = cls()
        record.extend(xs, ys)
        return record


@dataclass
class Run:
    label: str
    # The loss its curves measure (app/model/losses.py: squared, logistic, softmax); None for an
    # earlier run of a checkpoint saved before runs recorded it
    loss: str | None = None
    # What the network was asked (app/loop/carry.py problem_name): runs of another problem are no
    # curve to compare with; None for a run of a checkpoint saved before runs recorded it
    problem: str | None = None
    train: LossRecord = field(default_factory=LossRecord)  # x: 1-based step, y: mean loss of its batch
    eval: LossRecord = field(default_factory=LossRecord)  # x: steps taken by the network evaluated
    # Points: each evaluation's other figures by name (app/views/point_metrics.py's METRICS but the
    # test loss, which is `eval`), at the same steps
    metrics: dict[str, LossRecord] = field(default_factory=dict)


class RunHistory:
    def __init__(self) -> None:
        self.runs: list[Run] = []

    def start(self, label: str, loss: str | None = None, problem: str | None = None) -> Run:
        self.runs = (self.runs + [Run(label, loss, problem)])[-(EARLIER_RUNS_KEPT + 1) :]
        return self.runs[-1]

    @property
    def current(self) -> Run:
        return self.runs[-1]

    @property
    def earlier(self) -> list[Run]:
        return self.runs[:-1]

    @property
    def nbytes(self) -> int:
        return sum(
            run.train.nbytes + run.eval.nbytes + sum(m.nbytes for m in run.metrics.values()) for run in self.runs
        )
