"""Training panel: run controls, hot hyperparameters and live figures."""

from __future__ import annotations

import math
import random

from imgui_bundle import imgui

from app.config import OPTIMIZERS
from app.ui.style import BAD, MUTED, em

BATCH_SIZES = [2 ** k for k in range(4, 21)]
LR_RANGE = (1e-5, 1.0)


def shortcuts(app) -> None:
    """Space, S and R work anywhere except while typing into a field."""
    if imgui.get_io().want_text_input:
        return
    if imgui.is_key_pressed(imgui.Key.space, False):
        app.running = not app.running
    if imgui.is_key_pressed(imgui.Key.s, False) and not app.running:
        app.single_steps += 1
    if imgui.is_key_pressed(imgui.Key.r, False):
        app.reset()


def draw(app) -> None:
    _controls(app)
    imgui.separator()
    _hyperparameters(app)
    imgui.separator()
    _figures(app)
    if app.error:
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(BAD, app.error)
        imgui.pop_text_wrap_pos()


def _controls(app) -> None:
    width = (imgui.get_content_region_avail().x - 2 * imgui.get_style().item_spacing.x) / 3
    if imgui.button("Pause (Space)" if app.running else "Play (Space)", imgui.ImVec2(width * 2 + imgui.get_style().item_spacing.x, 0)):
        app.running = not app.running
    app.remember("pause")
    imgui.same_line()
    imgui.begin_disabled(app.running)
    if imgui.button("Step (S)", imgui.ImVec2(width, 0)):
        app.single_steps += 1
    imgui.end_disabled()
    half = (imgui.get_content_region_avail().x - imgui.get_style().item_spacing.x) / 2
    if imgui.button("Reset (R)", imgui.ImVec2(half, 0)):
        app.reset()
    if imgui.is_item_hovered():
        imgui.set_tooltip("fresh weights from the same seed")
    imgui.same_line()
    if imgui.button("New seed", imgui.ImVec2(half, 0)):
        app.reset(random.randrange(1, 2 ** 31))
    _, app.vsync = imgui.checkbox("vsync", app.vsync)


def _hyperparameters(app) -> None:
    c = app.config
    imgui.push_item_width(-em(7))
    changed, steps = imgui.slider_int("steps / frame", app.steps_per_frame, 1, 64)
    if changed:
        app.steps_per_frame = steps
    index = BATCH_SIZES.index(c.batch_size) if c.batch_size in BATCH_SIZES else -1
    changed, index = imgui.slider_int("batch size", max(index, 0), 0, len(BATCH_SIZES) - 1, str(c.batch_size))
    if changed:
        app.apply_hot(batch_size=BATCH_SIZES[index])
    changed, lr = imgui.slider_float("learning rate", c.lr, *LR_RANGE, "%.2e", imgui.SliderFlags_.logarithmic)
    if changed:
        app.apply_hot(lr=lr)
    changed, lr = imgui.input_float("exact lr", c.lr, 0.0, 0.0, "%.6g", imgui.InputTextFlags_.enter_returns_true)
    app.remember("exact lr")
    if changed:
        app.apply_hot(lr=lr)
    changed, index = imgui.combo("optimizer", OPTIMIZERS.index(c.optimizer), list(OPTIMIZERS))
    if changed:
        app.apply_hot(optimizer=OPTIMIZERS[index])
    flags = imgui.InputTextFlags_.enter_returns_true
    if c.optimizer == "adam":
        for name, label in (("beta1", "beta1"), ("beta2", "beta2"), ("epsilon", "epsilon")):
            changed, value = imgui.input_float(label, getattr(c, name), 0.0, 0.0, "%.6g", flags)
            if changed:
                app.apply_hot(**{name: value})
    else:
        changed, value = imgui.slider_float("momentum", c.beta1, 0.0, 0.99, "%.2f")
        if changed:
            app.apply_hot(beta1=value)
    imgui.pop_item_width()


def _row(label: str, value: str) -> None:
    imgui.table_next_row()
    imgui.table_next_column()
    imgui.text_colored(MUTED, label)
    imgui.table_next_column()
    imgui.text(value)


def _figure(value: float, fmt: str) -> str:
    return format(value, fmt) if math.isfinite(value) else "-"


def _figures(app) -> None:
    s, t = app.stats, app.trainer
    if not imgui.begin_table("figures", 2, imgui.TableFlags_.sizing_stretch_prop):
        return
    _row("step", f"{t.step:,}")
    _row("samples seen", f"{t.step * t.config.batch_size:,}")
    _row("train loss", _figure(s.train_loss, ".4g"))
    _row("eval loss", _figure(s.eval_loss, ".4g") + f"  ({app.heatmaps.grid}x{app.heatmaps.grid} grid)")
    if not app.running:
        _row("samples / s", "paused")
    else:
        _row("samples / s", f"{s.samples_per_s / 1e6:.2f} M" if s.samples_per_s >= 1e4 else f"{s.samples_per_s:,.0f}")
    _row("frame", f"{s.frame_ms:.1f} ms ({1000 / s.frame_ms:.0f} fps)" if s.frame_ms > 0 else "-")
    _row("frame work", f"{s.work_ms:.1f} ms")
    for part in ("training", "heatmaps", "ui"):
        if part in s.gpu_ms:  # only what the device's timestamp queries measured
            _row(f"GPU {part}", f"{s.gpu_ms[part]:.2f} ms")
    imgui.end_table()
    if not s.gpu_ms:
        imgui.text_colored(MUTED, "GPU times: no timestamp queries on this device")
