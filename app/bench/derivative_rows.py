"""The speed benchmark's derivatives rows (`python -m app.bench --only derivatives`): training on
a loss of the network's input gradient, each loss of app/bench/derivatives_task.py at one batch.
For each: the app's trainer in float and in half (timed as the other app rows,
app/bench/runners.py; half takes the fused tensor-core trainer where the device has it),
PyTorch eager in fp32, the best PyTorch step under fp16 autocast
(torch_derivatives.BestStep: compiled and captured in a CUDA graph, else eager and captured, which
its row says), and each app row's samples/s over the faster PyTorch row's. The best step's fp32
twin is left out: fp16 autocast beat it in every run (H100, 2026-11-27: 1.41e8 against 8.31e7
samples/s at 2^16, 2.25e8 against 1.10e8 at 2^20), and its four compiles took 36 s of a 542 s
run. Where PyTorch or CUDA is missing, or the best step cannot be built, the rows say why instead
of stopping the benchmark."""

from __future__ import annotations

from . import torch_derivatives
from .derivatives_task import LOSSES, WEIGHTS, app_fields
from .runners import EAGER_SHARE, app_row, measure

GROUP = "derivatives"


def rows_for(gpu, batch: int, args, budget: float, cap: int) -> list[dict]:
    """Every loss's rows at `batch`, the app's row of each first."""
    torch_missing = torch_derivatives.unavailable_reason()
    rows = []
    for loss in LOSSES:
        rows += _loss_rows(gpu, loss, batch, args, budget, cap, torch_missing)
    return rows


def _compile_mode(choice: str) -> str:
    """--compile-mode's auto autotunes the MLP rows' fp16 products only (speed.py): here the default mode
    compiles in seconds."""
    return "default" if choice == "auto" else choice


def _loss_rows(gpu, loss: str, batch: int, args, budget: float, cap: int, torch_missing: str | None) -> list[dict]:
    labels = dict(group=GROUP, network=loss, batch=batch, weight=WEIGHTS[loss])
    apps = [{**app_row(gpu, loss, batch, p, app_fields(loss), budget, cap), **labels} for p in ("float", "half")]
    if torch_missing:
        return [{**app, "note": f"no PyTorch rows: {torch_missing}"} for app in apps]
    eager = measure(lambda n: torch_derivatives.time_eager(loss, batch, n), batch, budget * EAGER_SHARE, cap)
    rows = [*apps, dict(trainer="torch-eager-fp32", precision="fp32", **labels, **eager)]
    if not args.no_compile:
        best = _best_row(loss, batch, _compile_mode(args.compile_mode), budget, cap * 10)
        if "samples_per_second" in best:
            rows.append({**best, **labels})
        else:
            for app in apps:
                app["note"] = "; ".join(filter(None, [app.get("note"), best["note"]]))
    fastest = max(row["samples_per_second"] for row in rows[len(apps) :])
    for app in apps:
        app["vs_best_torch"] = app["samples_per_second"] / fastest
    return rows


def _best_row(loss: str, batch: int, mode: str, budget: float, cap: int) -> dict:
    """The best PyTorch step's row (under fp16 autocast), or {"note": why there is none}."""
    precision = "fp16-autocast"
    try:
        step = torch_derivatives.BestStep(loss, batch, mode, half=True)
    except Exception as error:  # the eager capture failed too: the other rows stand
        return {"note": f"no best PyTorch {precision} row: {torch_derivatives.describe_failure(error)}"}
    row = dict(
        trainer=f"torch-{step.variant}-graph-{precision}",
        precision=precision,
        variant=f"{step.variant} + CUDA graph",
        build_seconds=step.build_seconds,
        **measure(step.time, batch, budget, cap),
    )
    if step.variant == "compiled":
        row["compile_mode"] = mode
    return {**row, "note": step.note} if step.note else row
