"""The speed benchmark's derivatives rows (app/bench/derivative_rows.py) as the benchmark builds,
compares and prints them, with the timed parts replaced by fixed figures: the app's trainer
(timed on a GPU by app/bench/runners.py) and PyTorch's steps (checked on their own in
tests/test_torch_derivatives.py). Nothing here needs PyTorch."""

from __future__ import annotations

import argparse

import pytest

from app.bench import derivative_rows, speed, torch_derivatives

APP_SAMPLES = 4.0e8


@pytest.fixture
def app_calls(monkeypatch):
    """The app's rows' arguments, each row at APP_SAMPLES samples/s."""
    calls = []

    def app_row(gpu, name, batch, precision, fields, budget, cap):
        calls.append(dict(name=name, batch=batch, precision=precision, fields=fields))
        figures = dict(samples_per_second=APP_SAMPLES, steps_per_second=APP_SAMPLES / batch)
        return dict(trainer="app", network=name, batch=batch, precision=precision, **figures)

    monkeypatch.setattr(derivative_rows, "app_row", app_row)
    monkeypatch.setattr(derivative_rows, "measure", lambda run, batch, budget, cap: _figures(batch, run(10), 10))
    return calls


def _figures(batch, seconds, steps):
    return {"samples_per_second": batch * steps / seconds, "steps_per_second": steps / seconds}


def _args(no_compile=False):
    return argparse.Namespace(no_compile=no_compile, compile_mode="auto")


def test_the_app_rows_train_the_task_in_float_and_half(app_calls, monkeypatch):
    monkeypatch.setattr(torch_derivatives, "unavailable_reason", lambda: "PyTorch has no CUDA device")
    derivative_rows.rows_for(None, 1024, _args(), 0.3, 50)
    network = dict(encoding="raw", hidden=[64, 64, 64], activation="softplus", targets=["sin(3*x)*cos(2*y)"])
    sobolev, eikonal = {**network, "grad_weight": 1.0}, {**network, "sdf": "circle", "eikonal": 0.1}
    assert app_calls == [
        dict(name=name, batch=1024, precision=precision, fields=fields)
        for name, fields in (("sobolev", sobolev), ("eikonal", eikonal))
        for precision in ("float", "half")
    ]


def test_without_pytorch_each_app_row_says_why(app_calls, monkeypatch, capsys):
    monkeypatch.setattr(torch_derivatives, "unavailable_reason", lambda: "PyTorch has no CUDA device")
    rows = derivative_rows.rows_for(None, 1024, _args(), 0.3, 50)
    assert [row["trainer"] for row in rows] == ["app"] * 4
    assert all(row["note"] == "no PyTorch rows: PyTorch has no CUDA device" for row in rows)
    assert all("vs_best_torch" not in row for row in rows)
    for row in rows:
        speed._print(row)
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 4 and all("[no PyTorch rows: PyTorch has no CUDA device]" in line for line in printed)


class _CompiledStep:
    """The best step under fp16 autocast, the only one the rows build: 0.5 ms a step."""

    variant, note, build_seconds = "compiled", "", 12.0

    def __init__(self, loss, batch, mode, half):
        assert mode == "default", "auto autotunes the speed rows' fp16 products only"
        assert half, "the best step's fp32 twin is left out (derivative_rows.py)"

    def time(self, steps):
        return steps * 0.5e-3


class _EagerStep(_CompiledStep):
    variant, note = "eager", "torch.compile failed: RuntimeError: double backward"


class _NoStep:
    def __init__(self, loss, batch, mode, half):
        raise RuntimeError("CUDA error: operation not permitted when stream is capturing\nmore lines")


def _with_torch(monkeypatch, best_step):
    monkeypatch.setattr(torch_derivatives, "unavailable_reason", lambda: None)
    monkeypatch.setattr(torch_derivatives, "time_eager", lambda loss, batch, steps: steps * 4e-3)
    monkeypatch.setattr(torch_derivatives, "BestStep", best_step)


def test_the_ratio_is_to_the_faster_pytorch_row(app_calls, monkeypatch, capsys):
    _with_torch(monkeypatch, _CompiledStep)
    rows = derivative_rows.rows_for(None, 1 << 16, _args(), 0.3, 50)
    trainers = ["app", "app", "torch-eager-fp32", "torch-compiled-graph-fp16-autocast"]
    assert [row["trainer"] for row in rows] == trainers * 2
    assert [row["precision"] for row in rows[:4]] == ["float", "half", "fp32", "fp16-autocast"]
    eager, best = (rows[k]["samples_per_second"] for k in (2, 3))
    assert eager == pytest.approx((1 << 16) / 4e-3) and best == pytest.approx((1 << 16) / 0.5e-3)
    assert rows[0]["vs_best_torch"] == rows[1]["vs_best_torch"] == pytest.approx(APP_SAMPLES / best)
    assert rows[3]["compile_mode"] == "default" and rows[3]["variant"] == "compiled + CUDA graph"
    assert all(row["group"] == "derivatives" and row["batch"] == 1 << 16 for row in rows)
    assert [row["weight"] for row in rows] == [1.0] * 4 + [0.1] * 4
    speed._print(rows[0])
    speed._print(rows[3])
    app_line, best_line = capsys.readouterr().out.splitlines()
    assert "sobolev" in app_line and f"x{APP_SAMPLES / best:.2f} best PyTorch" in app_line
    assert "(default: compile+capture 12 s)" in best_line


def test_a_slow_best_step_leaves_the_ratio_to_eager(app_calls, monkeypatch):
    """Where eager PyTorch is the faster row, the app's ratio is to it."""

    class _SlowStep(_CompiledStep):
        def time(self, steps):
            return steps * 8e-3

    _with_torch(monkeypatch, _SlowStep)
    rows = derivative_rows.rows_for(None, 1 << 16, _args(), 0.3, 50)
    assert rows[0]["vs_best_torch"] == pytest.approx(APP_SAMPLES / rows[2]["samples_per_second"])


def test_a_failed_compile_is_the_eager_graph_with_its_reason(app_calls, monkeypatch, capsys):
    _with_torch(monkeypatch, _EagerStep)
    best = derivative_rows.rows_for(None, 1024, _args(), 0.3, 50)[3]
    assert best["trainer"] == "torch-eager-graph-fp16-autocast" and "compile_mode" not in best
    speed._print(best)
    assert "(capture 12 s)  [torch.compile failed: RuntimeError: double backward]" in capsys.readouterr().out


def test_no_best_step_leaves_eager_and_says_why(app_calls, monkeypatch):
    _with_torch(monkeypatch, _NoStep)
    rows = derivative_rows.rows_for(None, 1024, _args(), 0.3, 50)
    assert [row["trainer"] for row in rows] == ["app", "app", "torch-eager-fp32"] * 2
    failure = "RuntimeError: CUDA error: operation not permitted when stream is capturing"
    assert rows[0]["note"] == f"no best PyTorch fp16-autocast row: {failure}"
    assert rows[0]["vs_best_torch"] == pytest.approx(APP_SAMPLES / rows[2]["samples_per_second"])


def test_no_compile_skips_the_best_step(app_calls, monkeypatch):
    _with_torch(monkeypatch, _NoStep)
    rows = derivative_rows.rows_for(None, 1024, _args(no_compile=True), 0.3, 50)
    assert [row["trainer"] for row in rows] == ["app", "app", "torch-eager-fp32"] * 2 and "note" not in rows[0]


def test_the_command_line_takes_the_group(capsys):
    with pytest.raises(SystemExit) as exit_info:
        speed.main(["--only", "derivatives", "--quick", "--help"])
    assert exit_info.value.code == 0
    assert "derivatives" in capsys.readouterr().out
    assert speed.QUICK["derivatives"] == [1 << 10] and speed.FULL["derivatives"] == [1 << 16, 1 << 20]
