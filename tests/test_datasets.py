"""Point datasets on the host: the Playground's generators against their definitions (counts,
class balance, where the points lie, the noise), the split's determinism, and CSVs (a round
trip through split.csv, and every bad input of the issue, each one line naming row and column)."""

from __future__ import annotations

import numpy as np
import pytest

from app import datasets
from app.config.config import Config, validate
from app.config.truths import with_dataset
from app.datasets.csv_data import read_csv
from app.datasets.generators import GENERATORS, multigauss_value
from app.errors import UserError


def _make(name: str, n: int = 2000, noise: float = 0.0, seed: int = 3):
    return GENERATORS[name].make(np.random.default_rng(seed), n, noise)


@pytest.mark.parametrize("name", list(GENERATORS))
@pytest.mark.parametrize("n", [2, 501, 2000])
def test_each_generator_makes_exactly_n_points_in_its_domain(name, n):
    x, y, truth = _make(name, n, noise=0.5)
    assert len(x) == len(y) == len(truth) == n
    if name != "gauss":  # Gaussian blobs have no bound
        assert np.all(np.abs(x) <= 6.5) and np.all(np.abs(y) <= 6.5)
    if GENERATORS[name].classify:
        assert set(np.unique(truth)) <= {0, 1}
        if name in ("gauss", "spiral"):  # the class is the half a point was made in
            assert np.count_nonzero(truth == 1) == n - n // 2


def test_circle_follows_its_definition():
    x, y, label = _make("circle")
    r = np.hypot(x, y)
    inside = np.arange(len(x)) < 1000
    assert np.all(r[inside] <= 2.5) and np.all((r[~inside] >= 3.5) & (r[~inside] <= 5.0))
    assert np.array_equal(label, (r < 2.5).astype(int)), "at noise 0 the label is where the point lies"
    x, y, label = _make("circle", noise=0.5)
    flipped = label != (np.hypot(x, y) < 2.5)
    assert 0.02 < np.mean(flipped) < 0.5, "noise moves the point the label is taken at, by up to 2.5"


def test_xor_follows_its_definition():
    x, y, label = _make("xor")
    assert np.all(np.abs(x) >= 0.3) and np.all(np.abs(y) >= 0.3) and np.max(np.abs(x)) <= 5.3
    assert np.array_equal(label, (x * y >= 0).astype(int))
    assert 0.4 < np.mean(label) < 0.6
    _, _, noisy = _make("xor", noise=0.5)
    assert np.mean(noisy != label) > 0.05


@pytest.mark.parametrize("noise, variance", [(0.0, 0.5), (0.25, 2.25), (0.5, 4.0)])
def test_gauss_blobs_have_the_playgrounds_variance(noise, variance):
    x, y, label = _make("gauss", n=20000, noise=noise)
    for cls, centre in ((1, 2.0), (0, -2.0)):
        for v in (x[label == cls], y[label == cls]):
            assert abs(np.mean(v) - centre) < 0.1
            assert abs(np.var(v) / variance - 1) < 0.06


def test_spiral_points_lie_on_the_two_spirals():
    x, y, label = _make("spiral", n=1000)
    for cls, delta, offset in ((1, 0.0, 0), (0, np.pi, 500)):
        i = np.arange(500)
        r, t = i / 500 * 5, 1.75 * i / 500 * 2 * np.pi + delta
        assert np.allclose(x[offset : offset + 500], r * np.sin(t)) and np.allclose(
            y[offset : offset + 500], r * np.cos(t)
        )
        assert np.all(label[offset : offset + 500] == cls)
    noisy_x, noisy_y, _ = _make("spiral", n=1000, noise=0.3)
    assert 0.0 < np.max(np.abs(noisy_x - x)) <= 0.3 and np.max(np.abs(noisy_y - y)) <= 0.3


def test_regression_generators_follow_their_definitions():
    x, y, value = _make("plane")
    assert np.allclose(value, (x + y) / 10)
    x2, y2, noisy = _make("plane", n=20000, noise=0.5)
    residual = noisy - (x2 + y2) / 10
    # noise * (U(-6, 6) + U(-6, 6)) / 10: variance 2 * 0.25 * 12 / 100
    assert abs(np.var(residual) / (2 * 0.25 * 12 / 100) - 1) < 0.05
    x, y, value = _make("multigauss")
    assert np.allclose(value, multigauss_value(x, y)) and np.max(np.abs(value)) <= 1.0
    assert multigauss_value(np.array([-4.0, 0.0]), np.array([2.5, 2.5])).tolist() == [1.0, -1.0]


def _config(**fields) -> Config:
    return validate(Config(**{"dataset": {"generator": "spiral"}, **fields}))


def _build(**fields) -> datasets.Dataset:
    config = _config(**fields)
    return datasets.build(config.dataset, config.data_settings)


def test_the_split_is_a_seeded_shuffle_and_deterministic():
    a, b = _build(points=101, train_ratio=0.3), _build(points=101, train_ratio=0.3)
    assert a.train_count == 30 and a.test_count == 71
    assert np.array_equal(a.x, b.x) and np.array_equal(a.truth, b.truth) and np.array_equal(a.original, b.original)
    other = _build(points=101, train_ratio=0.3, data_seed=1)
    assert not np.array_equal(a.original, other.original)
    assert sorted(a.original.tolist()) == list(range(101)), "every point once"
    x, y, label = GENERATORS["spiral"].make(np.random.default_rng([0, 0]), 101, 0.0)  # data seed 0
    assert np.array_equal(a.x, x[a.original].astype(np.float32)) and np.array_equal(a.classes, label[a.original])
    assert _build(points=2, train_ratio=0.9).train_count == 1, "one point of each set at least"


@pytest.mark.parametrize(("points", "ratio", "train"), [(7, 0.5, 3), (101, 0.66, 66), (9, 0.9, 8), (10, 0.15, 1)])
def test_the_training_set_is_the_floor_of_points_times_the_ratio(points, ratio, train):
    """floor(n * ratio), as docs/guide/data.md says, where rounding would give one more (3.5, 66.66, 8.1
    then 1.5: floor 3, 66, 8 and 1, where round() gives 4, 67, 8 and 2)."""
    assert _build(points=points, train_ratio=ratio).train_count == train


def test_a_csv_round_trips_through_split_csv(tmp_path):
    data = _build(points=300, noise=0.2)
    path = tmp_path / "split.csv"
    path.write_bytes(data.split_csv())
    lines = path.read_text().splitlines()
    assert lines[0] == "x,y,label,set" and len(lines) == 301
    assert sum(line.endswith(",train") for line in lines) == data.train_count
    read = read_csv(str(path))
    assert read.names == ("-1", "1") and read.source["rows"] == 300
    order = np.argsort(data.original)
    assert np.array_equal(read.x, data.x[order].astype(np.float64)) and np.array_equal(
        read.classes, data.classes[order]
    )
    regression = _build(dataset={"generator": "plane"}, points=50)
    path.write_bytes(regression.split_csv())
    values = read_csv(str(path))
    assert values.names == ("value",) and values.classes is None
    assert np.array_equal(values.values[:, 0], regression.truth[np.argsort(regression.original), 0].astype(np.float64))


def test_csv_forms(tmp_path):
    def read(text: str):
        path = tmp_path / "points.csv"
        path.write_text(text)
        return read_csv(str(path))

    three = read("1,2,cat\n3,4,dog\n5,6,emu\n7,8,cat\n")
    assert three.names == ("cat", "dog", "emu") and three.classes.tolist() == [0, 1, 2, 0]
    assert datasets.problem_of(three.source).kind == "classes"
    numbered = read("0.5,1,10\n1,2,-3\n2,3,10\n")  # whole numbers without a header: classes, in numeric order
    assert numbered.names == ("-3", "10") and numbered.classes.tolist() == [1, 0, 1]
    values = read("x,y,height,weight\n0,0,1.5,2\n1,1,2.5,3\n")
    assert values.names == ("height", "weight") and values.values.tolist() == [[1.5, 2.0], [2.5, 3.0]]
    assert read("1,2,0.25\n3,4,0.75\n").names == ("value",), "fractions without a header: a value"
    assert read("X,Y,Label\n1,2,a\n\n3,4,b\n").source["classes"] == ["a", "b"], "a header in any case, blank lines"


BAD = [
    ("", "is empty"),
    ("x,y,label\n", "has 0 rows of points"),
    ("x,y,label\n1,2,a\n", "has 1 row of points; at least 2"),
    ("x,y\n1,2\n", "row 1 has 2 cells"),
    ("x\n1\n", "row 1 has 1 cell: a CSV of points needs"),
    ("x,y,label\n1,2,a\n3,4\n", "row 3 has 2 cells where the header has 3"),
    ("x,y,label\n1,2,a\n3\n", "row 3 has 1 cell where the header has 3"),
    ("x,y,label\n1,2,a\n3,four,b\n", "row 3, column 2 (y): 'four' is not a number"),
    ("x,y,label\n1,2,a\n3,,b\n", "row 3, column 2 (y) is empty"),
    ("x,y,label\n1,2,a\nnan,4,b\n", "row 3, column 1 (x): 'nan' is not a finite number"),
    ("x,y,v\n1,2,3\n3,4,inf\n", "row 3, column 3 (v): 'inf' is not a finite number"),
    ("x,y,label\n1,2,a\n3,4,a\n", "holds a single class ('a')"),
    ("x,y,label\n" + "".join(f"{k},{k},c{k}\n" for k in range(9)), "holds 9 classes; at most 8"),
    ("x,y,v\n1,2,3\n1e30,4,5\n", "row 3, column 1 (x): 1e+30 is beyond +-1e+06"),
    ("a,b,label\n1,2,x\n", "a header's first columns must be x and y"),
    ("x,y,label\n1,2,0.5\n3,4,1.5\n5,6,2.5\n7,8,0.1\n", "numbers that are not whole (0.1, 0.5, 1.5)"),
    ("x;y;label\n1;2;a\n3;4;b\n", "separated by ';'"),
    ("x\ty\tlabel\n1\t2\ta\n3\t4\tb\n", "separated by tabs"),
]


@pytest.mark.parametrize("text, words", BAD, ids=[words for _, words in BAD])
def test_bad_csvs_are_one_line_naming_row_and_column(tmp_path, text, words):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(UserError) as caught:
        read_csv(str(path))
    message = str(caught.value)
    assert words in message and "\n" not in message and "bad.csv" in message


def test_bad_files_are_refused(tmp_path, monkeypatch):
    with pytest.raises(UserError, match="is a folder, not a CSV file"):
        read_csv(str(tmp_path))
    junk = tmp_path / "junk.csv"
    junk.write_bytes(b"x,y,label\n1,2,a\n\x89PNG\x00\x01\x02")
    with pytest.raises(UserError, match=r"row 3 holds binary data, not text"):
        read_csv(str(junk))
    with pytest.raises(UserError, match="cannot be read"):
        read_csv(str(tmp_path / "missing.csv"))
    monkeypatch.setattr("app.datasets.csv_data.MAX_ROWS", 5)
    many = tmp_path / "many.csv"
    many.write_text("".join(f"{k},{k},{k % 2}\n" for k in range(10)))
    with pytest.raises(UserError, match=r"has more than 5 rows \(row 7\)"):
        read_csv(str(many))


def test_ten_million_rows_stop_at_the_limit(tmp_path):
    """A file of 10^7 rows is refused at row 1,000,002, without reading the rest into points."""
    path = tmp_path / "huge.csv"
    row = b"1.5,2.5,1\n"
    with open(path, "wb") as handle:
        handle.write(row * 10_000_000)
    with pytest.raises(UserError, match=r"has more than 1,000,000 rows \(row 1000002\)"):
        read_csv(str(path))


def test_a_changed_csv_is_refused(tmp_path):
    path = tmp_path / "points.csv"
    path.write_text("1,2,a\n3,4,b\n")
    config = with_dataset(validate(Config()), datasets.entry_for(str(path)))
    assert config.domain[0] < 1 < 3 < config.domain[1], "the domain holds the points"
    path.write_text("1,2,a\n3,5,b\n")
    datasets._CSV_CACHE.clear()
    with pytest.raises(UserError, match="has changed since this run used it"):
        datasets.build(config.dataset, config.data_settings)


def test_unknown_dataset_names():
    with pytest.raises(UserError, match="unknown dataset 'spirl'"):
        datasets.entry_for("spirl")
    assert datasets.entry_for("none") is None and datasets.entry_for("xor") == {"generator": "xor"}
