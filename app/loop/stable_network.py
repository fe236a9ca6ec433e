"""The last stable network of a session, to go back to after a divergence: the first change of
settings after STABLE_STEPS finite steps with unchanged ones keeps a snapshot of the network
(with the settings it trained with) before the change takes effect. app/loop/session.py owns one per
trainer and tells it when settings change and when a divergence makes it worth going back."""

from __future__ import annotations

from ..train.trainer import Snapshot, Trainer

STABLE_STEPS = 50  # finite steps with unchanged settings: a network worth going back to


class StableNetwork:
    def __init__(self, trainer: Trainer):
        self.trainer = trainer
        self._snapshot = trainer.new_snapshot()
        self._snapshot.config = None  # none taken yet
        self.settings_changed()

    def settings_changed(self) -> None:
        """The trainer's settings are new from its current step on (a change, a new run)."""
        self._since = (self.trainer.config, self.trainer.step)

    def before_change(self, diverged: bool) -> None:
        """Call before a change of settings: keeps the network if it has trained stably since
        the last change. Also in a step recorded in pieces, until its first parameter update:
        the state is the step's start until then."""
        config, since = self._since
        stable = not diverged and config is self.trainer.config and self.trainer.step - since >= STABLE_STEPS
        if stable and not self.trainer.progress.updating:
            self.trainer.record_snapshot_now(self._snapshot)

    def forget(self) -> None:
        self._snapshot.config = None

    @property
    def kept(self) -> Snapshot | None:
        """The network kept, with the settings it trained with (its .config), if one was."""
        return self._snapshot if self._snapshot.config is not None else None

    def put_back(self) -> None:
        """The trainer back to the network kept, with its settings."""
        self.trainer.apply(self._snapshot.config)
        self.trainer.restore(self._snapshot)
        self.settings_changed()
