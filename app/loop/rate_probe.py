"""After a divergence: a learning rate to resume with that is known to work, found by replaying
candidate rates from the network put back (a tenth of the rate that diverged is often not enough).
How the rates are tried: docs/architecture.md, 'Divergence'."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..train.trainer import Trainer

PROBE_STEPS = 50  # steps each candidate rate trains
MIN_PROBE_STEPS = 10  # fewer than this says too little: no replay
PROBE_SECONDS = 3.0  # about this long at most, over all candidates
CHUNK = 10  # steps between checks: a rate that overflows costs about one chunk
CANDIDATES = 6  # a tenth, a hundredth, ... of the rate that diverged
GROWTH = 1.5  # a well-fit network's batch loss wanders: a rate may end a little above its start


@dataclass
class RateAdvice:
    lr: float
    checked: bool  # replayed and worked (else a fallback)
    reason: str  # one line for the panel
    tried: list[tuple[float, str]] = field(default_factory=list)  # (rate, what it did), in order
    steps: int = 0  # how many steps the rate was replayed for
    from_stable: bool = False  # resume from the last stable network (go back to it first)


def candidates(diverged_lr: float, stable_lr: float | None) -> list[float]:
    """Powers of ten below the rate that diverged, and the last stable one, largest first."""
    rates = {float(f"{diverged_lr * 10.0**-k:.3g}") for k in range(1, CANDIDATES + 1)}
    if stable_lr is not None and stable_lr < diverged_lr:
        rates.add(stable_lr)
    return sorted(rates, reverse=True)


def advise(session, step_seconds: float) -> RateAdvice:
    """A rate to resume `session` with after its divergence; `step_seconds`: what one step costs
    here (0 if unknown). Tried from the network put back, then, if none trains from there (a
    network already thrown far out), from the last stable network, which Resume then goes back to."""
    trainer, diverged = session.trainer, session.divergence.lr
    stable = session.stable.kept
    stable_lr = stable.config.lr if stable is not None else None
    rates = candidates(diverged, stable_lr)
    steps = PROBE_STEPS
    if step_seconds > 0:
        steps = min(PROBE_STEPS, int(PROBE_SECONDS / ((len(rates) + 2) * step_seconds)))
    if steps < MIN_PROBE_STEPS:
        fallback = stable_lr if stable_lr is not None and stable_lr < diverged else diverged / 10
        why = "the last rate that trained stably" if fallback == stable_lr else "a tenth of the rate that diverged"
        return RateAdvice(fallback, False, f"{why}; not replayed (a step takes {step_seconds:.2g} s here)")
    config, here = trainer.config, trainer.snapshot()
    tried: list[tuple[float, str]] = []
    try:
        for lr in rates:
            tried.append((lr, _try(trainer, config, lr, here, steps)))
            if tried[-1][1] == "trained":
                return RateAdvice(lr, True, f"trained {steps} steps from here without diverging", tried, steps)
        for lr in rates if stable is not None else ():
            outcome = _try(trainer, stable.config, lr, stable, steps)
            if outcome == "trained":
                reason = (
                    f"every rate overflowed from the network put back; from step {stable.step:,}, "
                    f"the last stable one, this rate trained {steps} steps"
                )
                return RateAdvice(lr, True, reason, tried + [(lr, f"from step {stable.step:,}: trained")], steps, True)
    finally:
        trainer.apply(config)
        trainer.restore(here)
    lowest = rates[-1]
    return RateAdvice(lowest, False, f"no rate down to {lowest:.3g} trained {steps} steps: try Reset", tried)


def _try(trainer: Trainer, base, lr: float, snapshot, steps: int) -> str:
    """Trains `steps` steps from `snapshot` at `lr` as resuming would (Session.go_back_to_stable
    and Session.resume: the snapshot's settings, then the new rate with fresh optimizer moments)."""
    trainer.apply(base)
    trainer.restore(snapshot)
    trainer.apply(base.replace(lr=lr))
    if lr != base.lr:
        trainer.reset_optimizer()
    chunks = []
    for first in range(0, steps, CHUNK):
        chunks.append(trainer.train(min(CHUNK, steps - first)).astype(np.float64))
        bad = np.flatnonzero(~np.isfinite(chunks[-1]))
        if bad.size:
            return f"diverged after {first + int(bad[0]) + 1} steps"
    losses = np.concatenate(chunks)
    tail = max(1, steps // 5)
    start, end = float(np.mean(losses[:tail])), float(np.mean(losses[-tail:]))
    if not math.isfinite(end) or end > GROWTH * start:
        return f"the loss grew from {start:.3g} to {end:.3g}"
    return "trained"
