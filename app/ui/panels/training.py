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
from .training_figures import draw_figures

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
    """Space, S and R work anywhere except while typing into a field, or while the prompt to
    restore the last session waits (ImGui's modal does not hold keys back)."""
    if imgui.get_io().want_text_input or app.restore_offer is not None:
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
    draw_figures(app)


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
    _loss_weights(app)
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


# The derivative loss's terms (app/model/derivative_loss.py): (field, Config field, what it adds)
LOSS_WEIGHTS = (
    (
        "gradient weight",
        "grad_weight",
        "Sobolev training: adds weight * |grad f - grad truth|² to each sample's loss,\n"
        "the network's input gradient against the truth's (formulas, a Slang file, an image, a shape)",
    ),
    (
        "eikonal weight",
        "eikonal",
        "adds weight * (|grad f| - 1)² to each sample's loss: a signed distance's gradient\n"
        "has length 1 everywhere, so this keeps a distance field's levels evenly spaced",
    ),
    (
        "normal weight",
        "normal_weight",
        "draws a quarter of each batch on the shape's boundary and adds weight * |grad f - n|²\n"
        "there, n the boundary's outward normal (a built-in, an SVG, a CSV of x,y,nx,ny)",
    ),
)
LOSS_WEIGHTS_LABEL = "grad/eik/normal"  # drawn after the last field, about as wide as "regularization"


def _loss_weights(app) -> None:
    """The derivative terms' weights, 0-100, Enter applies, side by side on one row labelled
    LOSS_WEIGHTS_LABEL (the Training panel shows every row at 1280 x 800, the gradient check's result
    included; each field's tooltip names its term): a change between
    weights above 0 is live; from 0 or to 0 it picks another compiled step, and the network is
    rebuilt from its weights and step while it trains on. Shown as the network being built will
    have them."""
    building = app.session.building
    flags = imgui.InputTextFlags_.enter_returns_true
    count = len(LOSS_WEIGHTS)
    width = (imgui.calc_item_width() - (count - 1) * imgui.get_style().item_spacing.x) / count
    for index, (label, name, effect) in enumerate(LOSS_WEIGHTS):
        if index:
            imgui.same_line()
        imgui.set_next_item_width(width)
        last = index == count - 1
        shown = LOSS_WEIGHTS_LABEL if last else f"##{label}"
        changed, weight = imgui.input_double(shown, getattr(building, name), 0.0, 0.0, "%.6g", flags)
        app.remember(label, shown if last else "")  # the field's frame, without the label drawn after it
        if imgui.is_item_hovered():
            imgui.set_tooltip(f"{label}: {effect}\n0 turns the term off; turning it on or off rebuilds (Enter applies)")
        if changed:
            app.change_loss_weight(label, **{name: weight})
    for label, _, _ in LOSS_WEIGHTS:
        field_error(app, label)
