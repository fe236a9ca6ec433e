"""Pairs: thread accumulators in half precision, two samples at a time packed two to a register
(pairs.slang, the per-layer chain printed by shadergen.py). The pair
kernel samples the domain and takes the squared error itself, so a dataset's points, an image,
a grid or another loss train on the one-sample thread kernel instead."""

from __future__ import annotations

import numpy as np

from ...launch_shape import LaunchShape, thread_launch
from ...plan import NetworkPlan
from ..base import PathRequest
from ..thread.path import ThreadAccumulators
from .shadergen import PAIR_LINE_HALVES, pair_kernel


class Pairs(ThreadAccumulators):
    name = "pairs"
    description = "thread accumulators (registers), two samples at a time in half2, {group_size} threads a group"
    derivatives = False  # its kernel is pairs.slang's, which has no nested derivative pass
    points_3d = False  # ...and which samples (x, y) itself

    def fits(self, request: PathRequest) -> dict | None:
        formula = not (request.points or request.image or request.grid)
        if request.precision != "half" or not (formula and request.squared):
            return None
        return super().fits(request)

    def launch(self, plan: NetworkPlan, batch_size: int, wave_width: int) -> LaunchShape:
        return thread_launch(plan, batch_size, wave_width, samples_a_lane=2)

    def kernel(self, plan: NetworkPlan) -> str:
        return f"\n{pair_kernel(plan)}"

    def weight_count(self, plan: NetworkPlan) -> int:
        """The parameters, then zeros to a whole number of the 16-byte lines pairs read."""
        return -(-plan.param_count // PAIR_LINE_HALVES) * PAIR_LINE_HALVES

    def weight_image(self, plan: NetworkPlan, weights: np.ndarray) -> np.ndarray:
        return np.concatenate([weights, np.zeros(self.weight_count(plan) - len(weights), weights.dtype)])


PAIRS = Pairs()
