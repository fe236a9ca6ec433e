"""Which gradient path a network trains on (app/kernels/plan.py keeps the answer in its NetworkPlan):
thread accumulators in registers, group tiles, workgroup tiles (SIMT or tensor cores), the
fully fused tensor-core trainer, or lane tiles on a CPU driver; with each its group size and
tile shape."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..config.config import Structure
from .fused_layout import fused_layout
from .lane_tiles import LANE_THREADS, LANE_TILE, lanes_fit

if TYPE_CHECKING:
    from .plan import LayerPlan

# Up to this many parameters, each thread keeps its gradient sums in registers; above it they
# spill, so the group sums gradients through shared-memory tiles (shaders/gradients.slang).
# On an H200 a 4-16-16-4 network (420 parameters) ran 26x faster with tiles than with
# accumulators, and 1,284 accumulators failed to build a pipeline.
MAX_THREAD_ACCUMULATORS = 192
THREAD_ACCUMULATOR_GROUP_SIZE = 256
TILE_BUDGET_FLOATS = 4096  # 16 KiB of shared memory, the Vulkan minimum, for x and dZ tiles
MIN_TILE_SAMPLES, MAX_TILE_SAMPLES = 8, 256

# Workgroup tiles (shaders/tiles.slang), for networks past the thread accumulators when they fit:
# shared memory for a tile's activations, registers for the weight-gradient accumulators.
TILED_THREADS = 256
TILE_SHARED_BUDGET = 48 << 10  # bytes: Vulkan on an H200 takes 48 KiB (64 lost the device)
MAX_MMA_TILES_PER_WARP = 12  # fp32 accumulator tiles a warp holds (8 registers a lane each)
MMA_SUBGROUP = 32  # cooperative matrices work per 32-lane subgroup (NVIDIA)


def choose_gradient_path(
    s: Structure,
    sizes: tuple[int, ...],
    layers: list[LayerPlan],
    tensor_cores: bool,
    fused: bool,
    cpu: bool,
    *,
    squared: bool,
    points: bool,
    grid: bool,
    image: bool,
) -> dict:
    """A NetworkPlan's gradient path fields (gradient_path, group_size and, for tiles, mma,
    tile_samples, tile_pad and fused) for a network of `sizes` and `layers` whose loss is the
    squared error or not, trained on a dataset's `points` or not, with a trained `grid` or an
    `image` as the truth or not."""
    if layers[-1].end <= MAX_THREAD_ACCUMULATORS:
        return dict(gradient_path="thread", group_size=group_size(sizes, True))
    # The tensor-core kernels and the CPU's lane tiles compute the squared error's output gradient
    # inline, and draw their own samples over the domain: the other losses and a dataset's points
    # train on SIMT tiles (the header of the generated module says so). The fused trainer has no
    # input gradient for a grid's tables, so a grid network takes the tiles too; lane tiles train
    # formulas alone (no grid, no image's pixels).
    sampled = squared and not points
    if not grid and fused_fits(sizes, layers, s.precision, fused and sampled and s.matmul == "auto"):
        layout = fused_layout(sizes)
        return dict(
            gradient_path="tiles",
            group_size=layout.threads,
            mma=tuple(True for _ in layers),
            tile_samples=layout.samples,
            fused=True,
        )
    lanes = cpu and sampled and not grid and not image
    if lanes and lanes_fit(sizes, [layer.activation.name for layer in layers], s.precision):
        return dict(gradient_path="lanes", group_size=LANE_THREADS, tile_samples=LANE_TILE)
    tiles = workgroup_tiles(sizes, layers, s.precision, tensor_cores and squared and s.matmul == "auto", grid)
    if tiles is not None:
        samples, pad, mma = tiles
        return dict(gradient_path="tiles", group_size=TILED_THREADS, mma=mma, tile_samples=samples, tile_pad=pad)
    return dict(gradient_path="group", group_size=group_size(sizes, False))


def group_size(sizes: tuple[int, ...], thread_accumulators: bool) -> int:
    """learnGradient's group size: for group tiles, as many samples as the tile budget holds."""
    if thread_accumulators:
        return THREAD_ACCUMULATOR_GROUP_SIZE
    per_sample = max(sizes[:-1]) + max(sizes[1:])
    samples = MAX_TILE_SAMPLES
    while samples > MIN_TILE_SAMPLES and samples * per_sample > TILE_BUDGET_FLOATS:
        samples //= 2
    return samples


def tile_height(size: int, mma: bool) -> int:
    return -(-size // 16) * 16 if mma else size


def workgroup_tiles(
    sizes: tuple[int, ...], layers: list[LayerPlan], precision: str, tensor_cores: bool, grid: bool = False
):
    """(samples a tile, row pad, per-layer tensor-core flags) for workgroup tiles (with a trained
    grid, `grid`: room for the input's gradient and the tile's points), or None where they don't
    apply: sin (tiles keep outputs and derive gradients from them, and sin is not
    one-to-one), or no tile that fits in shared memory. On tensor cores every layer is a product:
    the hidden widths must be multiples of 16, and the narrow first and last layers are padded
    to 16 (their weights staged in shared memory); past MAX_MMA_TILES_PER_WARP accumulator
    tiles a warp, SIMT tiles instead."""
    if any(layer.activation.name == "sin" for layer in layers):
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
    # Tensor cores load 16-byte aligned rows. Without a pad (stride 64 bytes) shared-memory bank
    # conflicts made 2-64-64-64-4 30% slower on an H200 than with a pad of 8 halves.
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


def fused_fits(sizes: tuple[int, ...], layers: list[LayerPlan], precision: str, tensor_cores: bool) -> bool:
    """The fully fused trainer: half precision on cooperative matrices, activations whose
    derivative follows from their output (not sin), and a network that fits its layout."""
    return (
        tensor_cores
        and precision == "half"
        and all(layer.activation.name != "sin" for layer in layers)
        and fused_layout(sizes) is not None
    )
