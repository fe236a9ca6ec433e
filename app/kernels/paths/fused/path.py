"""The fully fused tensor-core trainer: workgroup tiles whose every product runs on cooperative
matrices, the hidden weights held in registers as fragment-native copies that adjustParameters keeps
beside them. Half precision, any truth and loss, a grid as the input layer, on a device whose
operand layout the copies match (this folder's README.md)."""

from __future__ import annotations

import numpy as np

from ...launch_shape import LaunchShape, tile_launch
from ...plan import NetworkPlan
from ..base import PathRequest
from ..tiles.path import WorkgroupTiles, emulation_define
from .layout import fused_layout
from .shadergen import fused_constants, fused_kernel, layout_of

# Two 128-thread workgroups an SM ran fastest on an H200 (2^16 and 2^20); as many threads in
# groups of 256.
FUSED_MAX_THREADS = 264 * 128


class FusedTrainer(WorkgroupTiles):
    name = "fused"
    # A loss with derivative terms takes its own layer functions: each sample's value and tangents
    # as three rows of the tile (fused_jets.slang)
    derivatives = True
    points_3d = True  # (x, y, z) too, but for derivative terms (fits)
    description = "the fused tensor-core trainer: tiles of {tile_samples} samples, 16 a subgroup, {group_size} threads"

    def fits(self, request: PathRequest) -> dict | None:
        r = request
        allowed = r.tensor_cores and r.fused and r.matmul == "auto"  # any truth, any loss
        if not allowed or r.precision != "half" or not r.one_to_one:
            return None
        if r.point_dim == 3 and r.derivatives:  # fused_jets.slang carries (x, y) tangents only
            return None
        layout = fused_layout(r.sizes, jets=r.derivatives, tables=r.grid_params, point_dim=r.point_dim)
        if layout is None:
            return None
        return dict(group_size=layout.threads, mma=tuple(True for _ in r.layers), tile_samples=layout.samples)

    def launch(self, plan: NetworkPlan, batch_size: int, wave_width: int) -> LaunchShape:
        return tile_launch(plan, batch_size, FUSED_MAX_THREADS // plan.group_size)

    def kernel(self, plan: NetworkPlan) -> str:
        includes = '#include "paths/fused/fused.slang"\n#include "paths/fused/fused_layers.slang"\n#include "paths/fused/fused_gradients.slang"'
        if plan.grid is not None:
            includes += '\n#include "paths/fused/fused_grid.slang"'
        if plan.derivatives:
            includes += '\n#include "paths/fused/fused_jets.slang"'
        return f"\n{fused_constants(plan)}{emulation_define(plan)}\n{includes}\n\n{fused_kernel(plan)}"

    def derivative_part(self, plan: NetworkPlan) -> str:
        """The terms and jets of derivatives.slang without derivativeSample: the layers carry
        each sample's tangents themselves (fused_jets.slang)."""
        if not plan.derivatives:
            return super().derivative_part(plan)
        return '#define DERIVATIVE_LOSS 1\n#include "model/derivatives.slang"'

    def weight_copies(self, plan: NetworkPlan) -> tuple:
        return layout_of(plan).copies

    def weight_count(self, plan: NetworkPlan) -> int:
        """The parameters, then the block copies of the hidden layers."""
        return layout_of(plan).weight_halves

    def weight_image(self, plan: NetworkPlan, weights: np.ndarray) -> np.ndarray:
        return layout_of(plan).weight_image(weights)


FUSED = FusedTrainer()
