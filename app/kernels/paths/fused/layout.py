"""The fully fused tensor-core trainer's layout (fused.slang) for a network's layer sizes:
the shared-memory slots the samples' activations and gradients pass through, the staged first and
last layers, and which weight-gradient tiles each subgroup holds in registers. None where the
network does not fit: then the workgroup tiles' path takes it (app/kernels/paths/)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .fragments import fragment_slot

# (subgroups of 32 a workgroup, samples a tile). Each subgroup owns 16 of the tile's rows for the
# narrow first and output layers (subgroups past samples / 16 own none) and a share of the
# column tiles and weight-gradient tiles of every layer. Eight subgroups on 64 samples are fastest
# where every column-split layer keeps all eight busy, slower where some idle; eight on 32 samples
# fit wider networks (half the samples in shared memory, half the gradient tiles a subgroup).
# The figures: docs/benchmarks.md, 'Tile shapes'.
FUSED_BUSY_SHAPE = (8, 64)  # first, where every column-split layer keeps every subgroup busy
FUSED_SHAPES = ((4, 64), (8, 32))  # then the first of these that fits
# With derivative terms (fused_jets.slang) each sample is 3 rows: its value and its
# tangents along x and y, a row block each, so a tile holds groups of 16 samples, 48 rows a group.
# Two groups (96 rows) keep a column split of 2 busy but overrun 48 KB for 64-wide layers.
JET_CHANNELS = 3
JET_BUSY_SHAPE = (8, 32)
JET_SHAPES = ((4, 16),)
FUSED_SHARED_BUDGET = 48 << 10  # bytes: what Vulkan gives a workgroup on NVIDIA
# fp32 16x16 accumulator tiles a subgroup holds over its tile loop (8 registers a lane each):
# past this the weight gradients would spill out of registers.
FUSED_MAX_ACCUMULATORS = 16
# Registers of data a lane holds over the whole step where the hidden layers' weight tiles are
# held too (8 an accumulator tile, 4 a weight tile): up to it holding them once a step beats
# reloading them every tile, past it registers spill (docs/benchmarks.md, 'Held weights').
HOLD_REGISTER_BUDGET = 168
STAGE_HALVES = 32  # the output layer's fp32 stage: 16 floats a row
UINT4_HALVES = 8
# SlangPy's CUDA backend loads a column-major 16x16 B operand as two 16x8 halves, and in each
# half lanes 16-31 also read the 8 columns after it (their values go unused): 8 strides past
# the operand. The column-major B operands are the staged first and last layers' W^T and the
# e_j window; the last two end shared memory, which runs on until those reads stay inside
# (else compute-sanitizer: "Invalid __shared__ read", and 128-128 failed to launch).
CUDA_OVERREAD_COLUMNS = 8


def _pad(size: int) -> int:
    return -(-size // 16) * 16


@dataclass(frozen=True)
class GradientBlocks:
    """One layer's dW tiles (TO x TI of them) in blocks of BO x BI; subgroup w holds blocks
    w, w + warps, ... (R rounds)."""

    to: int
    ti: int
    bo: int
    bi: int
    rounds: int


@dataclass(frozen=True)
class WeightCopy:
    """A hidden layer's weights copied after the parameters in the half weights buffer as the B
    operands of its products, 16x16 tiles of 256 halves stored fragment-native (fragment_slot):
    for the forward pass W^T's tiles (tile (o, i) at o * In/16 + i: element (k, n) = W[16o + n][16i + k]),
    for the backward pass W's (tile (i, o) at i * Out/16 + o: element (k, n) = W[16o + k][16i + n])."""

    layer: int
    offset: int  # the layer's first weight in the parameters
    fan_in: int
    fan_out: int
    forward: int  # first half of the forward copy
    backward: int

    def tiles(self, weights) -> tuple:
        """The two copies of `weights` (Out x In, numpy), flat."""
        ti, to = self.fan_in // 16, self.fan_out // 16
        k, n = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
        slots = fragment_slot(k, n).ravel()
        forward = np.zeros((to, ti, 256), weights.dtype)
        backward = np.zeros((ti, to, 256), weights.dtype)
        blocks = weights.reshape(to, 16, ti, 16).transpose(0, 2, 1, 3)  # [o tile][i tile][o][i]
        forward[:, :, slots] = blocks.transpose(0, 1, 3, 2).reshape(to, ti, 256)  # (k, n) = (i, o)
        backward[:, :, slots] = blocks.transpose(1, 0, 2, 3).reshape(ti, to, 256)  # (k, n) = (o, i)
        return forward.ravel(), backward.ravel()


@dataclass(frozen=True)
class FusedLayout:
    warps: int  # subgroups of 32 a workgroup
    samples: int  # a tile's samples: 16 for each of the first samples / 16 subgroups
    widths: tuple[int, ...]  # each slot's row, in halves
    strides: tuple[int, ...]  # ...and its row stride in uint4 (a 16-byte skew against bank conflicts)
    bases: tuple[int, ...]  # first uint4 of each slot
    first_w: int  # layer 0's weights, Out x pad(In), zero-padded
    first_stride: int
    last_w: int  # the output layer's weights, 16 x In, zero-padded rows
    last_stride: int
    last_b: int  # its biases, 16 halves
    ones: int  # 32 columns of 16 halves, column 16 ones: e_j for the bias gradients
    words: int  # the uint4 array's length
    blocks: tuple[GradientBlocks, ...]
    copies: tuple[WeightCopy, ...]
    weight_halves: int  # the half weights buffer: the parameters, then the copies
    channels: int = 1  # rows a sample: 1, or JET_CHANNELS with derivative terms (value, tangents)

    def weight_image(self, weights):
        """The half weights buffer for `weights` (the parameters, numpy): them, then the copies."""
        image = np.zeros(self.weight_halves, weights.dtype)
        image[: weights.size] = weights
        for copy in self.copies:
            w = weights[copy.offset : copy.offset + copy.fan_in * copy.fan_out].reshape(copy.fan_out, copy.fan_in)
            forward, backward = copy.tiles(w)
            image[copy.forward : copy.forward + forward.size] = forward
            image[copy.backward : copy.backward + backward.size] = backward
        return image

    @property
    def threads(self) -> int:
        return 32 * self.warps

    @property
    def rows(self) -> int:
        """A tile's rows in shared memory: a row a sample, or a sample's value and tangents."""
        return self.samples * self.channels

    @property
    def row_blocks(self) -> int:
        """The tile's blocks of 16 rows."""
        return self.rows // 16

    @property
    def groups(self) -> int:
        """Subgroups that own 16 of the tile's samples for the first and output layers (the first
        samples / 16): their rows, or with derivative terms their three blocks of rows."""
        return self.samples // 16

    @property
    def shared_bytes(self) -> int:
        return self.words * 16

    @property
    def accumulators(self) -> int:
        """fp32 tiles a subgroup holds: its dW blocks, and one tile for every layer's biases."""
        return sum(b.rounds * b.bo * b.bi for b in self.blocks) + 1

    def rounds(self, tiles: int) -> int:
        """Rounds of output tiles a subgroup takes in a layer split by columns into `tiles`."""
        return -(-tiles // self.warps)

    def column_split(self, tiles: int) -> int:
        """How many subgroups share each of a column-split layer's `tiles` output tiles, each
        taking a part of the tile's row blocks: where the layer has fewer tiles than there are
        subgroups and both divide evenly, so that no subgroup idles; else 1."""
        split = self.warps // tiles if tiles < self.warps and self.warps % tiles == 0 else 1
        return split if self.groups % split == 0 else 1

    @property
    def keeps_subgroups_busy(self) -> bool:
        """Whether every layer split by columns (a hidden layer's weight copy, both ways) gives
        each subgroup the same share: whole rounds of tiles, or one tile shared evenly."""
        tiles = [t for copy in self.copies for t in (copy.fan_in // 16, copy.fan_out // 16)]
        return bool(tiles) and all(self.rounds(t) * self.warps == t * self.column_split(t) for t in tiles)

    @property
    def held_tiles(self) -> int:
        """Weight tiles a subgroup multiplies with in the hidden layers split by columns: for each
        of its rounds of output tiles, a whole column of input tiles, forward and backward."""
        held = 0
        for copy in self.copies:
            ti, to = copy.fan_in // 16, copy.fan_out // 16
            held += self.rounds(to) * ti + self.rounds(ti) * to
        return held

    @property
    def holds_weights(self) -> bool:
        """Whether the hidden layers' weight tiles are loaded once a step (else once a tile)."""
        return self.accumulators * 8 + self.held_tiles * 4 <= HOLD_REGISTER_BUDGET

    @property
    def bias_columns(self) -> tuple[int, ...]:
        """Each layer's first column in the subgroup's bias tile (shadergen.py)."""
        columns, column = [], 0
        for b in self.blocks:
            columns.append(column)
            column += b.rounds * b.bo
        return (*columns, column)


def _blocks(to: int, ti: int, warps: int) -> GradientBlocks:
    """The block shape with the least work for the busiest subgroup, then the fewest loads."""
    best = None
    for bo in (d for d in range(1, to + 1) if to % d == 0):
        for bi in (d for d in range(1, ti + 1) if ti % d == 0):
            rounds = -(-(to // bo) * (ti // bi) // warps)
            key = (rounds * bo * bi, rounds * (bo + bi))
            if best is None or key < best[0]:
                best = (key, GradientBlocks(to, ti, bo, bi, rounds))
    return best[1]


@functools.lru_cache(maxsize=64)
def fused_layout(sizes: tuple[int, ...], jets: bool = False, tables: int = 0, point_dim: int = 2) -> FusedLayout | None:
    """The layout for layer sizes (input, hidden..., output): the busy shape where it fits and
    keeps every subgroup busy, else the first of the other shapes it fits (FUSED_ or, with
    `jets`, a loss with derivative terms, JET_); None where the hidden widths are not multiples
    of 16, the output is wider than 16, or every shape overruns shared memory or registers.
    `tables`: a grid encoding's table values, which follow the MLP's parameters in the weights
    buffer (the copies then follow them), and whose input gradient the tile passes through slot 1
    as floats (fused_grid.slang); a grid takes no derivative terms here. `point_dim`: the
    coordinates of the points a grid keeps for the tile, 2 or 3."""
    if len(sizes) < 3 or sizes[-1] > 16 or any(w % 16 for w in sizes[1:-1]) or (jets and tables):
        return None
    busy_shape, shapes = (JET_BUSY_SHAPE, JET_SHAPES) if jets else (FUSED_BUSY_SHAPE, FUSED_SHAPES)
    channels = JET_CHANNELS if jets else 1
    busy = _layout(sizes, *busy_shape, channels, tables, point_dim)
    if busy is not None and busy.keeps_subgroups_busy:
        return busy
    for warps, samples in shapes:
        layout = _layout(sizes, warps, samples, channels, tables, point_dim)
        if layout is not None:
            return layout
    return None


def _layout(
    sizes: tuple[int, ...], warps: int, samples: int, channels: int = 1, tables: int = 0, point_dim: int = 2
) -> FusedLayout | None:
    layers = len(sizes) - 1
    padded = [_pad(s) for s in sizes]
    widths = [padded[0]]
    for j in range(1, layers):  # H_j, and from slot 2 on the dZ of layer j - 2
        widths.append(max(padded[j], padded[j - 1] if j >= 2 else 0))
    if tables:  # slot 1 also holds the input gradient dX, a float (two halves' room) per input
        widths[1] = max(widths[1], 2 * padded[0])
    widths.append(max(padded[layers - 1], STAGE_HALVES))  # dZ of layer L-2, and the fp32 stage
    widths.append(padded[layers])  # dZ of the output layer
    strides = [w // UINT4_HALVES + 1 for w in widths]
    bases, word = [], 0
    for stride in strides:
        bases.append(word)
        word += stride * samples * channels
    first_stride = padded[0] // UINT4_HALVES + (1 if padded[0] > 16 else 0)
    last_stride = padded[-2] // UINT4_HALVES + 1
    first_w = word
    last_w = first_w + sizes[1] * first_stride
    last_b = last_w + 16 * last_stride
    ones = last_b + 2
    overread = max(last_w + (16 + CUDA_OVERREAD_COLUMNS) * last_stride, ones + (32 + CUDA_OVERREAD_COLUMNS) * 2)
    words = max(ones + 64, overread)
    blocks = tuple(_blocks(padded[k + 1] // 16, padded[k] // 16, warps) for k in range(layers))
    copies, offset = [], 0
    params = sum(i * o + o for i, o in zip(sizes[:-1], sizes[1:])) + tables
    end = -(-params // UINT4_HALVES) * UINT4_HALVES
    for k, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        if 0 < k < layers - 1:
            copies.append(WeightCopy(k, offset, fan_in, fan_out, end, end + fan_in * fan_out))
            end += 2 * fan_in * fan_out
        offset += fan_in * fan_out + fan_out
    layout = FusedLayout(
        warps,
        samples,
        tuple(widths),
        tuple(strides),
        tuple(bases),
        first_w,
        first_stride,
        last_w,
        last_stride,
        last_b,
        ones,
        words,
        blocks,
        tuple(copies),
        end,
        channels,
    )
    # The end of the kernel stages each subgroup's fp32 tile (64 uint4) and each thread's loss there;
    # a grid keeps the tile's points (a float2 or float3 a sample) beside the array.
    points = samples * 4 * point_dim if tables else 0
    if layout.shared_bytes + points > FUSED_SHARED_BUDGET or words < 64 * warps:
        return None
    if layout.accumulators > FUSED_MAX_ACCUMULATORS or layout.bias_columns[-1] > 16:
        return None
    return layout
