"""The window's race (Race menu, app/ui/race_state.py, app/ui/panels/race.py): racers that
train as they would alone, bit for bit; a diverged racer that stops alone; Keep this one, which
makes a racer the main network with its weights and optimizer state; the panel's buttons, each
checked by the state it set; and a bad variant refused in the panel, changing nothing."""

from __future__ import annotations

import numpy as np
import pytest

from app.loop.race_frames import RaceFrames
from app.train.trainer import Trainer
from app.ui.panels import race as race_panel
from app.ui.race_state import open_race

SMALL = dict(hidden=[8], batch_size=256)


@pytest.fixture
def ui(make_session):
    from app.ui.offscreen import OffscreenApp

    app = OffscreenApp(make_session(**SMALL), 1400, 900)
    app.frame(2)
    open_race(app.app)
    yield app
    app.close()


def _centre(ui, name: str) -> tuple[float, float]:
    x0, y0, x1, y1 = ui.app.rects[name]
    return (x0 + x1) / 2, (y0 + y1) / 2


def test_racers_train_to_the_weights_they_reach_alone(ui, gpu):
    race = ui.app.race
    assert race.add("hidden=8,8 lr=0.003")
    main_step = ui.session.trainer.step
    assert ui.frames_until(lambda: min(r.step for r in race.racers) >= 30, 120), "the racers did not train"
    ui.app.running = False
    ui.frame()
    assert ui.session.trainer.step == main_step  # the main network waits while the race has the frames
    for racer in race.racers:
        alone = Trainer(gpu, racer.session.config)
        alone.train(racer.step)
        assert alone.parameters().tobytes() == racer.session.trainer.parameters().tobytes(), racer.name
    assert race.racers[0].session.config.hidden == [8] and race.racers[1].session.config.hidden == [8, 8]


def test_a_diverged_racer_stops_and_the_others_train_on(ui):
    race = ui.app.race
    assert race.add("lr=80 optimizer=sgd")
    wild = race.racers[1]
    assert ui.frames_until(lambda: wild.diverged_at is not None and race.racers[0].step > wild.step + 20, 120)
    stopped_at = wild.step
    ui.frame(3)
    assert wild.step == stopped_at and race.racers[0].step > stopped_at + 20
    assert np.all(np.isfinite(wild.session.trainer.parameters()))  # its last finite network, kept
    assert race.race.leader("steps") is race.racers[0]
    # Issue 42: "steps 6" beside "diverged at step 8" (the step whose batch loss was not finite,
    # measured before its update). The state names the step whose update did it, after the kept one.
    assert race_panel.diverged_text(wild) == f"diverged at step {wild.step + 1:,}"
    # its curve ends on its kept network's loss, taken by the step after it (whose update diverged)
    assert wild.session.history.current.train.last_x == wild.step + 1


def _paused_with_a_racer(ui, variant: str, steps: int):
    """The race with a second racer of `variant`, both past `steps`, then the window paused."""
    race = ui.app.race
    assert race.add(variant)
    assert ui.frames_until(lambda: min(r.step for r in race.racers) >= steps, 120)
    ui.app.running = False
    ui.frame(2, force=True)
    return race.racers[1]


def test_keep_this_one_makes_the_racer_the_main_network(ui):
    racer = _paused_with_a_racer(ui, "lr=0.02 optimizer=sgd", 10)
    kept = racer.session.trainer
    params, state, step = kept.parameters(), kept.optimizer_state_values(), kept.step
    ui.click(*_centre(ui, f"race keep {racer.name}"))
    main = ui.session.trainer
    assert ui.app.race is None
    assert main.parameters().tobytes() == params.tobytes()
    assert main.optimizer_state_values().tobytes() == state.tobytes()
    assert (main.step, main.config.lr, main.config.optimizer) == (step, 0.02, "sgd")
    ui.app.running = True
    ui.frames_until(lambda: ui.session.trainer.step > step, 60)
    assert ui.session.trainer.step > step  # it trains on from there, no restart


def test_keep_this_one_of_another_architecture_builds_it_then_puts_it_in(ui):
    racer = _paused_with_a_racer(ui, "hidden=12", 5)
    params = racer.session.trainer.parameters()
    ui.click(*_centre(ui, f"race keep {racer.name}"))
    assert ui.frames_until(lambda: ui.session.rebuild is None and ui.session.config.hidden == [12], 120)
    assert ui.session.trainer.parameters().tobytes() == params.tobytes()
    assert ui.session.trainer.step == racer.step


def test_the_panel_buttons_set_what_they_say(ui):
    race = ui.app.race
    assert race.add("lr=0.003")
    ui.frame(2, force=True)
    ui.click(*_centre(ui, "race mode time"))
    assert race.race.mode == "time"
    name = race.racers[1].name
    ui.click(*_centre(ui, f"race pause {name}"))
    assert race.racers[1].paused
    paused_at = race.racers[1].step
    assert ui.frames_until(lambda: race.racers[0].step > paused_at + 5, 60)
    assert race.racers[1].step == paused_at
    ui.frame(force=True)
    ui.click(*_centre(ui, f"race remove {name}"))
    assert [r.name for r in race.racers] == ["base"]


def test_a_bad_variant_is_a_message_and_changes_nothing(ui):
    race = ui.app.race
    before = [r.name for r in race.racers]
    for text in ("foo=1", "hidden=999", "targets=x", "lr"):
        assert not race.add(text)
        assert text.split("=")[0] in race.message or "field=value" in race.message
        assert [r.name for r in race.racers] == before
    assert not race.change("base", "lr=-1")
    assert race.racers[0].session.config.lr == ui.session.config.lr


def test_equal_time_gives_a_cheaper_racer_more_steps(ui):
    race = ui.app.race
    assert race.add("lr=0.003")
    frames = RaceFrames(race.race, 0.1)
    cheap, dear = race.racers
    cheap.train_seconds, cheap.samples = 0.1, 100 * 256  # 1 ms a step
    dear.train_seconds, dear.samples = 0.4, 100 * 256  # 4 ms a step
    race.race.mode = "steps"
    assert frames.steps_now() == {cheap.name: 20, dear.name: 20}  # 0.1 s / 5 ms for the pair
    race.race.mode = "time"
    assert frames.steps_now() == {cheap.name: 50, dear.name: 12}  # 50 ms each


def test_the_curves_legend_is_beside_the_plot_not_over_it(ui):
    """Issue 42: the race plot's legend lay over the curves, inside the axes' top-left corner."""
    _paused_with_a_racer(ui, "lr=0.03", 5)
    legend, axes = ui.app.rects["race legend"], ui.app.rects["race axes"]
    window = ui.app.windows[race_panel.TITLE]
    assert legend[0] >= axes[2], f"the legend {legend} starts right of the axes {axes}"
    assert legend[2] <= window[2], "and inside the Race window"
