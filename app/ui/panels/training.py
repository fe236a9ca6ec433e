"""Training panel: run controls, the hot hyperparameters and live figures."""

from __future__ import annotations

import math
import random

from imgui_bundle import imgui

from ...model.optimizers import OPTIMIZERS
from ..fields import draw_field, draw_hyper
from ..sliders import real, typed_slider, whole
from ..style import BAD, GOOD, MUTED, em, field_error
from . import divergence
from .batch_slider import batch_slider

LOG_LR_RANGE = (-5.0, 0.0)  # the slider's range, in log10 of the learning rate


def round_significant(value: float, digits: int = 3) -> float:
    """What a slider sets: 0.01, not 0.009999999776 (the float32 a slider works in)."""
    return float(f"{value:.{digits - 1}e}")


def _lr_slider(lr: float):
    """A slider over log10(lr) that shows and gives the rate itself: ImGui's own logarithmic
    flag misreads a %e format (it set lr = 10 wherever it was clicked)."""

    def draw(flags: int) -> tuple[bool, float]:
        flags |= imgui.SliderFlags_.always_clamp
        changed, log_lr = imgui.slider_float("learning rate", math.log10(lr), *LOG_LR_RANGE, f"{lr:.3g}", flags)
        return changed, round_significant(10.0**log_lr)

    return draw


def shortcuts(app) -> None:
    """Space, S and R work anywhere except while typing into a field."""
    if imgui.get_io().want_text_input:
        return
    if imgui.is_key_pressed(imgui.Key.space, False):
        app.running = not app.running
    if imgui.is_key_pressed(imgui.Key.s, False):
        app.step_once()
    if imgui.is_key_pressed(imgui.Key.r, False):
        app.reset()


def draw(app) -> None:
    if app.session.divergence is not None:
        divergence.draw(app)
    _controls(app)
    imgui.separator()
    _hyperparameters(app)
    imgui.separator()
    # The check above the figures: at 1280 x 800 the figures reach below the panel's fold, and
    # an action out of sight is one nobody finds
    _grad_check(app)
    imgui.separator()
    _DRAWN.clear()
    _figures(app)
    app.figure_rows = dict(_DRAWN)  # what the figures said (tests)


def _grad_check(app) -> None:
    """The button, whether the last check of this network passed, and its figure (details on hover)."""
    if imgui.button("Checking..." if app.grad_check_wanted else "Gradient check"):
        app.request_grad_check()
    app.remember("gradient check")
    if imgui.is_item_hovered():
        imgui.set_tooltip(
            "the training kernels' parameter gradients on a fixed batch, against SlangPy's\n"
            "autodiff of an independent Slang loss (.bwds), and that against float64 central differences"
        )
    imgui.same_line()
    check = app.grad_check
    if check is None:
        imgui.text_colored(MUTED, "not run for this network")
        return
    imgui.text_colored(GOOD if check.passed else BAD, "passed" if check.passed else "FAILED")
    imgui.same_line()
    imgui.text_colored(MUTED, f"(tolerance {check.tolerance:g})")
    imgui.push_text_wrap_pos(0.0)
    imgui.text(f"max relative error {check.error:.2g} over {check.parameters:,} parameters")
    imgui.pop_text_wrap_pos()
    app.remember("gradient check result")
    if imgui.is_item_hovered():
        imgui.set_tooltip(check.detail().replace("; ", ";\n"))


def _controls(app) -> None:
    spacing = imgui.get_style().item_spacing.x
    third = (imgui.get_content_region_avail().x - 2 * spacing) / 3
    if imgui.button("Pause (Space)" if app.running else "Play (Space)", imgui.ImVec2(2 * third + spacing, 0)):
        app.running = not app.running
    app.remember("pause")
    imgui.same_line()
    imgui.begin_disabled(app.running)
    if imgui.button("Step (S)", imgui.ImVec2(third, 0)):
        app.step_once()
    imgui.end_disabled()
    if imgui.button("Reset (R)", imgui.ImVec2(third * 0.8, 0)):
        app.reset()
    if imgui.is_item_hovered():
        imgui.set_tooltip("fresh weights from the same seed")
    imgui.same_line()
    if imgui.button("New seed", imgui.ImVec2(third * 0.8, 0)):
        app.reset(random.randrange(1, 2**31))
    imgui.same_line()
    imgui.text_colored(MUTED, "seed")
    imgui.same_line()
    imgui.set_next_item_width(imgui.get_content_region_avail().x)
    changed, seed = imgui.input_int("##seed", app.config.seed, 0, 0, imgui.InputTextFlags_.enter_returns_true)
    app.remember("seed")
    if imgui.is_item_hovered():
        imgui.set_tooltip("seed: type one and press Enter to start again from it")
    if changed:
        app.reset_with_seed(seed)
    field_error(app, "seed")


def _hyperparameters(app) -> None:
    c = app.config
    imgui.push_item_width(-em(7))
    # Ctrl+click types the size or the rate itself (app/ui/sliders.py)
    typed_slider(
        app,
        "batch size",
        "batch size",
        batch_slider(c.batch_size, app.session.trainer),
        f"{c.batch_size}",
        whole("batch size"),
        lambda size: app.apply_hot("batch size", batch_size=size),
    )
    typed_slider(
        app,
        "learning rate",
        "learning rate",
        _lr_slider(c.lr),
        f"{c.lr:.6g}",
        real("learning rate"),
        lambda lr: app.apply_hot("learning rate", lr=lr),
    )
    changed, lr = imgui.input_double("exact lr", c.lr, 0.0, 0.0, "%.6g", imgui.InputTextFlags_.enter_returns_true)
    app.remember("exact lr", "exact lr")
    if changed:
        app.apply_hot("exact lr", lr=lr)
    field_error(app, "exact lr")
    draw_field(app, "optimizer", c, lambda optimizer: app.apply_hot("optimizer", optimizer=optimizer))
    for hyper in OPTIMIZERS[app.config.optimizer].hypers:
        draw_hyper(app, hyper)
    _regularization(app)
    imgui.pop_item_width()


def _regularization(app) -> None:
    """L1 or L2 of the weights, in the loss, at a rate that may change at any step: one row."""
    spacing = imgui.get_style().item_spacing.x
    width = (imgui.calc_item_width() - spacing) / 2
    imgui.set_next_item_width(width)
    draw_field(
        app,
        "regularization",
        app.config,
        lambda chosen: app.apply_hot("regularization", regularization=chosen),
        "##regularization",
    )
    app.remember("regularization")
    if imgui.is_item_hovered():
        imgui.set_tooltip(
            "added to the loss: rate * sum |w| (L1) or rate * sum w²/2 (L2) over the weights, not the\n"
            "biases; its gradient joins the data's before the optimizer (so Adam scales it too;\n"
            "AdamW's weight decay is the decoupled kind)"
        )
    imgui.same_line()
    imgui.begin_disabled(app.config.regularization == "none")
    imgui.set_next_item_width(width)
    flags = imgui.InputTextFlags_.enter_returns_true
    changed, rate = imgui.input_double("regularization", app.config.reg_rate, 0.0, 0.0, "%.6g", flags)
    app.remember("reg rate")
    if imgui.is_item_hovered(imgui.HoveredFlags_.allow_when_disabled):
        imgui.set_tooltip("the regularization rate (Enter applies it)")
    imgui.end_disabled()
    if changed:
        app.apply_hot("reg rate", reg_rate=rate)
    field_error(app, "reg rate")


_DRAWN: dict[str, str] = {}  # the figures' rows of the frame, label -> value (app.figure_rows)


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
    # The same rows paused as running: the panel is as tall as its rows (app/ui/panels/table.py),
    # and Space would otherwise move the Network panel below it by two rows
    _row("samples / s", _rate(app.frames.samples_per_second(), t.batch_size) if app.running else "paused")
    _row("training", s.training if app.running else "paused")
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
    else:
        _row("GPU", "no timestamp queries here", MUTED)
    imgui.end_table()
    app.remember("figures")
