"""The Training panel's live figures: steps and samples, the losses (a dataset's, an image's or
the evaluation grid's, a distance of (x, y, z)'s surface), speed, frame time, memory and GPU time,
one table row each."""

from __future__ import annotations

import math

from imgui_bundle import imgui

from ...views.surface_metrics import BAND_SHARE
from ..style import MUTED
from ..surface_live import live_surface

_DRAWN: dict[str, str] = {}  # the figures' rows of the frame, label -> value (app.figure_rows)


# "GPU ms: train 11, maps 16.3, UI 31.8" beside "frame 30.3 ms" read as a sum that did not add up
GPU_MS_TOOLTIP = (
    "the GPU's time in one recent frame, from its timestamps: train (the frame's steps),\n"
    "maps (the evaluation and heatmaps), UI (drawing the window, in frames whose UI changed).\n"
    "They overlap the frame rather than add up to it: the GPU trains while the CPU builds the UI,\n"
    "and the frame's ms is a mean over 30 frames, some of which draw no UI (on a CPU driver the\n"
    "'GPU' runs on the same cores, beside the UI's building)"
)


def _row(label: str, value: str, colour=None) -> None:
    """A label and its value; a long value wraps in its column instead of running off the panel."""
    _DRAWN[label] = value
    imgui.table_next_row()
    imgui.table_next_column()
    imgui.text_colored(MUTED, label)
    imgui.table_next_column()
    imgui.push_text_wrap_pos(0.0)
    imgui.text_colored(colour, value) if colour is not None else imgui.text(value)
    imgui.pop_text_wrap_pos()


def _figure(value: float, fmt: str) -> str:
    return format(value, fmt) if math.isfinite(value) else "-"


def _image_figures(image) -> None:
    """An image target's loss over its pixels (the training loss's measure) and its PSNR."""
    pixels = f"{image.width}x{image.height} pixels"
    _row("image loss", _figure(image.loss, ".4g") + f"  ({pixels})")
    _row("PSNR", _figure(image.psnr, ".2f") + " dB")


def _grid_figures(session) -> None:
    """Formulas' losses on the evaluation grid: the values' and the derivatives'."""
    _row("eval loss", _figure(session.eval_loss, ".4g") + f"  ({session.grid}x{session.grid} grid)")
    _row("eval ∂ loss", _figure(session.eval_grad_loss, ".4g") + "  (∂/∂x, ∂/∂y)")
    if imgui.is_item_hovered():
        imgui.set_tooltip(
            "the same grid's mean over cells of the squared errors of the derivatives\n"
            "in x and y, summed over outputs (forward-mode autodiff of network and truth)"
        )


def _surface_figures(app) -> None:
    """A signed distance of (x, y, z)'s surface metrics (app/ui/surface_live.py), a few seconds apart."""
    live = live_surface(app)
    row = live.update(app)
    if live.tracker is None:
        return
    side = live.tracker.evaluator.side
    if row is None:
        _row("surface", f"measuring ({side}³ points)...", MUTED)
        _row("normals", "-")
        return
    where = f"at step {row['step']:,}, on a lattice of {side}³ points"
    _row("surface", f"IoU {_optional(row['iou'], '.4f')}, Chamfer {_optional(row['chamfer'], '.3g')}")
    if imgui.is_item_hovered():
        imgui.set_tooltip(
            f"{where}\n"
            "IoU: of the insides (f < 0) of the learned and true distances at the lattice's points\n"
            "Chamfer: the mean distance between the two zero levels, both ways, as a share of the\n"
            "box's diagonal (points where the lattice's edges cross zero; a mesh's own samples)"
        )
    band, box = _optional(row["eikonal_band"], ".3g"), _optional(row["eikonal_box"], ".3g")
    _row("normals", f"{_optional(row['normal_consistency'], '.4f')}, eikonal {band} / {box}")
    if imgui.is_item_hovered():
        imgui.set_tooltip(
            f"{where}\n"
            "normals: the mean |n . n'| at nearest points of the two zero levels (1: alike)\n"
            f"eikonal: the mean of | |grad f| - 1 | near the surface (|truth| < {BAND_SHARE:g} of the\n"
            "diagonal) / over the whole box"
        )


def _optional(value: float | None, fmt: str) -> str:
    return "-" if value is None else _figure(value, fmt)


def _data_figures(session) -> None:
    """A dataset's: the whole training set's loss, the test set's, the accuracies, the epoch."""
    metrics = session.metrics or {}
    nan = float("nan")
    _row(
        "train loss",
        f"{_figure(session.train_loss, '.4g')} batch, {_figure(metrics.get('train_loss', nan), '.4g')} set",
    )
    if imgui.is_item_hovered():
        imgui.set_tooltip("the last step's batch, and the whole training set at the last evaluation")
    _row("test loss", _figure(metrics.get("test_loss", nan), ".4g"))
    if session.trainer.plan.loss.classifies:
        train, test = metrics.get("train_accuracy"), metrics.get("test_accuracy")
        _row("accuracy", "-" if train is None else f"{train:.1%} train, {test:.1%} test")


def _rate(samples_per_second: float, batch_size: int) -> str:
    """Samples/s as measured over completed steps; with steps/min where a step takes over a second."""
    if samples_per_second <= 0:
        return "measuring (first step)"
    if samples_per_second >= 1e4:
        return f"{samples_per_second / 1e6:.2f} M"
    steps_per_minute = 60 * samples_per_second / batch_size
    if steps_per_minute < 60:
        return f"{samples_per_second:,.0f}  ({steps_per_minute:.3g} steps / min)"
    return f"{samples_per_second:,.0f}"


def _memory(trainer) -> str:
    """The trainer's device memory, and a grid's share: its tables' values, with their fp32
    masters, half copies, optimizer state and fixed-point gradient sums."""
    text = f"{trainer.gpu_bytes() / 2**20:.1f} MiB"
    grid = trainer.plan.grid_param_count
    if grid:
        per_value = 4 + (2 if trainer.plan.precision == "half" else 0) + 8 + 8
        text += f", grid {grid * per_value / 2**20:.1f} MiB"
    return text


def _figures(app) -> None:
    s, session = app.shown_stats, app.session
    t = session.trainer
    if not imgui.begin_table("figures", 2, imgui.TableFlags_.sizing_fixed_fit):
        return
    imgui.table_setup_column("figure", imgui.TableColumnFlags_.width_fixed)
    imgui.table_setup_column("value", imgui.TableColumnFlags_.width_stretch)
    _row("step", f"{t.step:,}")
    _row("samples seen", f"{t.samples_seen:,}" + (f" ({t.epochs:,.1f} epochs)" if t.data is not None else ""))
    if t.data is not None:
        _data_figures(session)
    else:
        _row("train loss", _figure(session.train_loss, ".4g"))
        if session.image is not None:  # its pixels, not the grid; a photo's derivatives mean nothing
            _image_figures(session.image)
        else:
            _grid_figures(session)
            _surface_figures(app)
    # The same rows paused as running: the panel is as tall as its rows (app/ui/panels/table.py),
    # and Space would otherwise move the Network panel below it by two rows
    idle = "paused" if not app.running else "waits for the race"
    _row("samples / s", _rate(app.frames.samples_per_second(), t.batch_size) if app.trains_main else idle)
    _row("training", s.training if app.trains_main else idle)
    _row("kernels", f"{session.trainer.plan.matmul}, {session.trainer.path.label} gradient sums")
    _row("frame", f"{s.frame_ms:.1f} ms ({1000 / s.frame_ms:.0f} fps), work {s.work_ms:.1f} ms" if s.frame_ms else "-")
    if imgui.is_item_hovered():
        imgui.set_tooltip(
            "frame: from one frame to the next, as you see it (waiting for vsync and events included)\n"
            "work: the part of it this app spends on a frame: the UI, then recording, running and\n"
            "reading back the frame's training, evaluation and drawing (means over 30 frames)"
        )
    _row("UI drawn", f"{s.ui_per_second:.0f} times / s (when it changed)")
    _row("GPU memory", _memory(t))
    if s.gpu_ms:  # only what the device's timestamp queries measured
        _row("GPU ms", f"train {s.gpu_ms['training']:.3g}, maps {s.gpu_ms['heatmaps']:.3g}, UI {s.gpu_ms['ui']:.3g}")
        app.remember("gpu ms")
        if imgui.is_item_hovered():
            imgui.set_tooltip(GPU_MS_TOOLTIP)
    else:
        _row("GPU", "no timestamp queries here", MUTED)
    imgui.end_table()
    app.remember("figures")


def draw_figures(app) -> None:
    """The figures' table; app.figure_rows keeps what it said (tests)."""
    _DRAWN.clear()
    _figures(app)
    app.figure_rows = dict(_DRAWN)
