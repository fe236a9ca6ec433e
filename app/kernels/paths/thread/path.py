"""Thread accumulators: each thread keeps the gradient sums of its samples in registers, and a
wave sums them once at the end (train.slang). The path of small networks: past
MAX_THREAD_ACCUMULATORS parameters the sums spill out of registers."""

from __future__ import annotations

from ...launch_shape import LaunchShape, thread_launch
from ...plan import NetworkPlan
from ..base import GradientPath, PathRequest

# Up to this many parameters, each thread keeps its gradient sums in registers; above it they
# spill, so the group sums gradients through shared-memory tiles (shaders/common/gradients.slang),
# far faster there (docs/benchmarks.md, 'Before tensor cores, and what limited the workgroup tiles').
MAX_THREAD_ACCUMULATORS = 192
THREAD_ACCUMULATOR_GROUP_SIZE = 256


class ThreadAccumulators(GradientPath):
    name = sums = label = "thread"
    description = "thread accumulators (registers), {group_size} threads a group"
    rates = (2.6, 5e3)  # lavapipe: 4-16-4
    thread_accumulators = True
    quick_compile = True
    derivatives = True
    points_3d = True

    def fits(self, request: PathRequest) -> dict | None:
        if request.mlp_param_count > MAX_THREAD_ACCUMULATORS:
            return None
        return dict(group_size=THREAD_ACCUMULATOR_GROUP_SIZE)

    def launch(self, plan: NetworkPlan, batch_size: int, wave_width: int) -> LaunchShape:
        return thread_launch(plan, batch_size, wave_width)

    def kernel(self, plan: NetworkPlan) -> str:
        return '#include "paths/thread/train.slang"'


THREAD = ThreadAccumulators()
