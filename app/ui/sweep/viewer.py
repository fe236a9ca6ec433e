"""The sweep viewer's state and actions: the folder open in it, read again as a running sweep's trials
finish, the trial selected (one selection for the table, the scatter and the parallel coordinates),
the table's order, and a selected trial's network loaded or its config trained again. Neither
action loses the user's network to a bad trial: its files are checked first, and a failure is an
in-app message."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...config.config import Config
from ...errors import UserError, counted, first_line
from ...files.network_io import load_network
from ...files.sweep_folder import NoTrialYet, SweepFolder, Trial, read_sweep
from ...loop.session import Session
from . import axes

ERROR_SECONDS = 10.0  # as File's failures: long enough to read a path
POLL_S = 1.0  # a folder's tables are looked at (one stat each) at most this often for new trials
WATCHED = ("trials.csv", "best.json")  # what a sweep rewrites as each trial finishes


@dataclass(frozen=True)
class Shown:
    """A folder as the viewer shows it: its axes worked out once, when it was opened."""

    folder: SweepFolder
    parameters: tuple[axes.Axis, ...]  # one a searched field, in trials.csv's order
    metric: axes.Axis

    @classmethod
    def of(cls, folder: SweepFolder) -> Shown:
        parameters = tuple(axes.parameter_axis(field, folder.trials) for field in folder.searched)
        return cls(folder, parameters, axes.metric_axis(folder))

    def goodness(self, trial: Trial) -> float | None:
        return axes.goodness(self.folder, self.metric, trial)


def _signature(folder: Path) -> tuple:
    """What changes when the sweep replaces a watched file (it renames a new one over it)."""
    seen = []
    for name in WATCHED:
        try:
            stat = os.stat(folder / name)
        except OSError:
            seen.append(None)
        else:
            seen.append((stat.st_ino, stat.st_mtime_ns, stat.st_size))
    return tuple(seen)


def _why_waiting(folder: Path, error: UserError) -> str:
    """What an open sweep with nothing to show yet says besides: nothing for a sweep about to
    start or whose first trial is running, else why its folder does not read."""
    return "" if isinstance(error, NoTrialYet) or not folder.exists() else first_line(error)


class SweepViewer:
    def __init__(self, app):
        self.app = app
        self.path: Path | None = None  # the folder open: shown, or waiting for its first trial
        self.shown: Shown | None = None
        self.waiting = ""  # while nothing is shown: why (no trial has finished yet)
        self._seen: tuple | None = None  # the watched files' signatures when last read
        self._polled_at = float("-inf")
        self.visible = False  # the window is open
        self.selected: str | None = None  # a trial id
        self.order: list[int] = []  # the table's rows: indices into the folder's trials
        self.sorted_by: tuple[str, bool] = ("trial", False)  # (column, descending)
        self.scatter_parameter = 0  # the scatter's x: an index into shown.parameters

    @property
    def folder(self) -> SweepFolder | None:
        return self.shown.folder if self.shown is not None else None

    def open_folder(self, path: str, wait: bool = False) -> str | None:
        """Opens the sweep folder at `path` in the viewer, its best trial selected: None when
        done, or why not (also shown as the notice). A folder that fails keeps what was shown;
        a sweep whose first trial has not finished (or any folder, with `wait`: a sweep about to
        start there) opens empty, and poll() shows its trials as they finish."""
        folder = Path(path).expanduser()
        seen = _signature(folder)  # before reading: a change while it reads is read at the next poll
        try:
            shown = Shown.of(read_sweep(folder))
        except UserError as error:
            if not (wait or isinstance(error, NoTrialYet)):
                return self._failed(f"sweep not opened: {first_line(error)}")
            self.path, self.shown, self.waiting, self._seen = folder, None, _why_waiting(folder, error), seen
            self.selected, self.visible = None, True
            self.app.say(f"sweep opened: {folder}; its trials appear as they finish")
            return None
        self.path, self.shown, self.waiting, self._seen, self.visible = folder, shown, "", seen, True
        self.selected = shown.folder.best_trial
        self.scatter_parameter = 0
        self.sort("trial", False)
        trials = shown.folder.trials
        best = shown.folder.best_trial or "none complete yet"
        self.app.say(f"sweep opened: {counted(len(trials), 'trial')}, best {best}")
        return None

    def poll(self, now: float | None = None) -> bool:
        """Reads the folder again where a watched file changed since it was read (looked at once a
        POLL_S): a running sweep's new trials join the table, the scatter and the parallel
        coordinates, the selection, the order and the scatter's parameter kept. A folder that does
        not read (a file half-written by a writer that does not replace it whole) keeps what is
        shown, and is read again when it changes. True where the view changed."""
        now = time.monotonic() if now is None else now
        if self.path is None or now - self._polled_at < POLL_S:
            return False
        self._polled_at = now
        seen = _signature(self.path)
        if seen == self._seen:
            return False
        self._seen = seen
        try:
            shown = Shown.of(read_sweep(self.path))
        except UserError as error:
            if self.shown is None:
                self.waiting = _why_waiting(self.path, error)
            return False
        self.shown, self.waiting = shown, ""
        if self.selected not in {trial.id for trial in shown.folder.trials}:
            self.selected = shown.folder.best_trial  # none chosen yet: the best, as when a sweep opens
        if self.scatter_parameter >= len(shown.parameters):
            self.scatter_parameter = 0
        self.sort(*self.sorted_by)
        return True

    def sort(self, column: str, descending: bool) -> None:
        self.sorted_by = (column, descending)
        self.order = axes.sorted_trials(self.folder, column, descending)

    def select(self, trial_id: str) -> None:
        self.selected = trial_id

    @property
    def selected_trial(self) -> Trial | None:
        if self.folder is None or self.selected is None:
            return None
        return self.folder.trial(self.selected)

    def _failed(self, message: str) -> str:
        self.app.say(message, ERROR_SECONDS)
        return message

    # ---- what a selected trial offers -----------------------------------------------------
    def load_network(self) -> str | None:
        """The selected trial's network.json into the session, as --load-network starts from one:
        its structure and truth, the other settings the session's, its weights at step 0, a new
        run on the loss plot. None when done (or its network is being built), or why not."""
        trial = self.selected_trial
        path = self.folder.network_path(trial.id)
        if not path.is_file():
            return self._failed(f"trial {trial.id} has no network.json ({trial.state}): the network is unchanged")
        try:
            config, parameters = load_network(str(path), self.app.config)
            self._swap_in(config, lambda session: session.trainer.set_parameters(parameters), trial, "network loaded")
        except UserError as error:
            return self._failed(f"trial {trial.id}'s network not loaded: {first_line(error)}")
        return None

    def train_again(self) -> str | None:
        """The selected trial's config (its summary.json) and seed trained live from step 0 as a
        new run; the run before stays on the loss plot, as after a reset. None when done (or its
        network is being built), or why not."""
        trial = self.selected_trial
        try:
            config = self.folder.trial_config(trial.id)
            self._swap_in(config, lambda session: None, trial, f"trained again from seed {config.seed}")
        except UserError as error:
            return self._failed(f"trial {trial.id} not trained again: {first_line(error)}")
        self.app.running = True
        return None

    def _swap_in(self, config: Config, start: Callable[[Session], None], trial: Trial, done: str) -> None:
        """A new run of `config` from step 0, fresh from its seed, then `start(session)` (weights
        put in): at once where its compiled network is the current one, else once it is built in
        the background, as Apply builds one. A UserError (a truth not finite) changes nothing.
        The window then makes way for the panels, to watch it train; View > Sweep window brings
        it back."""
        session, done = self.app.session, f"trial {trial.id}: {done}"
        if session.gpu.plan(config) != session.trainer.plan:

            def built(rebuilt: Session) -> None:  # a rebuilt network starts from config.seed at step 0
                start(rebuilt)
                self.app.say(done)

            session.start_rebuild(config, then=built)
            done = f"building trial {trial.id}'s network, {session.gpu.plan(config).title}..."
        else:
            session.cancel_rebuild()
            session.apply(config)
            self.app.reset(config.seed)
            start(session)
            self.app.on_new_network()
        self.visible = False
        self.app.say(f"{done} (View > Sweep window shows the sweep again)", ERROR_SECONDS)
