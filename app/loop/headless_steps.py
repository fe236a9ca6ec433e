"""Headless training: whole steps now, a submit at a time, sized to about CHUNK_SECONDS of work and
ending at the next evaluation. A mixin of Session (app/loop/session.py), whose state it uses: the
gpu, trainer, guard, divergence, eval_every, its step rate, take_losses and evaluate."""

from __future__ import annotations

import time

import numpy as np

from ..train.loss_ring import LOSS_HISTORY
from ..train.step_recording import SUBMIT_STEPS

CHUNK_SECONDS = 0.25  # headless: whole steps between loss reads, enough to hide launch cost


class HeadlessSteps:
    def chunk_size(self, until: int) -> int:
        """Whole steps for the next submit: about CHUNK_SECONDS of work, ending at the next
        evaluation and at step `until`."""
        rate = self._step_rate.value
        by_time = int(CHUNK_SECONDS / rate) if rate else 1
        to_eval = self.eval_every - self.trainer.step % self.eval_every
        return max(1, min(by_time, LOSS_HISTORY, until - self.trainer.step, to_eval))

    def advance(self, count: int) -> np.ndarray:
        """Runs `count` whole steps now; returns the losses of those that count (on a divergence,
        the finite ones before it), and evaluates when an eval_every boundary is reached. After a
        divergence nothing runs until `resume`."""
        if self.divergence is not None or count <= 0:
            return np.zeros(0, np.float32)
        start = time.perf_counter()
        first = self.trainer.step
        # Several command buffers, the GPU running one while the CPU records the next: at small
        # batches recording a step costs about half what running it does.
        for chunk_start in range(0, count, SUBMIT_STEPS):
            last = chunk_start + SUBMIT_STEPS >= count
            with self.gpu.submit(wait=last) as encoder:
                if chunk_start == 0:
                    self.guard.record_snapshot(encoder)
                self.trainer.record_steps(encoder, min(SUBMIT_STEPS, count - chunk_start))
                if last:
                    steps = range(first, self.trainer.step)
                    self.trainer.losses.record_readback(encoder, steps)
        self._step_rate.observe(time.perf_counter() - start, count)
        losses = self.take_losses(steps, self.trainer.losses.read())
        if self.divergence is None and self.trainer.step % self.eval_every == 0:
            self.evaluate()
        return losses
