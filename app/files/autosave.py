"""The window's autosave: when the window ends, however it ends (closed, Ctrl+C, a crash that
escaped a frame), the whole training state goes to one checkpoint in the cache folder, and the
next launch offers to restore it (`--fresh`, `--resume` and `--load-network` don't ask).

A step recorded in pieces over frames (a wide network on a CPU driver) is not finished at exit,
which could take a minute there: while it has only summed gradients, nothing of the network has
changed yet, so it is dropped and the checkpoint holds the step boundary before it. The autosave
before is kept beside it (autosave-previous.ckpt), and a window closed before its offer was
answered writes none: what was offered is still there at the launch after."""

from __future__ import annotations

import datetime
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UserError
from ..gpu.device import cache_dir
from ..kernels.planning import plan_for
from . import checkpoint

if TYPE_CHECKING:
    from ..loop.session import Session

NAME = "autosave.ckpt"
PREVIOUS = "autosave-previous.ckpt"  # the one before: a declined offer is not lost at the next exit


def autosave_path() -> Path:
    return cache_dir() / NAME


def write(session: Session, path: Path | None = None) -> checkpoint.Checkpoint:
    """Writes the session's state to `path` (the autosave) atomically, the autosave there before
    kept as PREVIOUS beside it; an OSError propagates."""
    path = path or autosave_path()
    trainer = session.trainer
    if trainer.progress.started and trainer.progress.phase == "learn":
        trainer.abandon_step()
    state = checkpoint.capture(session)
    stable = session.restorable_config()
    if session.divergence is not None and stable is not None and stable.lr != state.config.lr:
        # never the rate that just diverged: the last one that trained stably
        state.config = state.config.replace(lr=stable.lr)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file():
        os.replace(path, path.with_name(PREVIOUS))
    checkpoint.save(path, state)
    return state


@dataclass
class Offer:
    """An autosave the next launch offers to restore."""

    path: Path
    step: int
    network: str  # "4-16-4"
    saved_at: datetime.datetime

    def describe(self) -> str:
        return f"{self.network} network at step {self.step:,}, saved {self.saved_at:%Y-%m-%d %H:%M}"


def find(path: Path | None = None) -> Offer | None:
    """The autosave to offer, if there is one that loads; one that does not is noted and left."""
    path = path or autosave_path()
    if not path.is_file():
        return None
    try:
        saved = checkpoint.load(path)
        stamp = datetime.datetime.fromtimestamp(path.stat().st_mtime)
    except (UserError, OSError) as error:
        print(f"note: the last session's autosave is not offered: {error}", file=sys.stderr)
        return None
    network = "-".join(str(size) for size in plan_for(saved.config).sizes)
    return Offer(path, saved.step, network, stamp)
