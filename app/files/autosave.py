"""The window's sessions, kept: however the window ends, its whole training state goes to a checkpoint
of its own in the cache folder's sessions/; the next launch offers the newest, and File > Recent
sessions lists them all (docs/guide/keeping.md, 'Kept sessions'; docs/formats.md, 'The autosave and
the cache folder'). A step half-recorded over frames is dropped, not finished at exit (slow on a CPU
driver): it has changed no weights yet."""

from __future__ import annotations

import datetime
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UserError
from ..gpu.device import cache_dir
from ..kernels.planning import plan_for
from . import checkpoint

if TYPE_CHECKING:
    from ..config.config import Config
    from ..loop.session import Session

SESSIONS = "sessions"  # the folder under the cache folder
KEEP = 12  # sessions kept; the oldest beyond go
LEGACY = ("autosave.ckpt", "autosave-previous.ckpt")  # what earlier versions wrote, still offered
STAMP = "%Y%m%d-%H%M%S"


def sessions_folder() -> Path:
    return cache_dir() / SESSIONS


def network_name(config: Config) -> str:
    return "-".join(str(size) for size in plan_for(config).sizes)


def data_name(config: Config) -> str:
    """What the session learned, as a file name's part: a dataset, an image, a shape, a Slang
    file's name, or 'formulas'."""
    if config.dataset:
        name = config.dataset.get("generator") or Path(config.dataset["csv"]).stem
    elif config.image:
        name = Path(config.image["file"]).stem
    elif config.sdf:
        name = f"shape_{Path(config.sdf).stem}"
    elif config.slang_target:
        name = Path(config.slang_target["file"]).stem
    else:
        name = "formulas"
    return re.sub(r"[^A-Za-z0-9_]+", "_", name)[:40] or "data"


def session_path(started: datetime.datetime, config: Config) -> Path:
    """The file of the session that began at `started`, as its config now names it."""
    return sessions_folder() / f"{started:{STAMP}}-{network_name(config)}-{data_name(config)}.ckpt"


def write(session: Session, started: datetime.datetime) -> tuple[Path, checkpoint.Checkpoint]:
    """Writes the session's state to its own file (atomically), replacing only an earlier write of
    the same session (one begun at `started`, under another name if its network or data changed),
    then lets the sessions beyond KEEP go. Returns the file and what it holds; an OSError
    propagates."""
    trainer = session.trainer
    if trainer.progress.started and trainer.progress.phase == "learn":
        trainer.abandon_step()
    state = checkpoint.capture(session)
    stable = session.restorable_config()
    if session.divergence is not None and stable is not None and stable.lr != state.config.lr:
        # never the rate that just diverged: the last one that trained stably
        state.config = state.config.replace(lr=stable.lr)
    path = session_path(started, state.config)
    path.parent.mkdir(parents=True, exist_ok=True)
    checkpoint.save(path, state)
    for earlier in path.parent.glob(f"{started:{STAMP}}-*.ckpt"):
        if earlier != path:
            earlier.unlink(missing_ok=True)
    _keep_newest(KEEP, path)
    return path, state


def _keep_newest(count: int, written: Path) -> None:
    """Removes the sessions (not the legacy files) beyond the newest `count`, never `written`."""
    kept = sorted(sessions_folder().glob("*.ckpt"), key=lambda p: p.name, reverse=True)
    for old in kept[count:]:
        if old != written:
            old.unlink(missing_ok=True)


@dataclass(frozen=True)
class Kept:
    """A kept session as its file's name tells it (File > Recent sessions), without reading it."""

    path: Path
    saved_at: datetime.datetime
    network: str  # "4-16-4"
    data: str  # "spiral", "formulas", an image's name...

    def describe(self) -> str:
        return f"{self.saved_at:%Y-%m-%d %H:%M}  {self.network}  {self.data}"


def _kept(path: Path) -> Kept:
    saved_at = datetime.datetime.fromtimestamp(path.stat().st_mtime)
    try:  # 20261126-150712-4-16-4-spiral.ckpt
        started = datetime.datetime.strptime(path.name[:15], STAMP)
        network, data = path.name[16:-5].rsplit("-", 1)
        return Kept(path, max(saved_at, started), network, data)
    except ValueError:  # an earlier version's autosave.ckpt
        return Kept(path, saved_at, "network", "autosave of an earlier version")


def kept_sessions() -> list[Kept]:
    """Every kept session, newest first (the legacy autosave files among them)."""
    files = [*sessions_folder().glob("*.ckpt"), *(cache_dir() / name for name in LEGACY)]
    kept = [_kept(p) for p in files if p.is_file()]
    return sorted(kept, key=lambda k: k.saved_at, reverse=True)


@dataclass
class Offer:
    """The kept session offered at launch: read, so that its step is known."""

    path: Path
    step: int
    network: str  # "4-16-4"
    data: str
    saved_at: datetime.datetime

    def describe(self) -> str:
        return f"{self.network} network at step {self.step:,}, {self.data}, saved {self.saved_at:%Y-%m-%d %H:%M}"


def find() -> Offer | None:
    """The session to offer at launch: the newest kept one that loads (one that does not is
    noted and left where it is)."""
    for kept in kept_sessions():
        try:
            saved = checkpoint.load(kept.path)
        except UserError as error:
            print(f"note: a kept session is not offered: {error}", file=sys.stderr)
            continue
        return Offer(kept.path, saved.step, network_name(saved.config), data_name(saved.config), kept.saved_at)
    return None
