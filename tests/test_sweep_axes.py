"""The sweep viewer's axes and table order (app/ui/sweep/axes.py), in plain Python, against
values worked out here from the rows written: log axes where the space samples on a log scale and
the values span more than a decade, categories evenly spaced in the space's order, the metric's
goodness turned over where it is minimised, and any column sorted with missing values last."""

from __future__ import annotations

import math

import pytest
from sweep_folders import SPACE, screenshot_rows, trial_row, write_sweep

from app.files.sweep_folder import SearchedField, read_sweep
from app.ui.sweep import axes


def test_log_axes_follow_the_space_and_span_more_than_a_decade(tmp_path):
    rows = screenshot_rows()
    trials = read_sweep(write_sweep(tmp_path / "a", rows)).trials
    lr = axes.parameter_axis(SearchedField("lr", "loguniform", None), trials)
    values = [row["parameters"]["lr"] for row in rows]
    assert lr.log and (lr.low, lr.high) == (min(values), max(values)) and lr.title == "lr (log)"
    for trial, value in zip(trials, values):
        expected = (math.log10(value) - math.log10(min(values))) / (math.log10(max(values)) - math.log10(min(values)))
        assert lr.position(trial.parameters["lr"]) == pytest.approx(expected)
    assert not axes.parameter_axis(SearchedField("lr", "uniform", None), trials).log, "the space says linear"
    narrow = [trial_row(k, "complete", 0.1, {"lr": v}) for k, v in enumerate((0.002, 0.005, 0.019))]
    within = read_sweep(write_sweep(tmp_path / "b", narrow, space=SPACE)).trials
    assert not axes.parameter_axis(SearchedField("lr", "loguniform", None), within).log, "within a decade"


def test_choices_are_evenly_spaced_categories(tmp_path):
    rows = [
        trial_row(0, "complete", 0.3, {"act": "tanh", "hidden": [32, 32]}),
        trial_row(1, "complete", 0.2, {"act": "relu", "hidden": [16]}),
        trial_row(2, "complete", 0.1, {"act": "silu", "hidden": [16]}),
    ]
    trials = read_sweep(write_sweep(tmp_path / "s", rows, space=None)).trials
    activation = axes.parameter_axis(SearchedField("act", "", None), trials)
    assert activation.categories == ("relu", "silu", "tanh"), "no space: sorted"
    assert [activation.position(v) for v in ("relu", "silu", "tanh")] == [0.0, 0.5, 1.0]
    assert activation.labels() == [(0.0, "relu"), (0.5, "silu"), (1.0, "tanh")]
    hidden = axes.parameter_axis(SearchedField("hidden", "choice", ([16], [64], [32, 32])), trials)
    assert hidden.categories == ([16], [64], [32, 32]), "the space's order, a choice no trial took included"
    assert hidden.position([32, 32]) == 1.0 and hidden.labels()[1] == (0.5, "[64]")


def test_the_metric_axis_and_goodness(tmp_path):
    rows = screenshot_rows()
    folder = read_sweep(write_sweep(tmp_path / "s", rows))
    metric = axes.metric_axis(folder)
    finite = [row["metric"] for row in rows if row["metric"] is not None]
    assert metric.log and (metric.low, metric.high) == (min(finite), max(finite)), "a loss over decades"
    assert metric.title == "eval_loss (min, log)"
    best, worst = folder.trial("0003"), folder.trial("0006")
    assert axes.goodness(folder, metric, best) == 1.0 and axes.goodness(folder, metric, worst) == 0.0
    assert axes.goodness(folder, metric, folder.trial("0004")) is None, "a failed trial has none"
    maximised = read_sweep(write_sweep(tmp_path / "m", rows, metric="psnr", mode="max"))
    assert axes.goodness(maximised, axes.metric_axis(maximised), maximised.trial("0006")) == 1.0


@pytest.mark.parametrize("descending", [False, True])
def test_the_table_sorts_by_any_column_with_missing_values_last(tmp_path, descending):
    rows = screenshot_rows()
    folder = read_sweep(write_sweep(tmp_path / "s", rows))
    with_metric = [k for k, row in enumerate(rows) if row["metric"] is not None]
    expected = sorted(with_metric, key=lambda k: rows[k]["metric"], reverse=descending)
    assert axes.sorted_trials(folder, "eval_loss", descending) == expected + [4]
    by_lr = sorted(range(8), key=lambda k: rows[k]["parameters"]["lr"], reverse=descending)
    assert axes.sorted_trials(folder, "lr", descending) == by_lr
    small_first = [k for k in range(8) if rows[k]["parameters"]["hidden"] == [16]]
    large = [k for k in range(8) if rows[k]["parameters"]["hidden"] == [32, 32]]
    assert axes.sorted_trials(folder, "hidden", descending) == (
        large + small_first if descending else small_first + large
    )
    errors = [k for k in range(8) if rows[k]["error"]]
    assert axes.sorted_trials(folder, "error", descending)[len(errors) :] == [
        k for k in range(8) if not rows[k]["error"]
    ]
