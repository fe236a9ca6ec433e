"""Building the network for a new architecture while the old one trains: in stages, one a frame, each
triggering one part of the compile, so the window keeps drawing and shows progress; on a software
driver a child process (this module run with -m) first fills the compile caches. Why, and why only
there: docs/architecture.md, 'Rebuilds'."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable

from ..config.config import Config
from ..gpu.compile_progress import CompileProgress, announce
from ..gpu.gpu import Gpu
from ..resources import import_root, module_command
from ..train.trainer import Trainer
from ..truth.finite import check_truth_finite
from ..views.evaluation import GridEvaluator
from ..views.heatmaps import HeatmapImages
from ..views.render3d import SurfaceRender
from ..views.surface_tracker import SurfaceTracker, tracks_surface

CHILD_SHARE = 0.9  # of the progress bar: a child's compile, where there is one
WARM_GRID = 2  # the child's evaluation grid: it compiles, it need not evaluate the real one
WARM_SIDE = 8  # likewise the 3D view's pictures and the surface figures' lattice
EVAL_PIECE_S = 0.03
MIN_EVAL_PIECE = 32  # cells: a submit's own cost would otherwise shrink the pieces to nothing


class Rebuild:
    def __init__(self, gpu: Gpu, config: Config, grid: int, heatmaps: bool, keep_weights: bool = False):
        self.gpu, self.config, self.grid = gpu, config, grid
        self.keep_weights = keep_weights  # the session carries the old network's weights over
        self.started = time.perf_counter()
        self.trainer: Trainer | None = None
        self.evaluator: GridEvaluator | None = None
        self.heatmaps: HeatmapImages | None = None
        self.error: Exception | None = None
        self.process: subprocess.Popen | None = None
        plan = gpu.plan(config)
        self._stages: list[tuple[str, Callable[[], bool]]] = [
            ("compiling Slang", lambda: bool(gpu.kernels.get(plan))),
            ("building training pipelines", self._first_steps),
            ("building evaluation pipeline", self._first_evaluation),
        ]
        if heatmaps:
            self._stages.append(("building heatmap pipelines", self._first_heatmaps))
        self._eval_piece = 64  # cells of the first evaluation a frame, sized by time
        self.progress: CompileProgress | None = None  # the child's stages, where one compiles
        if gpu.software and not gpu.kernels.has(plan):
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    *module_command("loop.rebuild"),
                    json.dumps(config.to_dict()),
                    gpu.device.info.type.name.lower(),
                    gpu.adapter.uuid if gpu.adapter is not None else "",  # the same GPU's caches
                ],
                cwd=import_root(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            self.progress = CompileProgress(self.process.stdout)
            self._stages.insert(0, ("compiling shaders", lambda: self.process.poll() is not None))
        self._done = 0

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.started

    @property
    def fraction(self) -> float:
        """Of the whole rebuild. A compile in a child process is CHILD_SHARE of it, followed by
        its own stages; the stages in this process (quick once the caches are warm) the rest."""
        if self.progress is None:
            return self._done / len(self._stages)
        if self._done == 0:
            return CHILD_SHARE * self.progress.fraction()
        return CHILD_SHARE + (1 - CHILD_SHARE) * (self._done - 1) / (len(self._stages) - 1)

    @property
    def label(self) -> str:
        if self.progress is not None and self._done == 0:
            return self.progress.label
        return self._stages[min(self._done, len(self._stages) - 1)][0]

    def _first_steps(self) -> bool:
        # The trainer builds its pipelines by dispatches that do nothing: no warm-up step (one of a
        # wide network took a CPU driver seconds, in one frame).
        self.trainer = Trainer(self.gpu, self.config)
        return True

    def _first_evaluation(self) -> bool:
        """The first pass over the grid, in pieces of about EVAL_PIECE_S a frame: for a wide
        network on a CPU driver a whole pass takes seconds, which froze the window's frame."""
        if self.evaluator is None:
            self.evaluator = GridEvaluator(self.trainer, self.grid)  # builds its pipeline
            return False
        start = time.perf_counter()
        with self.gpu.submit() as encoder:
            complete = self.evaluator.record(encoder, self._eval_piece)
        took = time.perf_counter() - start
        sized = int(self._eval_piece * EVAL_PIECE_S / max(took, 1e-4))
        self._eval_piece = max(MIN_EVAL_PIECE, min(4 * self._eval_piece, sized))
        if not complete:
            return False
        if self.config.slang_target:  # no numpy twin: its truth is checked as the GPU evaluates it
            check_truth_finite(self.evaluator.read().truths, self.config.slang_target, self.config.domain)
        return True

    def _first_heatmaps(self) -> bool:
        # Drawn from the pass _first_evaluation made: another pass cost seconds of a CPU driver's
        # time for a wide network, in one frame.
        self.heatmaps = HeatmapImages(self.evaluator)
        return True

    def ready(self) -> bool:
        """Advances by one stage (call once a frame); True once all are done or one failed."""
        if self.error is None and self._done < len(self._stages):
            try:
                if self._stages[self._done][1]():
                    self._done += 1
            except Exception as error:  # reported by finish(); the old network keeps training
                self.error = error
        return self.error is not None or self._done == len(self._stages)

    def finish(self) -> tuple[Trainer, GridEvaluator, HeatmapImages | None]:
        """The new network at step 0 with fresh weights (the warm-up step is undone)."""
        if self.error is not None:
            raise self.error
        self.trainer.reset()
        return self.trainer, self.evaluator, self.heatmaps

    def cancel(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait()


def _warm(config_json: str, device_kind: str, adapter_uuid: str) -> None:
    """Child process: compile and run every kernel once on the window's adapter (its UUID; empty
    where unknown), filling the on-disk caches, saying which stage of
    app/gpu/compile_progress.py it is in."""
    from ..config.records import from_dict
    from ..gpu.gpu import create_gpu

    announce(0)
    gpu, config = create_gpu(device_kind, gpu=adapter_uuid or None), from_dict(json.loads(config_json))
    gpu.kernels.get(gpu.plan(config))
    announce(1)
    trainer = Trainer(gpu, config)  # its pipelines are built by dispatches that do nothing
    announce(2)
    evaluator = GridEvaluator(trainer, WARM_GRID)  # likewise; the pipelines don't depend on the grid
    announce(3)
    HeatmapImages(evaluator)  # evaluates the small grid and draws it
    if config.dims == 3:  # the window shows a function of (x, y, z) in the 3D view, and its surface figures
        SurfaceRender(trainer, WARM_SIDE)
        if tracks_surface(trainer.plan, config):
            SurfaceTracker(trainer, WARM_SIDE)


if __name__ == "__main__":
    _warm(sys.argv[1], sys.argv[2], sys.argv[3])
