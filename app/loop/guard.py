"""The divergence guard: a non-finite loss puts back the last network whose loss was finite.

It keeps the two latest snapshots, taken at step boundaries before each batch of steps. Training
is deterministic, so the last finite network is rebuilt exactly by restoring a snapshot from
before it and replaying the steps in between, with the settings they ran with."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import slangpy as spy

from ..train.trainer import Snapshot, Trainer


@dataclass(frozen=True)
class Divergence:
    step: int  # 1-based: the first step whose training loss was not finite
    restored_step: int  # steps taken by the network that was put back
    lr: float  # the learning rate it diverged with


class DivergenceGuard:
    def __init__(self, trainer: Trainer):
        self.trainer = trainer
        self._buffers = [trainer.new_snapshot(), trainer.new_snapshot()]
        self.latest: Snapshot | None = None
        self.previous: Snapshot | None = None

    def record_snapshot(self, encoder: spy.CommandEncoder) -> None:
        """Records a snapshot of the state now (a step boundary) into the older buffer."""
        target = self._buffers[1] if self.latest is self._buffers[0] else self._buffers[0]
        self.trainer.record_snapshot(encoder, target)
        self.previous, self.latest = self.latest, target

    def check(self, steps: range, losses: np.ndarray) -> tuple[np.ndarray, Divergence | None]:
        """Takes the losses of `steps` (recorded after the latest snapshot). On a non-finite one
        it restores the last network with a finite loss and returns the finite losses before it
        and what happened."""
        bad = np.flatnonzero(~np.isfinite(losses))
        if bad.size == 0:
            return losses, None
        # The loss of step t is measured on the network after t updates: the last network with a
        # finite loss is the one after t - 1 updates.
        diverged = steps.start + int(bad[0])
        last_good = max(diverged - 1, 0)
        origin = self.latest
        if last_good < origin.step and self.previous is not None:
            origin = self.previous
        lr = self.trainer.config.lr
        self._restore(origin, max(last_good, origin.step))
        return losses[: bad[0]], Divergence(step=diverged + 1, restored_step=self.trainer.step, lr=lr)

    def _restore(self, origin: Snapshot, target_step: int) -> None:
        trainer, current = self.trainer, self.trainer.config
        trainer.apply(origin.config)  # replay with the settings those steps ran with
        trainer.restore(origin)
        if target_step > origin.step:
            trainer.train(target_step - origin.step)
        trainer.apply(current)
        self.latest = self.previous = None  # both may hold states after the one put back
