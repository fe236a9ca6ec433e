"""Lane tiles: learnGradient for wide float networks on a CPU driver, where they train wide layers many
times faster than the GPU paths (lanes.slang; the layout is layout.py, the kernel shadergen.py). A
workgroup is one subgroup; each lane owns samples of a tile, whose activations wait in a scratch
area after the gradient slots. Formulas and the squared error alone: no grid, no image's pixels."""

from __future__ import annotations

from ...launch_shape import LaunchShape, tile_launch
from ...plan import NetworkPlan
from ..base import GradientPath, PathRequest
from .layout import LANE_THREADS, LANE_TILE, MAX_LANE_GROUPS, lanes_fit, scratch_layout
from .shadergen import lanes_constants, lanes_kernel, lanes_views


class LaneTiles(GradientPath):
    name = sums = "lanes"
    label = "lane-tile"
    description = "lane tiles of {tile_samples} samples (CPU drivers), {group_size} threads a group"
    rates = (10.0, 5e3)  # lavapipe: 7.0, 8.6 and 12.0 for 4-64-64-4, 4-128-128-4 and 4-256x8-4
    sliced = True

    def fits(self, request: PathRequest) -> dict | None:
        r = request
        if not (r.cpu and r.sampled and not r.grid and not r.image and r.one_to_one):
            return None
        if not lanes_fit(r.sizes, r.precision):
            return None
        return dict(group_size=LANE_THREADS, tile_samples=LANE_TILE)

    def launch(self, plan: NetworkPlan, batch_size: int, wave_width: int) -> LaunchShape:
        return tile_launch(plan, batch_size, MAX_LANE_GROUPS, scratch_layout(plan.sizes).total)

    def loop_count(self, plan: NetworkPlan, launch: LaunchShape, batch_size: int) -> int:
        """Each workgroup's tiles."""
        tiles = -(-batch_size // plan.tile_samples)
        return -(-tiles // launch.group_count)

    def learn_unit_samples(self, plan: NetworkPlan, launch: LaunchShape, batch_size: int) -> int:
        """A unit is one tile."""
        return plan.tile_samples

    def kernel(self, plan: NetworkPlan) -> str:
        return f'\n{lanes_constants(plan)}\n#include "paths/lanes/lanes.slang"\n\n{lanes_kernel(plan)}'

    def views(self, plan: NetworkPlan) -> str:
        return lanes_views(plan)


LANES = LaneTiles()
