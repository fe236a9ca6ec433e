"""The window opens at once, whatever network it restores: on a CPU driver a wide network's kernels
take seconds to minutes to compile, so it opens on a placeholder (the restored config with poly2
and one hidden layer of PLACEHOLDER_WIDTH, whose kernels compile in a second or two), paused, and
builds the restored network as any rebuild is built; once built, it swaps in with its state."""

from __future__ import annotations

from dataclasses import dataclass

from ..config.config import Config
from ..files.autosave import Offer
from ..files.start import Start
from ..gpu.gpu import Gpu
from ..kernels.paths import path_of
from ..loop.session import Session

PLACEHOLDER_WIDTH = 8
HEATMAP_GRID = 64  # the window's evaluation grid: keeps the frame rate on a CPU driver


@dataclass(frozen=True)
class Launch:
    """How a window (or a served one) starts, besides its start and size."""

    vsync: bool | None = None  # None: as saved (on by default)
    restore: Offer | None = None  # the last session's autosave, offered in the window
    notice: str = ""  # said when the window opens (what was restored of the last session)
    sweep: str | None = None  # a sweep folder opened in the sweep window, watched; the window starts paused


def open_app(gpu: Gpu, start: Start, size: tuple[int, int], saved: dict, launch: Launch):
    """The window's AppState on `gpu`, training from `start` (or its placeholder), with the last
    session's view settings `saved`; paused while an autosave is offered, and with a sweep open (its
    trials train elsewhere, on the same GPU)."""
    from . import settings
    from .renderer import UiRenderer
    from .state import AppState

    session, placeholder = open_session(gpu, start, HEATMAP_GRID)
    app = AppState(session, UiRenderer(gpu.device, *size))
    if placeholder:
        build_restored(app, start, train=launch.sweep is None)
    settings.restore_view(app, saved)
    if launch.vsync is not None:
        app.vsync = launch.vsync
    app.restore_offer = launch.restore
    if launch.notice:
        app.say(launch.notice, 12.0)
    app.running = launch.restore is None  # an offer to restore is answered before training
    if launch.sweep is not None:
        app.sweep.open_folder(launch.sweep, wait=True)
        app.running = False
    return app


def needs_placeholder(gpu: Gpu, config: Config) -> bool:
    """Where the network's kernels may take long to compile: wide networks on a CPU driver."""
    return gpu.software and not path_of(gpu.plan(config)).quick_compile


def open_session(gpu: Gpu, start: Start, grid: int) -> tuple[Session, bool]:
    """The window's first session: `start`'s own, or a placeholder's (then True: build_restored
    must follow)."""
    if not needs_placeholder(gpu, start.config):
        session = Session(gpu, start.config, grid=grid, heatmaps=True)
        start.apply(session)
        return session, False
    placeholder = start.config.replace(hidden=[PLACEHOLDER_WIDTH], encoding="poly2")
    return Session(gpu, placeholder, grid=grid, heatmaps=True), True


def build_restored(app, start: Start, train: bool = True) -> None:
    """Pauses the placeholder and starts building `start`'s network; when it is in, puts in
    `start`'s state and trains (where `train`). Until then app.restoring names the config being built."""
    app.running = False
    app.restoring = start.config

    def swap_in(session: Session) -> None:
        start.apply(session)
        if start.checkpoint is None:  # the placeholder's empty run is no run of the user's
            session.continue_history([session.history.current])
        app.restoring = None
        app.running = train and app.restore_offer is None  # a prompt still unanswered holds the training

    app.session.start_rebuild(start.config, then=swap_in)
    app.say(f"building {app.gpu.plan(start.config).title}: the window shows a placeholder until it is ready", 10.0)
