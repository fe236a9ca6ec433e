"""The Network panel's warning before a rebuild whose network would train one step in more than
SLOW_STEP_S here, with the estimate (app/loop/step_cost.py: this device's measured speed)."""

from __future__ import annotations

from imgui_bundle import imgui

from ..style import WARN

SLOW_STEP_S = 1.0


def compact_title(sizes) -> str:
    """4 -> 256x8 -> 4: runs of equal widths counted, so that a deep network's title stays short."""
    runs: list[list[int]] = []
    for width in sizes:
        if runs and runs[-1][0] == width:
            runs[-1][1] += 1
        else:
            runs.append([width, 1])
    return " -> ".join(f"{width}x{count}" if count > 1 else str(width) for width, count in runs)


def _duration(seconds: float) -> str:
    return f"{seconds:.2g} s" if seconds < 90 else f"{seconds / 60:.2g} min"


def draw(app) -> None:
    """The warning for the draft network, where its step would be slow; nothing otherwise."""
    plan, batch = app.gpu.plan(app.draft), app.config.batch_size
    seconds = app.frames.step_cost.seconds(plan, batch)
    if seconds <= SLOW_STEP_S:
        return
    imgui.push_text_wrap_pos(0.0)
    imgui.text_colored(
        WARN,
        f"One step of {compact_title(plan.sizes)} at batch {batch:,} would take ~{_duration(seconds)} here "
        f"(~{batch / seconds:,.0f} samples/s, estimated from this device's measured speed): "
        "the loss and heatmaps change once a step. A smaller batch or network trains faster.",
    )
    imgui.pop_text_wrap_pos()
    app.remember("slow step warning")
