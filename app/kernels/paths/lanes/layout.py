"""Lane tiles (lanes.slang): learnGradient for wide float networks on a CPU driver. Which
networks take them, how many samples a tile holds, and the scratch area each workgroup keeps its
tile's activations in, laid out once here for the plan (its size), the generated kernel (its
offsets) and the tests."""

from __future__ import annotations

from dataclasses import dataclass

# A workgroup is one subgroup of lavapipe (8 lanes), each lane owning LANE_SAMPLES samples of a
# tile. Few groups: a CPU runs a couple at once, and each adds a gradient slot to sum.
LANE_THREADS, LANE_SAMPLES = 8, 8
LANE_TILE = LANE_THREADS * LANE_SAMPLES
MAX_LANE_GROUPS = 32
MAX_ROWS = 8  # rows of an operand a lane holds in registers


def pad4(width: int) -> int:
    return -(-width // 4) * 4


def lanes_fit(sizes: tuple[int, ...], precision: str) -> bool:
    """Float networks whose hidden widths are multiples of 4 (rows of W are read as float4s);
    their activations' derivatives must follow from their outputs too (path.py)."""
    return precision == "float" and all(w % 4 == 0 for w in sizes[1:-1])


@dataclass(frozen=True)
class ScratchLayout:
    """Offsets in floats within a workgroup's scratch: each layer's activations (the encoded input
    first, the outputs last) feature-major [width][LANE_TILE] and sample-major [LANE_TILE][pad4],
    then two blocks of dZ that take turns, and the total."""

    feature_major: tuple[int, ...]
    sample_major: tuple[int, ...]
    gradients: tuple[int, int]
    total: int


def scratch_layout(sizes: tuple[int, ...]) -> ScratchLayout:
    offset, feature, sample = 0, [], []
    for width in sizes:
        feature.append(offset)
        offset += width * LANE_TILE
    for width in sizes:
        sample.append(offset)
        offset += pad4(width) * LANE_TILE
    block = pad4(max(sizes[1:])) * LANE_TILE
    return ScratchLayout(tuple(feature), tuple(sample), (offset, offset + block), offset + 2 * block)
