"""The training state a Trainer holds on the GPU, read and written whole: the parameters (fp32
masters and the kernels' half copy), the optimizer state, a saved state put back (a checkpoint),
and snapshots of it all to go back to. Trainer (app/train/trainer.py) takes these methods from
TrainingState; the buffers and counters they use are made in Trainer.__init__."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import slangpy as spy

from ..config.config import Config
from ..gpu.gpu import Gpu
from ..kernels.plan import NetworkPlan
from ..kernels.step_units import StepProgress
from ..model.optimizers import OPTIMIZERS, STATE_WIDTH


@dataclass
class Snapshot:
    """A GPU-side copy of everything a step changes, to go back to (e.g. before a NaN)."""

    buffers: list[spy.Buffer]  # copies of the trainer's _state_buffers(), in their order
    step: int = 0
    optimizer_steps: int = 0
    samples_seen: int = 0
    config: Config | None = None  # the hot settings the steps after it ran with (for replay)
    data_position: int = 0


class TrainerCore:
    """What both of Trainer's mixins (TrainingState here, StepRecording in step_recording.py) read
    and write, made by Trainer.__init__."""

    gpu: Gpu
    config: Config
    plan: NetworkPlan
    master: spy.Buffer  # fp32 parameters
    weights: spy.Buffer  # what the kernels read: the masters themselves in float, a half copy in half
    optimizer_state: spy.Buffer
    step: int
    optimizer_steps: int
    samples_seen: int
    data_position: int
    version: int
    progress: StepProgress


class TrainingState(TrainerCore):
    """Trainer's state methods (they also call Trainer's abandon_step and _clear_sums, which drop
    a step recorded in part)."""

    # ---- parameters and optimizer state --------------------------------------------------
    def reset_optimizer(self) -> None:
        """Zero optimizer state and a fresh bias correction; the parameters stay."""
        self.gpu.write(self.optimizer_state, np.zeros(STATE_WIDTH * self.plan.param_count, np.float32))
        self.optimizer_steps = 0

    def set_parameters(self, params: np.ndarray) -> None:
        params = np.asarray(params, dtype=np.float32)
        self.version += 1
        self.gpu.write(self.master, params)
        if self.weights is not self.master:
            self.gpu.write(self.weights, self.path.weight_image(self.plan, params.astype(np.float16)))

    def load(
        self,
        master: np.ndarray,
        weights: np.ndarray | None,
        optimizer_state: np.ndarray,
        step: int,
        optimizer_steps: int,
        samples_seen: int,
        data_position: int = 0,
    ) -> None:
        """Puts back a saved state (a checkpoint). The half copy is written as it was saved rather
        than rounded again here, so that a resumed run is bit-identical to one never stopped.
        `optimizer_state` is the config's optimizer's (optimizer_state_values)."""
        self.set_parameters(master)
        if weights is not None and self.weights is not self.master:
            self.gpu.write(self.weights, self.path.weight_image(self.plan, np.asarray(weights, np.float16)))
        state = np.zeros(STATE_WIDTH * self.plan.param_count, np.float32)
        state[: len(optimizer_state)] = optimizer_state
        self.gpu.write(self.optimizer_state, state)
        self.step, self.optimizer_steps, self.samples_seen = step, optimizer_steps, samples_seen
        self.data_position = data_position
        if self.progress.started:
            self.abandon_step()

    def parameters(self) -> np.ndarray:
        """The fp32 master parameters, flat in the plan's layout."""
        return self.gpu.read(self.master, self.plan.param_count)

    def optimizer_state_values(self) -> np.ndarray:
        """The current optimizer's state: its k-th float of parameter i at k * param_count + i."""
        return self.gpu.read(
            self.optimizer_state, OPTIMIZERS[self.config.optimizer].state_width * self.plan.param_count
        )

    # ---- snapshots ----------------------------------------------------------------------
    def _state_buffers(self) -> list[spy.Buffer]:
        """Everything a step changes: the masters, the optimizer state and the half copy."""
        return [self.master, self.optimizer_state] + ([self.weights] if self.weights is not self.master else [])

    def new_snapshot(self) -> Snapshot:
        return Snapshot([self.gpu.buffer(buffer.size) for buffer in self._state_buffers()])

    def record_snapshot(self, encoder: spy.CommandEncoder, snap: Snapshot) -> None:
        """Records a copy of the state at a step boundary into `snap`: between steps, or in a step
        recorded in pieces before its first parameter update."""
        if self.progress.updating:
            raise RuntimeError("snapshots are taken before a step's parameter updates")
        encoder.global_barrier()
        for copy, buffer in zip(snap.buffers, self._state_buffers()):
            encoder.copy_buffer(copy, 0, buffer, 0, buffer.size)
        snap.step, snap.optimizer_steps, snap.samples_seen = self.step, self.optimizer_steps, self.samples_seen
        snap.config, snap.data_position = self.config, self.data_position

    def record_snapshot_now(self, snap: Snapshot) -> None:
        with self.gpu.submit() as encoder:
            self.record_snapshot(encoder, snap)

    def snapshot(self) -> Snapshot:
        snap = self.new_snapshot()
        self.record_snapshot_now(snap)
        return snap

    def restore(self, snap: Snapshot) -> None:
        """Puts back the state `snap` holds; a step in progress is dropped."""
        with self.gpu.submit() as encoder:
            encoder.global_barrier()
            for copy, buffer in zip(snap.buffers, self._state_buffers()):
                encoder.copy_buffer(buffer, 0, copy, 0, buffer.size)
            self._clear_sums(encoder)
        self.step, self.optimizer_steps, self.samples_seen = snap.step, snap.optimizer_steps, snap.samples_seen
        self.data_position = snap.data_position
        self.progress = StepProgress()
        self.version += 1
