"""The window's view state: what the panels show and change besides the training session (which
owns everything about training, app.session). Panels change this state, and the session
through it; frame.py turns it into GPU work."""

from __future__ import annotations

import dataclasses
import datetime
import time

import numpy as np
from imgui_bundle import imgui

from ..check import grad_check
from ..check.grad_check import GradCheck
from ..config.config import Config, fields_of
from ..config.spec import STRUCTURE
from ..errors import UserError, first_line
from ..files.autosave import Offer
from ..gpu.device import cache_dir
from ..loop import rate_probe
from ..loop.frame_driver import FrameDriver, FrameWork
from ..loop.rate_probe import RateAdvice
from ..loop.session import Session
from ..views.evaluation import Evaluation
from ..views.slices import Slice
from .data_edits import DataEdits
from .failures import Failures
from .files import FileActions
from .frame_stats import Stats
from .heatmap_view import HeatmapLayout
from .layout import Layout
from .redraw import Redraw
from .renderer import UiRenderer
from .shape_edits import ShapeEdits
from .sliders import Typing
from .sweep.viewer import SweepViewer
from .target_edits import TargetEdits

DIAGRAM_INTERVAL_S = 0.25  # weights read back for the diagram at most 4 times a second
STATS_INTERVAL_S = 0.5  # the frame figures shown change at most twice a second: readable, and a
# paused window whose figures stayed put need not draw its UI again (app/ui/redraw.py)


class AppState:
    def __init__(self, session: Session, renderer: UiRenderer):
        self.session, self.renderer = session, renderer
        self.gpu = session.gpu
        self.running = True
        self.vsync = True
        self.layout = HeatmapLayout(image_em=7.5, fitted=True)
        self.field_errors: dict[str, str] = {}  # a rejected value's message, by the field it came from
        self._error_values: dict[str, dict] = {}  # the config values a hot field's message was about
        self.typing: Typing | None = None  # the slider whose value is being typed (app/ui/sliders.py)
        self.failures = Failures()  # what raised inside a frame, caught there (app/ui/failures.py)
        self.restore_offer: Offer | None = None  # the last session's autosave, offered at launch
        self.started = datetime.datetime.now()  # names this session's kept file (app/files/autosave.py)
        self.recent: list | None = None  # File > Recent sessions while its menu is open
        self._advice: tuple[object, RateAdvice] | None = None  # (the divergence, its rate advice)
        self.stats = Stats()  # smoothed every frame
        self.shown_stats = Stats()  # what the Training panel shows: the stats every STATS_INTERVAL_S
        self._stats_at = (0.0, 0)  # when shown_stats was taken, and app.redraw.count then
        self.frames = FrameDriver(session)  # the frame budget and each frame's training work
        self.screenshot_path: str | None = None
        self.dock = Layout()  # the panels' layout (app.ui.layout)
        self.layout_reset = False  # View > Reset layout: rebuild the default next frame
        self.notice: tuple[str, float] = ("", 0.0)  # a message for the bottom of the window, until
        self.windows: dict[str, tuple[float, float, float, float]] = {}  # panels' screen rects
        self.quit = False  # File > Quit, Ctrl+Q: the window's loop ends as when it is closed
        self.about_open = False  # Help > About (app/ui/about.py)
        self.frame_index = 0
        self.rects: dict[str, tuple[float, float, float, float]] = {}  # named widgets' screen rects
        self.figure_rows: dict[str, str] = {}  # the Training panel's figures as last drawn: label -> value
        self._diagram: tuple[float, object, np.ndarray | None] = (-1.0, None, None)
        self._evaluation: tuple[int, Evaluation | None] = (-1, None)
        self.remote = None  # served to a browser: its file bridge (app/serve/remote_files.py); None in a window
        self.files = FileActions(self)  # File menu: checkpoints and Slang export
        self.sweep = SweepViewer(self)  # File > Open sweep... (app/ui/sweep/)
        self.view = 0  # heatmaps: 0 values, 1 d/dx, 2 d/dy, 3 |gradient|
        self.slice = Slice()  # heatmaps of a function of (x, y, z): the plane and depth shown
        self.selected_neuron: int | None = None  # the diagram's neuron shown large
        self.grad_check: GradCheck | None = None  # the last gradient check of this network
        self.grad_check_wanted = False  # run one at the next step boundary
        self.targets = TargetEdits(session)
        self.data = DataEdits(session)  # the dataset and its live settings
        self.shapes = ShapeEdits(session)  # the shape whose signed distance is learned
        self.data_drafts: dict[str, float] = {}  # data sliders' values while dragged
        self.redraw = Redraw()  # whether a frame draws the UI again (app/ui/redraw.py)
        self.restoring: Config | None = None  # the network being built at start (app/ui/opening.py)
        self.gpu_draws: list = []  # (encoder) -> None: GPU drawing a panel asked for, recorded in the frame
        self.loss_hidden: set[str] = set()  # the loss plot's series hidden by a click on the legend
        self.loss_series: list = []  # the loss plot's series as last drawn (app/ui/panels/loss_series.py)
        self.loss_note = ""  # and its note of earlier runs hidden
        self.loss_ticks: dict[str, float] = {}  # and its step axis' labels, at their steps
        self.race = None  # a RaceState while a race is open (app/ui/race_state.py): the main network waits
        self.on_new_network()

    @property
    def config(self) -> Config:
        return self.session.config

    @property
    def trains_main(self) -> bool:
        """Whether the main network trains this frame: running, no race has the frames, and no
        offer to restore the last session waits for its answer."""
        return self.running and self.race is None and self.restore_offer is None

    def on_new_network(self) -> None:
        """After start-up or a rebuild: the draft follows the network, shown outputs are kept."""
        self.draft = self.config  # the network panel's edits, applied by "Apply"
        self._diagram = (-1.0, None, None)
        self.targets.sync()
        self.grad_check = None
        if self.selected_neuron is not None and self.selected_neuron >= self.session.trainer.plan.neuron_count:
            self.selected_neuron = None
        outputs = self.config.output_dim
        if self.layout.outputs is not None:
            self.layout.outputs = [o for o in self.layout.outputs if o < outputs] or None

    def remember_window(self, title: str) -> None:
        pos, size = imgui.get_window_pos(), imgui.get_window_size()
        self.windows[title] = (pos.x, pos.y, pos.x + size.x, pos.y + size.y)

    def say(self, text: str, seconds: float = 4.0) -> None:
        self.notice = (text, time.monotonic() + seconds)

    def request_screenshot(self) -> None:
        """The next frame is saved to the screenshots folder (F12, or View > Save screenshot)."""
        folder = cache_dir() / "screenshots"
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            self.say(f"cannot save a screenshot in {folder}: {error.strerror or error}")
            return
        # Milliseconds in the name: two screenshots within a second are two files, in order.
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S-%f")[:-3]
        self.screenshot_path = str(folder / f"visual-trainer-{stamp}.png")

    def remember(self, name: str, label: str = "") -> None:
        """Records the last drawn widget's rect under `name`, so tests can click it; with its
        `label`, the frame alone (a slider's value runs along its frame, not its label)."""
        lo, hi = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        right = hi.x - (imgui.calc_text_size(label).x + imgui.get_style().item_inner_spacing.x if label else 0.0)
        self.rects[name] = (lo.x, lo.y, right, hi.y)

    # ---- actions --------------------------------------------------------------------------
    @property
    def error(self) -> str | None:
        """Any field's message (tests)."""
        return next(iter(self.field_errors.values()), None)

    def apply_hot(self, field: str, **changes) -> bool:
        """A hot change from `field` through Config.replace; a rejected value's message is shown
        by that field and the state is kept."""
        return self._take(field, changes, lambda: self.session.apply(self.config.replace(**changes)))

    def change_loss_weight(self, field: str, **changes) -> bool:
        """As apply_hot, for a derivative loss's weight, which may rebuild: made on the network being
        built, if one is, which then starts again with it or is dropped (Session.change)."""
        return self._take(field, changes, lambda: self.session.change(self.session.building.replace(**changes)))

    def _take(self, field: str, changes: dict, change) -> bool:
        """Runs `change`; a UserError's message goes by `field`, and nothing changes."""
        try:
            change()
        except UserError as error:
            self.field_errors[field] = str(error)
            self._error_values[field] = {name: getattr(self.config, name) for name in changes}
            return False
        self.field_errors.pop(field, None)
        return True

    def _drop_stale_errors(self) -> None:
        """A hot field's message goes once the value it was about has changed, from whatever
        field or button (the lr slider after a bad exact lr, a resume with another rate)."""
        for name, values in list(self._error_values.items()):
            if name not in self.field_errors or any(getattr(self.config, k) != v for k, v in values.items()):
                self.field_errors.pop(name, None)
                del self._error_values[name]

    def start_rebuild(self) -> None:
        try:
            # the draft edits the network's fields; the truth (targets, dataset) is the session's
            config = self.config.replace(**{f: getattr(self.draft, f) for f in fields_of(STRUCTURE)})
            self.session.start_rebuild(config)
        except UserError as error:
            self.field_errors["network"] = str(error)
            return
        self.field_errors.pop("network", None)

    def reset(self, seed: int | None = None) -> None:
        self.session.reset(seed)
        self._diagram = (-1.0, None, None)

    def reset_with_seed(self, seed: int) -> None:
        """The seed field: a valid seed starts a new run from it; a bad one is reported there."""
        try:
            self.config.replace(seed=seed)
        except UserError as error:
            self.field_errors["seed"] = str(error)
            return
        self.field_errors.pop("seed", None)
        self.reset(seed)

    def request_grad_check(self) -> None:
        self.grad_check_wanted = True

    def run_grad_check_if_wanted(self) -> None:
        """The gradient check runs between steps; it takes the frame it runs in (about a second
        on a CPU driver, the first time). A step in pieces that has updated no parameter yet is
        dropped, to be run again the same way after the check; one that has, finishes first
        (its frames record it, paused or not: FrameDriver)."""
        trainer = self.session.trainer
        if not self.grad_check_wanted or trainer.progress.updating:
            return
        if trainer.progress.started:
            trainer.abandon_step()
        self.grad_check_wanted = False
        try:
            self.grad_check = grad_check.run(self.session.trainer)
        except Exception as error:  # a failure to run is a message, not a crash
            self.grad_check = None
            self.say(f"gradient check failed to run: {first_line(error)}")

    def step_once(self) -> None:
        if not self.running:
            self.frames.step_once()

    def rate_advice(self) -> RateAdvice:
        """After a divergence: a learning rate that trains on, found once per divergence by
        replaying (app/loop/rate_probe.py)."""
        divergence = self.session.divergence
        if self._advice is None or self._advice[0] is not divergence:
            self._advice = (divergence, rate_probe.advise(self.session, self.frames.seconds_per_step()))
        return self._advice[1]

    def resume(self, advice: RateAdvice) -> None:
        """After a divergence: train again at the rate advised, from the network it was found on."""
        if advice.from_stable:
            self.session.go_back_to_stable()
        self.session.resume(lr=advice.lr)
        self.running = True

    def go_back_to_stable(self) -> None:
        self.session.go_back_to_stable()
        self.running = True

    # ---- per-frame bookkeeping ------------------------------------------------------------
    def after_frame(self, work: FrameWork, frame_seconds: float, work_seconds: float, gpu_seconds: dict) -> None:
        if self.session.divergence is not None:
            self.running = False  # the panel says why and offers to resume
        if self.restoring is not None and self.session.rebuild is None:
            self.restoring = None  # its build failed (the panel says why): the placeholder stays
        self._drop_stale_errors()
        self.stats.add_frame(frame_seconds, work_seconds)
        self.stats.gpu_ms = {part: seconds * 1000 for part, seconds in gpu_seconds.items()}
        self.stats.record_ms = work.record_seconds * 1000
        if work.training.kind == "steps":
            self.stats.training = f"{work.training.units:,} steps / frame"
        elif work.training.kind:
            seconds = self.frames.seconds_per_step()
            frames = max(2, round(seconds / max(self.frames.budget.compute_seconds(), 1e-6)))
            self.stats.training = f"1 step in ~{frames:,} frames ({seconds:.3g} s of GPU)"
        self.frame_index += 1
        now, (taken, drawn) = time.perf_counter(), self._stats_at
        # Paused and untouched, the figures stay as they were: a paused window then looks the same
        # frame after frame, and draws (or sends to a browser) nothing.
        touched = self.running or now - self.redraw.input_at < 2 * STATS_INTERVAL_S
        if now - taken >= STATS_INTERVAL_S and touched:
            self.stats.ui_per_second = (self.redraw.count - drawn) / (now - taken) if taken else 0.0
            self.shown_stats = dataclasses.replace(self.stats, gpu_ms=dict(self.stats.gpu_ms))
            self._stats_at = (now, self.redraw.count)

    def texture_state(self) -> tuple:
        """What the pixels of the UI's own images depend on: the heatmap and neuron atlases, and
        the evaluation pass they were last drawn from (compared by app/ui/redraw.py)."""
        heatmaps = self.session.heatmaps
        return (heatmaps, heatmaps.drawn, heatmaps.drawn_contours) if heatmaps is not None else ()

    def evaluation(self) -> Evaluation:
        """The last complete grid evaluation, read back lazily (only while a tooltip needs it)."""
        frame, evaluation = self._evaluation
        if evaluation is None or frame != self.frame_index:
            evaluation = self.session.evaluator.read()
            self._evaluation = (self.frame_index, evaluation)
        return evaluation

    def diagram_weights(self) -> np.ndarray:
        read_at, seen, params = self._diagram
        now, trainer = time.perf_counter(), self.session.trainer
        if (
            seen is None
            or seen[0] is not trainer
            or (seen[1] != trainer.version and now - read_at >= DIAGRAM_INTERVAL_S)
        ):
            params = trainer.parameters()
            self._diagram = (now, (trainer, trainer.version), params)
        return params
