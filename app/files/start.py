"""What a run starts from, for the window and headless runs alike: a config; or a checkpoint
(--resume) with the config to go on with; or the weights of a network.json (--load-network).
The command line builds it (app.entry.cli_args.resolve_start) before a device exists."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..config import config as cfg
from . import checkpoint as ckpt

if TYPE_CHECKING:
    from ..loop.session import Session


@dataclass
class Start:
    config: cfg.Config
    checkpoint: ckpt.Checkpoint | None = None
    parameters: np.ndarray | None = None  # from --load-network

    @property
    def step(self) -> int:
        return self.checkpoint.step if self.checkpoint is not None else 0

    def apply(self, session: Session) -> None:
        """Puts the starting state into a session just made with `config`."""
        if self.checkpoint is not None:
            ckpt.restore(session, self.checkpoint, self.config)
        elif self.parameters is not None:
            session.trainer.set_parameters(self.parameters)
