"""StepLaunch: how a Trainer launches one step of a batch size, and the slots its workgroups sum
into. A new batch size makes a new one (Trainer.apply)."""

from __future__ import annotations

from ..gpu.gpu import Gpu
from ..kernels.launch_shape import LaunchShape
from ..kernels.paths import GradientPath
from ..kernels.plan import NetworkPlan
from ..kernels.step_units import StepUnits


class StepLaunch:
    def __init__(self, gpu: Gpu, plan: NetworkPlan, path: GradientPath, batch_size: int):
        # threads, workgroups and slots of learnGradient, as the gradient path spreads the batch
        self.shape: LaunchShape = path.launch(plan, batch_size, gpu.wave_width)
        # the step's work in units that may be recorded apart, over several frames
        self.units = StepUnits(plan, self.shape, batch_size)
        # each slot sums some samples' gradients (a workgroup's or a wave's); lane tiles keep each
        # workgroup's activations after the slots (LaunchShape.scratch_floats)
        slot_floats = self.shape.gradient_slot_count * plan.slot_stride + self.shape.scratch_floats
        self.gradient_slots = gpu.buffer(slot_floats * 4)
        self.loss_slots = gpu.buffer(self.shape.loss_slot_count * 4)
