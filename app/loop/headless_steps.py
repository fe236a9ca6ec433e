"""Headless training: whole steps now, a submit at a time, sized to about CHUNK_SECONDS of work and
ending at the next evaluation, which runs behind the steps under the same wait. A mixin of Session
(app/loop/session.py), whose state it uses: the gpu, trainer, guard, divergence, eval_every, its
step rate, take_losses, and record_evaluation, take_recorded_evaluation, drop_recorded_evaluation."""

from __future__ import annotations

import time

import numpy as np

from ..train.loss_ring import LOSS_HISTORY
from ..train.trainer import SUBMIT_STEPS

CHUNK_SECONDS = 0.25  # headless: whole steps between loss reads, enough to hide launch cost
FIRST_SUBMIT_STEPS = 4  # a chunk's first submit (submit_sizes)


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
        sizes = submit_sizes(count)
        # Several command buffers, the GPU running one while the CPU records the next: at small
        # batches recording a step costs about half what running it does.
        for index, size in enumerate(sizes):
            last = index == len(sizes) - 1
            with self.gpu.submit(wait=last) as encoder:
                if index == 0:
                    self.guard.record_snapshot(encoder)
                self.trainer.record_steps(encoder, size)
                if last:
                    steps = range(first, self.trainer.step)
                    self.trainer.losses.record_readback(encoder, steps)
                    evaluates = self.trainer.step % self.eval_every == 0
                    if evaluates:  # behind the steps, under the same wait
                        self.record_evaluation(encoder)
        self._step_rate.observe(time.perf_counter() - start, count)
        losses = self.take_losses(steps, self.trainer.losses.read())
        if evaluates and self.divergence is None:
            self.take_recorded_evaluation()
        elif evaluates:  # it evaluated a network the guard has put back
            self.drop_recorded_evaluation()
        return losses


def submit_sizes(count: int) -> list[int]:
    """The steps of each submit of a chunk of `count`: FIRST_SUBMIT_STEPS, then twice as many each
    time up to SUBMIT_STEPS. The GPU, idle since the last chunk's wait, starts after a few steps
    are recorded, and the CPU, recording faster than the GPU runs them, stays ahead."""
    sizes, size = [], FIRST_SUBMIT_STEPS
    while count > 0:
        sizes.append(min(size, count))
        count -= sizes[-1]
        size = min(2 * size, SUBMIT_STEPS)
    return sizes
