"""One app state shared by the window loop, the offscreen renderer and the panels. Panels only
change this state (and the trainer through it); frame.py turns it into GPU work."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import slangpy as spy
from imgui_bundle import imgui

from app.config import Config
from app.errors import UserError
from app.heatmaps import HeatmapImages
from app.trainer import LOSS_HISTORY, Trainer
from app.ui.heatmap_view import HeatmapLayout
from app.ui.renderer import UiRenderer
from app.ui.timing import GpuTimer

HEATMAP_GRID = 64          # keeps the frame rate on the software driver (~1.5 ms per frame)
EVAL_INTERVAL_S = 0.5      # eval loss every half second of wall time
DIAGRAM_INTERVAL_S = 0.25  # weights read back for the diagram at most 4 times a second
MAX_FADED_RUNS = 2


class Series:
    """A growing (step, value) series kept in numpy arrays with amortised appends."""

    def __init__(self) -> None:
        self._x = np.zeros(1024, np.float64)
        self._y = np.zeros(1024, np.float64)
        self.count = 0

    def extend(self, xs: np.ndarray, ys: np.ndarray) -> None:
        need = self.count + len(xs)
        if need > len(self._x):
            size = max(need, 2 * len(self._x))
            self._x = np.resize(self._x, size)
            self._y = np.resize(self._y, size)
        self._x[self.count:need] = xs
        self._y[self.count:need] = ys
        self.count = need

    @property
    def x(self) -> np.ndarray:
        return self._x[: self.count]

    @property
    def y(self) -> np.ndarray:
        return self._y[: self.count]


@dataclass
class Run:
    """Loss curves of one training run (from a reset or a rebuild to the next)."""
    label: str
    train: Series = field(default_factory=Series)
    eval: Series = field(default_factory=Series)


@dataclass
class Stats:
    frame_ms: float = 0.0   # time between frames (includes waiting for vsync)
    work_ms: float = 0.0    # time this frame took to build, record, run and read back
    samples_per_s: float = 0.0
    train_loss: float = float("nan")
    eval_loss: float = float("nan")
    gpu_ms: dict = field(default_factory=dict)  # "training"/"heatmaps"/"ui" -> ms, when measured


class AppState:
    def __init__(self, device: spy.Device, trainer: Trainer, renderer: UiRenderer):
        self.device, self.renderer = device, renderer
        self.running = True
        self.steps_per_frame = 4
        self.single_steps = 0          # steps requested by "Step" while paused
        self.vsync = True
        self.layout = HeatmapLayout(image_em=7.5)
        self.error: Optional[str] = None   # last rejected user input, shown in-app
        self.status: str = ""
        self.stats = Stats()
        self.timer = GpuTimer(device)
        self.runs: list[Run] = []
        self.rebuild = None            # app.ui.rebuild.Rebuild while a new network builds
        self.screenshot_path: Optional[str] = None
        self.quit = False
        self._last_eval = 0.0
        self._diagram_time = -1.0
        self.diagram_params: Optional[np.ndarray] = None
        self._evaluation = None        # cached read of the last grid evaluation (tooltips)
        self._evaluation_frame = -1
        self.frame_index = 0
        self.rects: dict[str, tuple[float, float, float, float]] = {}  # named widgets' screen rects (tests, tooltips)
        self.error_max = None          # |error| scale of each output, from the last frame
        self.set_trainer(trainer)

    # ---- trainer lifecycle ------------------------------------------------------------
    @property
    def config(self) -> Config:
        return self.trainer.config

    def set_trainer(self, trainer: Trainer) -> None:
        self.trainer = trainer
        self.heatmaps = HeatmapImages(trainer, HEATMAP_GRID)
        self.start_run()
        self.draft = trainer.config    # network panel edits (structural fields), applied by "Apply"
        self._diagram_time = -1.0
        self._evaluation = None
        self.error_max = np.ones(trainer.config.output_dim, np.float32)
        outputs = trainer.config.output_dim
        if self.layout.outputs is not None:
            self.layout.outputs = [o for o in self.layout.outputs if o < outputs] or None

    def start_run(self) -> None:
        c = self.trainer.config
        label = f"{'-'.join(map(str, c.layer_sizes))} seed {c.seed}"
        self.runs = (self.runs + [Run(label)])[-(MAX_FADED_RUNS + 1):]
        self.stats.train_loss = self.stats.eval_loss = float("nan")

    @property
    def run(self) -> Run:
        return self.runs[-1]

    def remember(self, name: str) -> None:
        """Records the last drawn widget's rect under `name`, so tests can click it."""
        lo, hi = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        self.rects[name] = (lo.x, lo.y, hi.x, hi.y)

    def load_history(self) -> None:
        """Fills the current run's curve from the trainer's loss ring (after a headless run)."""
        t = self.trainer
        steps = range(max(0, t.step - LOSS_HISTORY), t.step)
        if len(steps):
            self.run.train.extend(np.arange(steps.start + 1, steps.stop + 1), t.read_losses(steps))
            self.stats.train_loss = float(self.run.train.y[-1])

    def reset(self, seed: Optional[int] = None) -> None:
        self.trainer.reset(seed)
        self.start_run()
        self._diagram_time = -1.0

    def apply_hot(self, **changes) -> bool:
        """Hot change through Config.replace; a rejected value is shown, state is kept."""
        try:
            self.trainer.apply(self.trainer.config.replace(**changes))
        except UserError as error:
            self.error = str(error)
            return False
        self.error = None
        return True

    def start_rebuild(self) -> None:
        from app.config import STRUCTURAL_FIELDS
        from app.ui.rebuild import Rebuild

        try:
            config = self.config.replace(**{f: getattr(self.draft, f) for f in STRUCTURAL_FIELDS})
        except UserError as error:
            self.error = str(error)
            return
        self.error = None
        self.rebuild = Rebuild(self.device, config, HEATMAP_GRID)

    def poll_rebuild(self) -> None:
        """Swaps in the new network once its shaders are compiled (called between frames)."""
        job = self.rebuild
        if job is None or not job.ready():
            return
        self.rebuild = None
        try:
            self.set_trainer(job.finish())
        except Exception as error:  # a compile failure: keep training the old network
            self.error = f"rebuild failed: {str(error).strip().splitlines()[0] if str(error).strip() else error}"
            return
        self.status = f"rebuilt in {job.seconds:.1f} s"

    # ---- per-frame bookkeeping ----------------------------------------------------------
    def steps_this_frame(self) -> int:
        if self.rebuild is not None:
            return 0
        if self.running:
            return self.steps_per_frame
        count, self.single_steps = self.single_steps, 0
        return count

    def after_submit(self, steps: range, frame_seconds: float, cpu_seconds: float) -> None:
        """Reads back what this frame computed: per-step losses, eval loss, GPU times.
        `frame_seconds` is the time since the previous frame, `cpu_seconds` this frame's work."""
        t = self.trainer
        self.device.wait()
        losses, error_max = t.readback()
        if len(steps):
            self.run.train.extend(np.arange(steps.start + 1, steps.stop + 1), losses)
            self.stats.train_loss = float(losses[-1])
        now = time.perf_counter()
        if now - self._last_eval >= EVAL_INTERVAL_S or (len(steps) and self.run.eval.count == 0):
            # The heatmap pass of this frame evaluated the network on the grid: reuse it.
            self.stats.eval_loss = t.read_eval_loss()
            self.run.eval.extend(np.array([t.step]), np.array([self.stats.eval_loss]))
            self._last_eval = now
        alpha = 0.1 if self.stats.frame_ms else 1.0
        self.stats.frame_ms += alpha * (frame_seconds * 1000 - self.stats.frame_ms)
        self.stats.work_ms += alpha * (cpu_seconds * 1000 - self.stats.work_ms)
        samples = len(steps) * t.config.batch_size / max(frame_seconds, 1e-6)
        self.stats.samples_per_s += alpha * (samples - self.stats.samples_per_s)
        self.stats.gpu_ms = self.timer.read()
        self.error_max = error_max
        self.frame_index += 1

    def evaluation(self):
        """The last grid evaluation, read back lazily (only while a tooltip needs it)."""
        if self._evaluation is None or self._evaluation_frame != self.frame_index:
            self._evaluation = self.trainer.read_evaluation()
            self._evaluation_frame = self.frame_index
        return self._evaluation

    def diagram_weights(self) -> np.ndarray:
        now = time.perf_counter()
        if self.diagram_params is None or now - self._diagram_time >= DIAGRAM_INTERVAL_S:
            self.diagram_params = self.trainer.parameters()
            self._diagram_time = now
        return self.diagram_params

