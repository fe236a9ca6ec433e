"""The Race panel (Race > Race networks): its controls (how the device is shared, the heatmaps'
output, a field to add a racer), the table of racers (each in its own colour: its variant,
editable, steps, metric, cost, state, and its buttons), then the racers' curves on one plot and
a row of learned and |error| heatmaps per racer (app/ui/panels/race_plots.py)."""

from __future__ import annotations

import math

from imgui_bundle import imgui

from ...loop.race import MAX_RACERS, Racer
from ..race_state import RaceState
from ..style import BAD, GOOD, MUTED, WARN, em, fit_text
from .loss_colours import OUTPUTS
from .race_plots import draw_curves, draw_heatmap_rows

RACER_COLOURS = OUTPUTS  # eight colours told apart on the loss plot (app/ui/panels/loss_colours.py)
TITLE = "Race"
MODES = (("steps", "equal steps"), ("time", "equal GPU time"))


def colour(race: RaceState, racer: Racer) -> imgui.ImVec4:
    return RACER_COLOURS[race.racers.index(racer) % len(RACER_COLOURS)]


def draw_window(app) -> None:
    """The Race panel as a window of its own, over the others, while a race is open."""
    race = app.race
    if race is None:
        return
    viewport = imgui.get_main_viewport()
    imgui.set_next_window_pos(
        imgui.ImVec2(viewport.work_pos.x + viewport.work_size.x * 0.2 - em(1), viewport.work_pos.y + em(1)),
        imgui.Cond_.first_use_ever,
    )
    imgui.set_next_window_size(
        imgui.ImVec2(viewport.work_size.x * 0.78, viewport.work_size.y * 0.9), imgui.Cond_.first_use_ever
    )
    shown, race.open = imgui.begin(TITLE, race.open, imgui.WindowFlags_.horizontal_scrollbar)
    app.remember_window(TITLE)
    if shown:
        draw(app, race)
    imgui.end()
    if not race.open:  # closing the panel ends the race; the main network trains on
        app.race = None


def draw(app, race: RaceState) -> None:
    _controls(race)
    _table(race)
    if race.message:
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(BAD, race.message)
        imgui.pop_text_wrap_pos()
    if len(race.racers) < 2:
        imgui.text_colored(MUTED, "Add a second racer to start: the race trains once it has two.")
    if not race.racers:
        return
    height = imgui.get_content_region_avail().y
    draw_curves(app, race, colour, max(em(10), height * 0.45))
    draw_heatmap_rows(app, race, colour)


def _controls(race: RaceState) -> None:
    imgui.text_colored(MUTED, "share the device by")
    for mode, label in MODES:
        imgui.same_line()
        if imgui.radio_button(label, race.race.mode == mode):
            race.race.mode = mode
        race.app.remember(f"race mode {mode}")
        if imgui.is_item_hovered():
            imgui.set_tooltip(
                "every racer takes the same steps"
                if mode == "steps"
                else "every racer takes the same share of each frame's time: a cheaper network takes more steps"
            )
    outputs = race.race.base.output_dim
    if outputs > 1:
        imgui.same_line(0, em(1.5))
        imgui.set_next_item_width(em(6))
        changed, value = imgui.slider_int("output", race.output + 1, 1, outputs)
        if changed:
            race.output = value - 1
    imgui.set_next_item_width(em(22))
    entered, race.draft = imgui.input_text_with_hint(
        "##add racer", "e.g. hidden=32,32 lr=0.003", race.draft, imgui.InputTextFlags_.enter_returns_true
    )
    imgui.same_line()
    full = len(race.racers) >= MAX_RACERS
    imgui.begin_disabled(full)
    if (imgui.button("Add racer") or entered) and not full and race.add(race.draft):
        race.draft = ""
    race.app.remember("race add")
    imgui.end_disabled()
    if imgui.is_item_hovered(imgui.HoveredFlags_.allow_when_disabled):
        imgui.set_tooltip(
            "a variant of the main network's setup: config fields as field=value, e.g. hidden=64,64 lr=0.003\n"
            "empty: the setup itself. Each racer starts from its seed; the same seed and batch draw the same samples"
        )


# (title, width in em): fixed, so that a figure or a state that changes from frame to frame (the
# leader, say) never moves the buttons under the pointer
COLUMNS = (
    ("", 1.2),
    ("racer", 9.0),
    ("variant", 11.0),
    ("steps", 3.5),
    ("metric", 5.0),
    ("ms/step", 3.5),
    ("samples/s", 5.5),
    ("state", 8.0),
    ("", 14.0),
)


def _table(race: RaceState) -> None:
    if not race.racers:
        return
    flags = imgui.TableFlags_.borders_inner_h | imgui.TableFlags_.sizing_fixed_fit | imgui.TableFlags_.row_bg
    if not imgui.begin_table("racers", len(COLUMNS), flags):
        return
    for name, width in COLUMNS:
        title = race.race.metric.name if name == "metric" else name
        imgui.table_setup_column(title, imgui.TableColumnFlags_.width_fixed, em(width))
    imgui.table_headers_row()
    by_steps, by_time = race.race.leader("steps"), race.race.leader("time")
    for racer in list(race.racers):
        imgui.table_next_row()
        imgui.push_id(racer.name)
        _row(race, racer, racer is by_steps, racer is by_time)
        imgui.pop_id()
    imgui.end_table()


def _row(race: RaceState, racer: Racer, leads_steps: bool, leads_time: bool) -> None:
    imgui.table_next_column()
    imgui.color_button(
        "##colour", colour(race, racer), imgui.ColorEditFlags_.no_tooltip, imgui.ImVec2(em(0.9), em(0.9))
    )
    imgui.table_next_column()
    imgui.text(fit_text(racer.name, em(9.0)))
    if imgui.is_item_hovered():
        imgui.set_tooltip(racer.name)
    imgui.table_next_column()
    imgui.set_next_item_width(em(10.5))
    text = race.drafts.get(racer.name, racer.variant.text)
    entered, race.drafts[racer.name] = imgui.input_text_with_hint(
        "##variant", "(the setup itself)", text, imgui.InputTextFlags_.enter_returns_true
    )
    if imgui.is_item_hovered():
        imgui.set_tooltip(
            "Enter changes this racer: the rate and the optimizer's constants live,\nanother network afresh"
        )
    if entered:
        race.change(racer.name, race.drafts[racer.name])
    value = racer.value_at()
    for shown in (f"{racer.step:,}", "-" if math.isnan(value) else f"{value:.4g}"):
        imgui.table_next_column()
        imgui.text(shown)
    imgui.table_next_column()
    imgui.text("-" if math.isnan(racer.ms_per_step) else f"{racer.ms_per_step:.3g}")
    imgui.table_next_column()
    imgui.text("-" if math.isnan(racer.samples_per_second) else f"{racer.samples_per_second:,.0f}")
    imgui.table_next_column()
    _state(racer, leads_steps, leads_time)
    imgui.table_next_column()
    if imgui.small_button("Play" if racer.paused else "Pause"):
        race.toggle_pause(racer.name)
    race.app.remember(f"race pause {racer.name}")
    imgui.same_line()
    if imgui.small_button("Remove"):
        race.remove(racer.name)
    race.app.remember(f"race remove {racer.name}")
    imgui.same_line()
    if imgui.small_button("Keep this one"):
        race.keep(racer.name)
    race.app.remember(f"race keep {racer.name}")
    if imgui.is_item_hovered():
        imgui.set_tooltip("make this racer the main network (weights, optimizer state, step, curve) and end the race")


def diverged_text(racer: Racer) -> str:
    """A diverged racer's state, in its steps column's terms: that column counts updates, and the
    racer stands on the last network with a finite loss, the step before the one whose update
    made the loss non-finite. Divergence.step, the first step whose batch loss was not finite, is
    measured before that step's update: "diverged at step 8" stood beside "steps 6"."""
    return f"diverged at step {racer.diverged_at - 1:,}"


def _state(racer: Racer, leads_steps: bool, leads_time: bool) -> None:
    if racer.diverged_at is not None:
        imgui.text_colored(BAD, diverged_text(racer))
        if imgui.is_item_hovered():
            imgui.set_tooltip(
                f"step {racer.diverged_at - 1:,}'s update made the loss non-finite (first seen in the batch of step "
                f"{racer.diverged_at:,});\nthe racer stands on the last network with a finite loss, step {racer.step:,}"
            )
        return
    lead = [what for what, leads in (("steps", leads_steps), ("time", leads_time)) if leads]
    if lead:
        imgui.text_colored(GOOD, f"leads ({', '.join(lead)})")
        if imgui.is_item_hovered():
            imgui.set_tooltip("the best " + "metric at equal " + " and at equal ".join(lead))
    elif racer.paused:
        imgui.text_colored(WARN, "paused")
    else:
        imgui.text_colored(MUTED, "training")
