"""Workgroup tiles: a workgroup moves tiles of samples through every layer in shared memory,
forward then backward, its products on the shader cores or on tensor cores, and holds its
gradient sums in registers over its whole sample loop (tiles.slang; the layout is
layout.py, the kernel shadergen.py)."""

from __future__ import annotations

from ... import launch_shape
from ...launch_shape import LaunchShape, tile_launch
from ...plan import NetworkPlan
from ..base import GradientPath, PathRequest
from .layout import TILED_THREADS, workgroup_tiles
from .shadergen import tile_constants, tiles_kernel


def emulation_define(plan: NetworkPlan) -> str:
    """The line that makes the tensor-core kernels' products plain loops (shaders/common/mma_emulated.slang)
    where the plan emulates them, before their includes; else nothing."""
    return (
        "\n#define EMULATED_MMA 1  // products in plain loops (shaders/common/mma_emulated.slang)"
        if plan.emulated_mma
        else ""
    )


class WorkgroupTiles(GradientPath):
    name = sums = "tiles"
    label = "workgroup"
    description = "workgroup tiles of {tile_samples} samples, {group_size} threads a group"
    rates = (1.2, 5e3)  # lavapipe: 4-64-64-4
    side_by_side = True
    points_3d = True

    def fits(self, request: PathRequest) -> dict | None:
        r = request
        tensor_cores = r.tensor_cores and r.squared and r.matmul == "auto"
        tiles = workgroup_tiles(r.sizes, r.layers, r.precision, tensor_cores, r.grid)
        if tiles is None:
            return None
        samples, pad, mma = tiles
        return dict(group_size=TILED_THREADS, mma=mma, tile_samples=samples, tile_pad=pad)

    def launch(self, plan: NetworkPlan, batch_size: int, wave_width: int) -> LaunchShape:
        return tile_launch(plan, batch_size, launch_shape.MAX_TILE_GROUPS)

    def learn_unit_samples(self, plan: NetworkPlan, launch: LaunchShape, batch_size: int) -> int:
        """A workgroup walks every group_count-th tile."""
        tiles = -(-batch_size // plan.tile_samples)
        return -(-tiles // launch.group_count) * plan.tile_samples

    def kernel(self, plan: NetworkPlan) -> str:
        products = (
            '\n#include "paths/tiles/tiles_mma.slang"' if any(plan.mma) else '\n#include "paths/tiles/tiles_simt.slang"'
        )
        products = emulation_define(plan) + products
        grid = '\n#include "paths/tiles/hashgrid_tiles.slang"' if plan.grid else ""
        return f'\n{tile_constants(plan)}\n#include "paths/tiles/tiles.slang"{products}{grid}\n\n{tiles_kernel(plan)}'

    def products_note(self, plan: NetworkPlan) -> str:
        """Half precision would multiply on tensor cores but for the loss."""
        return (
            " (tensor cores take the squared error only)"
            if plan.precision == "half" and plan.loss_name != "squared"
            else ""
        )


TILES = WorkgroupTiles()
