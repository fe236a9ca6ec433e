"""Group tiles: a group's threads each take a sample, and the group sums the gradients through
shared-memory tiles of x and dZ, adding into the group's slot once a sample (shaders/common/gradients.slang).
The path every network fits: the last one tried."""

from __future__ import annotations

from dataclasses import replace

from ...launch_shape import LaunchShape, thread_launch
from ...plan import NetworkPlan
from ...shadergen.derivatives import scratch_floats
from ..base import GradientPath, PathRequest

TILE_BUDGET_FLOATS = 4096  # 16 KiB of shared memory, the Vulkan minimum, for x and dZ tiles
MIN_TILE_SAMPLES, MAX_TILE_SAMPLES = 8, 256


def group_size(sizes: tuple[int, ...]) -> int:
    """As many samples a group as the tile budget holds."""
    per_sample = max(sizes[:-1]) + max(sizes[1:])
    samples = MAX_TILE_SAMPLES
    while samples > MIN_TILE_SAMPLES and samples * per_sample > TILE_BUDGET_FLOATS:
        samples //= 2
    return samples


class GroupTiles(GradientPath):
    name = sums = label = "group"
    description = "group tiles in shared memory, {group_size} threads a group"
    rates = (1.5, 1e3)  # lavapipe: 4-64-64-4 with sin
    sliced = True
    derivatives = True
    points_3d = True

    def fits(self, request: PathRequest) -> dict | None:
        sizes = request.sizes
        return dict(group_size=group_size(sizes), tile_inputs=max(sizes[:-1]), tile_outputs=max(sizes[1:]))

    def launch(self, plan: NetworkPlan, batch_size: int, wave_width: int) -> LaunchShape:
        shape = thread_launch(plan, batch_size, wave_width)
        # training on derivatives: each thread's jets wait in scratch after the slots
        return replace(shape, scratch_floats=shape.thread_count * scratch_floats(plan))

    def kernel(self, plan: NetworkPlan) -> str:
        return '#include "paths/thread/train.slang"'


GROUP = GroupTiles()
