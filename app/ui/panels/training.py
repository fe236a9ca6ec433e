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
    if imgui.is_key_pressed(imgui.Key.s, False):
        app.step_once()
    if imgui.is_key_pressed(imgui.Key.r, False):
        app.reset()


def draw(app) -> None:
    if app.session.divergence is not None:
        _divergence(app)
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
        app.step_once()
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
    s, session = app.stats, app.session
    t = session.trainer
    if not imgui.begin_table("figures", 2, imgui.TableFlags_.sizing_stretch_prop):
        return
    _row("step", f"{t.step:,}")
    _row("samples seen", f"{t.samples_seen:,}")
    _row("train loss", _figure(session.train_loss, ".4g"))
    _row("eval loss", _figure(session.eval_loss, ".4g") + f"  ({session.grid}x{session.grid} grid)")
    if not app.running:
        _row("samples / s", "paused")
    else:
        rate = session.samples_per_second()
        _row("samples / s", f"{rate / 1e6:.2f} M" if rate >= 1e4 else f"{rate:,.0f}")
        _row("training", s.training)
    _row("frame", f"{s.frame_ms:.1f} ms ({1000 / s.frame_ms:.0f} fps)" if s.frame_ms > 0 else "-")
    _row("frame work", f"{s.work_ms:.1f} ms")
    for part in ("training", "heatmaps", "ui"):
        if part in s.gpu_ms:  # only what the device's timestamp queries measured
            _row(f"GPU {part}", f"{s.gpu_ms[part]:.2f} ms")
    imgui.end_table()
    if not s.gpu_ms:
        imgui.text_colored(MUTED, "GPU times: no timestamp queries on this device")


def _divergence(app) -> None:
    """Where the user looks first: what happened, what was kept, and the ways on."""
    d = app.session.divergence
    imgui.push_text_wrap_pos(0.0)
    imgui.text_colored(BAD, f"The loss became non-finite at step {d.step:,} (learning rate {d.lr:.3g}).")
    imgui.text_colored(MUTED, f"Training is paused on the last network with a finite loss (step {d.restored_step:,}).")
    imgui.pop_text_wrap_pos()
    full = imgui.ImVec2(imgui.get_content_region_avail().x, 0)
    if imgui.button(f"Resume with lr {d.lr / 10:.3g} (optimizer state reset)", full):
        app.resume(0.1)
    app.remember("resume lr/10")
    stable = app.session.stable_step
    if stable is not None and stable < d.restored_step:
        config = app.session.restorable_config()
        if imgui.button(f"Back to step {stable:,} ({config.optimizer}, lr {config.lr:.3g})", full):
            app.go_back_to_stable()
        app.remember("back to stable")
    imgui.separator()
