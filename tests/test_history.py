"""The bounded loss record (app/loop/history.py) against a numpy reference: the recent points exactly,
every older point in buckets whose min, mean and max are those of their points; the same record
whatever the chunks it was appended in; flat memory and checkpoint size over 10^8 steps; the
checkpoint round trip byte-identical, version 1 files converted; loss.csv and the plot's curve."""

from __future__ import annotations

import csv
import json
from types import SimpleNamespace

import numpy as np
import pytest
from old_checkpoints import full_series_bytes

from app.config.config import Config
from app.files import checkpoint as ckpt
from app.files.run_summary import loss_csv as _loss_csv
from app.kernels.planning import plan_for
from app.loop.history import BUCKETS, COLUMNS, RECENT, LossRecord, Run, RunHistory
from app.ui.panels.loss_plot import MAX_POINTS, curve

LENGTHS = [
    0,
    1,
    7,
    RECENT - 1,
    RECENT,
    RECENT + 1,
    RECENT + BUCKETS - 1,
    RECENT + BUCKETS,
    3 * RECENT + 5 * BUCKETS + 3,
]


def _series(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    steps = np.cumsum(rng.integers(1, 4, n)).astype(np.float64)  # increasing, not contiguous
    losses = np.exp(rng.normal(-3, 2, n)).astype(np.float32)  # as the GPU returns them
    return steps, losses


def _append_in_chunks(record: LossRecord, xs, ys, seed: int) -> None:
    rng, i = np.random.default_rng(seed), 0
    while i < len(xs):
        k = int(rng.choice([1, 2, 3, 64, 1000, 8192, 40_000]))
        record.extend(xs[i : i + k], ys[i : i + k])
        i += k


def _reference(xs: np.ndarray, ys: np.ndarray) -> dict:
    """What the record must hold, derived from the rule alone: the last RECENT points exactly;
    the E points before them in buckets of the smallest power-of-two span s with E // s below
    BUCKETS, bucket j holding points [j s, (j + 1) s), the last one possibly partial."""
    ys = ys.astype(np.float64)
    held = min(len(xs), RECENT)
    older = len(xs) - held
    span = 1
    while older // span >= BUCKETS:
        span *= 2
    bounds = list(range(0, older, span)) + [older]
    return {
        "recent": (xs[older:], ys[older:]),
        "span": span,
        "buckets": [
            (xs[a], xs[b - 1], b - a, ys[a:b].min(), ys[a:b].mean(), ys[a:b].max()) for a, b in zip(bounds, bounds[1:])
        ],
    }


@pytest.mark.parametrize("n", LENGTHS)
def test_record_against_numpy(n):
    xs, ys = _series(n, seed=n)
    record = LossRecord()
    _append_in_chunks(record, xs, ys, seed=n + 1)
    expected = _reference(xs, ys)
    assert record.count == n and record.span == expected["span"]
    assert np.array_equal(record.recent_x, expected["recent"][0])
    assert np.array_equal(record.recent_y, expected["recent"][1]), "every recent step exactly"
    buckets = record.buckets
    assert len(buckets) == len(expected["buckets"])
    if len(buckets):
        first, last, count, low, mean, high = (np.array(column) for column in zip(*expected["buckets"]))
        assert np.array_equal(buckets[:, 0], first) and np.array_equal(buckets[:, 1], last)
        assert np.array_equal(buckets[:, 2], count)
        assert np.array_equal(buckets[:, 3], low) and np.array_equal(buckets[:, 5], high)
        np.testing.assert_allclose(buckets[:, 4] / buckets[:, 2], mean, rtol=1e-12)
    if record.exact:
        assert np.array_equal(record.x, xs) and np.array_equal(record.y, ys.astype(np.float64))
    else:
        assert n > RECENT + BUCKETS - 1


def test_chunking_does_not_change_a_bit():
    xs, ys = _series(2 * RECENT + 3 * BUCKETS + 17, seed=5)
    one_by_one = LossRecord()
    for x, y in zip(xs[:3000], ys[:3000]):
        one_by_one.extend(x, y)
    one_by_one.extend(xs[3000:], ys[3000:])
    for seed in (1, 2):
        chunked = LossRecord()
        _append_in_chunks(chunked, xs, ys, seed)
        assert chunked.state()[0] == one_by_one.state()[0]
        for a, b in zip(chunked.state()[1], one_by_one.state()[1]):
            assert a.tobytes() == b.tobytes()


def test_memory_and_saved_size_stay_flat_over_1e8_steps():
    record, chunk = LossRecord(), 1 << 20
    losses = np.random.default_rng(0).random(chunk)
    memory, saved, plotted = set(), [], []
    for start in range(0, 10**8, chunk):
        record.extend(np.arange(start + 1, start + 1 + chunk, dtype=np.float64), losses)
        if start // chunk + 1 in (2, 10, 96):
            meta, arrays = record.state()
            memory.add(record.nbytes)
            saved.append(sum(a.nbytes for a in arrays))
            plotted.append(len(curve(record)[0]))
    assert record.count > 10**8
    assert len(memory) == 1 and memory.pop() == 16 * RECENT + 8 * COLUMNS * BUCKETS, "the same arrays"
    bound = 16 * RECENT + 8 * COLUMNS * BUCKETS  # between half and all the buckets are in use
    assert all(bound / 2 < size <= bound for size in saved), saved
    assert all(rows <= MAX_POINTS for rows in plotted)


def test_ten_million_window_sized_appends_keep_the_same_arrays():
    record, chunk = LossRecord(), 8192
    losses = np.linspace(1, 0.1, chunk, dtype=np.float32)
    shapes = []
    for start in range(0, 10**7, chunk):
        record.extend(np.arange(start + 1, start + 1 + chunk), losses)
        if start in (2 * 10**6 // chunk * chunk, (10**7 - chunk) // chunk * chunk):
            shapes.append((record._x.shape, record._y.shape, record._rows.shape))
    assert shapes[0] == shapes[1]


def test_state_round_trip_then_appends_match_a_run_never_stopped():
    xs, ys = _series(RECENT + 2 * BUCKETS + 999, seed=9)
    whole, first = LossRecord(), LossRecord()
    whole.extend(xs, ys)
    cut = RECENT + BUCKETS + 5
    first.extend(xs[:cut], ys[:cut])
    meta, arrays = first.state()
    later = LossRecord.from_state(json.loads(json.dumps(meta)), [a.copy() for a in arrays])
    later.extend(xs[cut:], ys[cut:])
    assert later.state()[0] == whole.state()[0]
    assert all(a.tobytes() == b.tobytes() for a, b in zip(later.state()[1], whole.state()[1]))


@pytest.mark.parametrize(
    "change",
    [
        {"span": 3},
        {"recent": 5},
        {"count": 10**9},
        {"span": 1},
    ],
)
def test_inconsistent_records_are_refused(change):
    record = LossRecord()
    record.extend(*_series(RECENT + 3 * BUCKETS, seed=3))
    meta, arrays = record.state()
    with pytest.raises(ValueError):
        LossRecord.from_state({**meta, **change}, arrays)


def _checkpoint(runs: list[Run]) -> ckpt.Checkpoint:
    config = Config(seed=7, batch_size=64)
    p = plan_for(config).param_count
    return ckpt.Checkpoint(config, 5, 5, 320, np.ones(p, np.float32), None, np.zeros(2 * p, np.float32), runs)


def _runs(lengths) -> list[Run]:
    runs = []
    for k, n in enumerate(lengths):
        run = Run(f"run {k}")
        run.train.extend(*_series(n, seed=k))
        run.eval.extend(*_series(n // 100, seed=k + 10))
        runs.append(run)
    return runs


def test_checkpoint_round_trip_is_byte_identical():
    data = ckpt.encode(_checkpoint(_runs([5, RECENT + 5 * BUCKETS, 3 * RECENT])))
    back = ckpt.decode(data)
    assert ckpt.encode(back) == data
    assert len(data) < 2 * (16 * RECENT + 48 * (BUCKETS + 1)) * 3 + 4096, "a bounded size"


def test_version_1_checkpoints_are_converted():
    series = [
        ("old", _series(RECENT + 3 * BUCKETS, seed=1), _series(40, seed=2)),
        ("new", _series(30, seed=3), _series(0, seed=4)),
    ]
    back = ckpt.decode(full_series_bytes(_checkpoint([]), 1, series))
    assert [r.label for r in back.runs] == ["old", "new"]
    for run, (_, train, evals) in zip(back.runs, series):
        for record, (xs, ys) in ((run.train, train), (run.eval, evals)):
            expected = LossRecord.from_points(xs, ys)
            assert record.state()[0] == expected.state()[0]
            assert all(np.array_equal(a, b) for a, b in zip(record.state()[1], expected.state()[1]))
    assert np.array_equal(back.runs[1].train.y, series[1][1][1].astype(np.float64)), "a short run stays exact"


def _csv_rows(tmp_path, train, evals, metrics=None) -> list[list[str]]:
    history = RunHistory()
    run = history.start("run")
    run.train.extend(*train)
    run.eval.extend(*evals)
    for name, (xs, ys) in (metrics or {}).items():
        run.metrics[name] = LossRecord.from_points(xs, ys)
    data = object() if metrics is not None else None  # a dataset's run: its columns by name
    session = SimpleNamespace(history=history, trainer=SimpleNamespace(data=data))
    (tmp_path / "loss.csv").write_bytes(_loss_csv(session))
    with open(tmp_path / "loss.csv") as handle:
        return list(csv.reader(handle))


def test_loss_csv_of_a_short_run_has_every_step(tmp_path):
    steps = np.arange(1, 301, dtype=np.float64)
    losses = np.linspace(1, 0.01, 300, dtype=np.float32)
    rows = _csv_rows(tmp_path, (steps, losses), ([0, 100, 200, 300], [2.0, 0.5, 0.25, 0.125]))
    assert rows[0] == ["step", "train_loss", "eval_loss"]
    assert [int(r[0]) for r in rows[1:]] == list(range(1, 301))
    assert [float(r[1]) for r in rows[1:]] == losses.astype(np.float64).tolist()
    assert {int(r[0]): float(r[2]) for r in rows[1:] if r[2]} == {100: 0.5, 200: 0.25, 300: 0.125}


def test_loss_csv_of_a_dataset_has_its_evaluations_columns(tmp_path):
    """A dataset's run: the test loss, the training set's loss and both accuracies, each at the
    steps it was evaluated, from the run's metric records."""
    steps = np.arange(1, 201, dtype=np.float64)
    at = [100.0, 200.0]
    metrics = {"train_loss": (at, [0.4, 0.2]), "train_accuracy": (at, [0.8, 0.9]), "test_accuracy": (at, [0.7, 0.85])}
    rows = _csv_rows(tmp_path, (steps, steps / 1000), (at, [0.5, 0.3]), metrics)
    assert rows[0] == ["step", "train_loss", "test_loss", "train_set_loss", "train_accuracy", "test_accuracy"]
    by_step = {int(r[0]): r[2:] for r in rows[1:]}
    assert by_step[100] == ["0.5", "0.4", "0.8", "0.7"] and by_step[200] == ["0.3", "0.2", "0.9", "0.85"]
    assert by_step[150] == ["", "", "", ""]


def test_loss_csv_of_a_long_run_is_the_record(tmp_path):
    n = 3 * RECENT + 5 * BUCKETS
    steps = np.arange(1, n + 1, dtype=np.float64)
    losses = np.random.default_rng(1).random(n).astype(np.float32)
    eval_steps = np.arange(100, n + 1, 100, dtype=np.float64)
    eval_losses = eval_steps / n
    rows = _csv_rows(tmp_path, (steps, losses), (eval_steps, eval_losses))
    assert rows[0] == ["step", "train_loss", "eval_loss", "steps", "train_loss_min", "train_loss_max"]
    body = np.array([[float(c) if c else np.nan for c in r] for r in rows[1:]])
    assert body[:, 3].sum() == n and body[-1, 0] == n
    first = np.concatenate([[1], body[:-1, 0] + 1]).astype(int)
    for i in range(0, len(body), 997):  # rows of the record: check some against the raw series
        a, b = first[i] - 1, int(body[i, 0])
        chunk = losses[a:b].astype(np.float64)
        assert body[i, 4] == chunk.min() and body[i, 5] == chunk.max()
        assert body[i, 1] == pytest.approx(chunk.mean(), rel=1e-12)
        inside = eval_losses[(eval_steps >= a + 1) & (eval_steps <= b)]
        assert (np.isnan(body[i, 2]) and inside.size == 0) or body[i, 2] == pytest.approx(inside.mean(), rel=1e-12)


def test_plot_curve_groups_rows_keeping_min_mean_max():
    record = LossRecord()
    steps, losses = np.arange(1, 10**6 + 1, dtype=np.float64), np.random.default_rng(2).random(10**6)
    record.extend(steps, losses)
    first, last, count, low, mean, high = curve(record, max_points=1000)
    assert len(first) <= 1000 and count.sum() == 10**6
    for i in (0, 1, len(first) // 2, len(first) - 1):
        chunk = losses[int(first[i]) - 1 : int(last[i])]
        assert count[i] == len(chunk) and low[i] == chunk.min() and high[i] == chunk.max()
        assert mean[i] == pytest.approx(chunk.mean(), rel=1e-12)


def test_drop_after_forgets_recent_points_then_whole_buckets():
    """Back to step N after a divergence: the record forgets what came after N, recent points
    one by one and older buckets whole, and goes on appending from there."""
    record = LossRecord()
    record.extend(np.arange(1, 101, dtype=np.float64), np.arange(100, dtype=np.float64))
    record.drop_after(60)
    assert record.count == 60 and record.last_x == 60
    record.extend([61.0], [5.0])
    assert record.count == 61 and record.last == 5.0
    n = RECENT + 3 * BUCKETS  # bucketed: span 1 then merged, buckets hold older steps
    long = LossRecord()
    long.extend(np.arange(1, n + 1, dtype=np.float64), np.ones(n))
    first_recent = long.recent_x[0]
    long.drop_after(first_recent - 1000)
    assert long.recent_x.size == 0 and long.buckets[-1, 0] <= first_recent - 1000
    assert long.count == long.buckets[:, 2].sum()
