"""The speed benchmark's derivatives rows (`python -m app.bench --only derivatives`): training on each
loss of derivatives_task.py, the app in float and in half beside PyTorch eager in fp32 and the best
PyTorch step under fp16 autocast (its fp32 twin left out: docs/benchmarks.md, 'Derivative
training'). Where PyTorch or CUDA is missing, or the best step cannot be built, a row says why."""

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
