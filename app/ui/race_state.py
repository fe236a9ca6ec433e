"""The window's race (Race menu, Race panel): the racers, variants of the main network's setup that
train side by side while the main network waits, and what the panel changes (adding, removing,
pausing and changing racers, how the device is shared, keeping a racer as the main network). Every
change is checked first; a bad variant is a message in the panel and changes nothing."""

from __future__ import annotations

from ..config.variants import parse_variant, unique_name
from ..errors import UserError, first_line
from ..files import checkpoint
from ..loop.budget import FRAME_SECONDS
from ..loop.frame_driver import SOFTWARE_FRAME_SECONDS
from ..loop.race import MAX_RACERS, Race, Racer
from ..loop.race_frames import RaceFrames
from ..loop.session import Session

TRAINING_SHARE = 0.6  # of a frame: the racers' training; the rest draws the panel and heatmaps
NO_STEP_EVALUATION = 10**12  # racers are evaluated by time (RaceFrames), not every N steps


class RaceState:
    def __init__(self, app):
        self.app = app
        frame = SOFTWARE_FRAME_SECONDS if app.gpu.software else FRAME_SECONDS
        self.race = Race(app.gpu, app.session.config, heatmaps=True)
        self.frames = RaceFrames(self.race, TRAINING_SHARE * frame)
        self.draft = ""  # the panel's "add a racer" field
        self.drafts: dict[str, str] = {}  # each racer's variant as being edited
        self.message = ""  # the last refused change, shown in the panel
        self.output = 0  # the heatmaps' output
        self.by_time = False  # the plot's x axis: steps, or each racer's training seconds
        self.open = True

    @property
    def racers(self) -> list[Racer]:
        return self.race.racers

    def add(self, text: str) -> bool:
        """A racer from the variant `text` ("" is the setup itself); False with a message if refused."""
        if len(self.racers) >= MAX_RACERS:
            return self._refuse(f"a race has at most {MAX_RACERS} racers")
        try:
            variant = parse_variant(text)
            name = unique_name(variant, {r.name for r in self.racers})
            racer = self.race.add(name, variant)
        except UserError as error:
            return self._refuse(first_line(error))
        racer.session.eval_every = NO_STEP_EVALUATION
        self.drafts[name] = text
        self.message = ""
        return True

    def remove(self, name: str) -> None:
        self.race.remove(name)
        self.drafts.pop(name, None)

    def toggle_pause(self, name: str) -> None:
        racer = self.race.find(name)
        racer.paused = not racer.paused

    def change(self, name: str, text: str) -> bool:
        """The racer's variant becomes `text`: hot fields (the rate, the optimizer's constants,
        the batch) change live and its training goes on; another network starts afresh, from its
        seed, at step 0. False with a message if refused."""
        racer = self.race.find(name)
        try:
            variant = parse_variant(text)
            config = variant.apply(self.race.base)
        except UserError as error:
            return self._refuse(first_line(error))
        racer.variant = variant
        if self.app.gpu.plan(config) == racer.session.trainer.plan:
            racer.session.apply(config)
            racer.session.divergence = None  # a new rate is the way out of a divergence
        else:
            racer.session = Session(self.app.gpu, config, heatmaps=True)
            racer.session.eval_every = NO_STEP_EVALUATION
            racer.train_seconds, racer.samples, racer.marks = 0.0, 0, []
        self.message = ""
        return True

    def keep(self, name: str) -> None:
        """The racer becomes the main network: its weights, optimizer state, step and loss curve,
        training on from there (File > Open checkpoint's way in, with no file between). The race ends."""
        racer = self.race.find(name)
        saved = checkpoint.capture(racer.session)
        refused = self.app.files.put_in(saved, f"kept racer {name}: step {saved.step:,}", f"racer {name}'s network")
        if refused is None:  # else the race goes on, the racer in it: nothing is lost
            self.app.race = None

    def frame(self, running: bool) -> None:
        self.frames.frame(running and len(self.racers) >= 2)

    def _refuse(self, message: str) -> bool:
        self.message = message
        return False


def open_race(app) -> None:
    """Race > Race networks: the race open, a new one's first racer the main network's setup."""
    if app.race is None:
        app.race = RaceState(app)
        app.race.add("")
    app.race.open = True
