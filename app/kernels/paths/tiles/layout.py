"""Workgroup tiles (tiles.slang): a workgroup moves tiles of samples through every layer in
shared memory, forward then backward, its products on the shader cores (SIMT) or on tensor cores.
Which networks fit, with how many samples a tile and what row padding, laid out once here for the
path (path.py) and the generated kernel (shadergen.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the plan's types only: this module stays below app/kernels/plan.py
    from ...plan import LayerPlan

# Shared memory for a tile's activations, registers for the weight-gradient accumulators.
TILED_THREADS = 256
TILE_SHARED_BUDGET = 48 << 10  # bytes: the most Vulkan on NVIDIA gave a workgroup (64 KiB lost the device)
MAX_MMA_TILES_PER_WARP = 12  # fp32 accumulator tiles a warp holds (8 registers a lane each)
MMA_SUBGROUP = 32  # cooperative matrices work per 32-lane subgroup (NVIDIA)


def tile_height(size: int, mma: bool) -> int:
    """A layer's rows in shared memory: padded to 16 for tensor cores."""
    return -(-size // 16) * 16 if mma else size


def workgroup_tiles(
    sizes: tuple[int, ...], layers: Sequence[LayerPlan], precision: str, tensor_cores: bool, grid: bool = False
):
    """(samples a tile, row pad, per-layer tensor-core flags) for workgroup tiles (with a trained
    grid, `grid`: room for the input's gradient and the tile's points), or None where they don't
    apply: an activation whose derivative can't be taken from its output (tiles keep outputs and
    derive gradients from them), or no tile that fits in shared memory. On tensor cores every
    layer is a product: the hidden widths must be multiples of 16, and the narrow first and last
    layers are padded to 16 (their weights staged in shared memory); past MAX_MMA_TILES_PER_WARP
    accumulator tiles a warp, SIMT tiles instead."""
    if not all(layer.activation.derivative_from_output for layer in layers):
        return None
    mma = tensor_cores and precision == "half" and all(w % 16 == 0 for w in sizes[1:-1])
    warps = TILED_THREADS // MMA_SUBGROUP
    padded = [tile_height(size, mma) for size in sizes]
    if (
        mma
        and sum(-(-(o // 16) * (i // 16) // warps) for i, o in zip(padded[:-1], padded[1:])) > MAX_MMA_TILES_PER_WARP
    ):
        return workgroup_tiles(sizes, layers, precision, False, grid)
    element = 2 if precision == "half" else 4
    # Tensor cores load 16-byte aligned rows, and without a pad (a stride of 64 bytes) shared-memory
    # bank conflicts slowed them (docs/benchmarks.md): 8 halves.
    pad = 8 if mma else (2 if element == 2 else 1)
    fixed = TILED_THREADS * 4  # the loss partials
    if mma:  # each warp's fp32 stage, the padded narrow weights
        fixed += warps * 256 * 4 + (padded[1] * padded[0] + padded[-1] * padded[-2]) * 2
    # The gradient blocks hold dZ and dH of every layer; with a trained grid, dH of the input too.
    grad_rows = max(padded if grid else padded[1:])
    for samples in (64, 32, 16):
        points = 2 * samples * 4 if grid else 0  # the tile's points, for the grid's backward pass
        shared = (sum(padded) + 2 * grad_rows) * (samples + pad) * element + (sizes[-1] + 1) * samples * 4 + fixed
        shared += points
        if shared <= TILE_SHARED_BUDGET:
            return samples, pad, tuple(mma for _ in layers)
    return None
