"""GPU training state for one NetworkPlan: parameters (fp32 masters, plus half copies for half
precision), optimizer state, gradient and loss slots and the per-step loss ring, made here and
changed live (apply). Reading, loading and snapshotting the parameters and optimizer state:
TrainingState (app/train/training_state.py). Recording training steps into command encoders,
whole or in pieces, with the StepArgs records they read: StepRecording
(app/train/step_recording.py). No UI here."""

from __future__ import annotations

import slangpy as spy

from ..config.config import STRUCTURAL_FIELDS, Config
from ..gpu.gpu import Gpu
from ..gpu.kernel_cache import NetworkKernels
from ..kernels.launch_shape import LaunchShape
from ..kernels.paths import GradientPath, path_of
from ..kernels.plan import NetworkPlan
from ..kernels.step_units import StepProgress, StepUnits
from ..model.optimizers import STATE_WIDTH
from .loss_ring import LossRing
from .point_data import PointData, data_key
from .step_args import StepArgsRing
from .step_recording import StepRecording
from .training_state import TrainingState
from .truth_grid import follows_domain, upload_truth_grid


class Trainer(TrainingState, StepRecording):
    def __init__(self, gpu: Gpu, config: Config):
        self.gpu, self.config = gpu, config
        self.plan: NetworkPlan = gpu.plan(config)
        self.path: GradientPath = path_of(self.plan)  # how learnGradient sums (app/kernels/paths/)
        # A dataset's points (app/train/point_data.py) where the plan trains on points
        self.data = PointData.of(gpu, config) if self.plan.truth_kind == "points" else None
        self.data_position = 0  # samples drawn from these points: where the next step's begin
        self.kernels: NetworkKernels = gpu.kernels.get(self.plan)
        p = self.plan.param_count
        self.master = gpu.buffer(p * 4)
        self.weights = (
            self.master if self.plan.precision == "float" else gpu.buffer(self.path.weight_count(self.plan) * 2)
        )
        self.optimizer_state = gpu.buffer(STATE_WIDTH * p * 4)
        # A trained grid's gradients: one fixed-point sum a table value (app/model/hashgrid.py)
        self.grid_gradients = gpu.buffer(self.plan.grid_param_count * 8)
        self.truth_pixels = upload_truth_grid(gpu, self.plan, config)
        self._retired_grids: list = []  # grids replaced while dispatches recorded earlier may read them
        self.losses = LossRing(gpu)
        self._args = StepArgsRing(gpu, self.kernels.step_args)
        self.step = 0  # optimizer steps taken; also the sampler's step index
        self.optimizer_steps = 0  # steps since the optimizer state was last reset
        self.samples_seen = 0  # samples of all steps taken, whatever their batch sizes
        self.version = 0  # changes whenever the weights do (evaluations compare it)
        self.progress = StepProgress()
        self._size_slots()
        self.reset(config.seed)
        self._build_pipelines()

    # ---- buffers and state ------------------------------------------------------------------
    @property
    def batch_size(self) -> int:
        """Samples a step trains on: the config's batch size, at most the training points."""
        return self.data.batch(self.config.batch_size) if self.data is not None else self.config.batch_size

    @property
    def epochs(self) -> float:
        """Epochs over the training points drawn so far (0 for formulas)."""
        return self.data.epochs(self.data_position) if self.data is not None else 0.0

    def _size_slots(self) -> None:
        # Steps in flight (the window's, while a UI action changes the batch) reach the old slots
        # through pointers: they are freed only once those have run.
        self.gpu.device.wait()
        self.launch: LaunchShape = self.path.launch(self.plan, self.batch_size, self.gpu.wave_width)
        # Lane tiles keep each workgroup's activations after the slots (LaunchShape.scratch_floats).
        slots = self.launch.gradient_slot_count * self.plan.slot_stride + self.launch.scratch_floats
        self.gradient_slots = self.gpu.buffer(slots * 4)
        self.loss_slots = self.gpu.buffer(self.launch.loss_slot_count * 4)
        self.units = StepUnits(self.plan, self.launch, self.batch_size)
        self.abandon_step()

    def set_data(self, data: PointData) -> None:
        """New points from the next step on, their epochs from the start; a step recorded in part
        is dropped (its samples came from the old points)."""
        batch = self.batch_size
        self.data, self.data_position = data, 0
        self.version += 1  # the evaluation of the points is out of date
        if self.batch_size != batch:
            self._size_slots()
        elif self.progress.started:
            self.abandon_step()

    def abandon_step(self) -> None:
        """Drops a step recorded only in part: its gradient and loss sums are cleared."""
        with self.gpu.submit(wait=False) as encoder:
            self._clear_sums(encoder)
        self.progress = StepProgress()

    def _clear_sums(self, encoder: spy.CommandEncoder) -> None:
        encoder.clear_buffer(self.gradient_slots)
        encoder.clear_buffer(self.loss_slots)
        encoder.clear_buffer(self.grid_gradients)

    def reset(self, seed: int | None = None) -> None:
        """Fresh weights from `seed` (the config's when None), zero optimizer state, step 0."""
        if seed is not None and seed != self.config.seed:
            self.config = self.config.replace(seed=seed)
        self.set_parameters(self.plan.initial_parameters(self.config.seed))
        self.step = self.samples_seen = self.data_position = 0
        self.reset_optimizer()
        if self.progress.started:
            self.abandon_step()

    def gpu_bytes(self) -> int:
        """Device memory held by this trainer's buffers."""
        buffers = [
            *self._state_buffers(),
            self.truth_pixels,
            self.losses.buffer,
            self.gradient_slots,
            self.loss_slots,
            self.grid_gradients,
        ]
        buffers += [self.data.buffer] if self.data is not None else []
        return sum(b.memory_usage.device for b in buffers)

    # ---- live changes ---------------------------------------------------------------------
    def apply(self, config: Config) -> None:
        """Takes a config with the same plan; hot fields apply from the next piece of work. New
        data settings (another dataset of the same problem, points, noise...) make new points."""
        if self.gpu.plan(config) != self.plan:
            changed = [f for f in STRUCTURAL_FIELDS if getattr(config, f) != getattr(self.config, f)]
            raise ValueError(f"structural change ({', '.join(changed)}) needs a new Trainer")
        data = None
        if self.data is not None and data_key(config) != self.data.key:
            data = PointData.of(self.gpu, config)  # first: a UserError changes nothing
        old, batch, self.config = self.config, self.batch_size, config
        if follows_domain(self.plan) and config.domain != old.domain:
            self._retired_grids = [self.truth_pixels]
            self.truth_pixels = upload_truth_grid(self.gpu, self.plan, config)
        if data is not None:
            self.set_data(data)
        if config.optimizer != old.optimizer:
            self.reset_optimizer()
        if self.batch_size != batch:
            self._size_slots()  # the launch shape follows the batch; a step in progress restarts
