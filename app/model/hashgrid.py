"""The multiresolution grid encodings (Müller et al. 2022, "Instant neural graphics primitives"):
`hashgrid`, whose fine levels index their table through a spatial hash, and `densegrid`, every
level stored whole; their Slang twin is shaders/model/hashgrid.slang. The tables' layout:
docs/formats.md, 'The grid tables'; how they train, with bit-reproducible fixed-point gradients:
docs/architecture.md, 'Bit-reproducible table gradients'."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..errors import UserError

GRID_EPSILON = 1e-15
FIXED_POINT_BITS = 32
INIT_RANGE = 1e-4
HASH_PRIME = 2654435761
MAX_GRID_PARAMETERS = 1 << 25  # 128 MiB of fp32 masters: a few hundred MiB with the moments


@dataclass(frozen=True)
class GridLevel:
    scale: float  # s_l, a float32 value
    resolution: int  # R: corners along each axis of the dense layout
    hashed: bool
    size: int  # entries
    offset: int  # its first entry in the tables


@dataclass(frozen=True)
class GridSettings:
    """The grid section of a Config, inside its encoding section: the grid_* fields (levels is
    grid_levels). A GridSpec is these and whether the encoding hashes."""

    levels: int
    features: int
    log2_size: int
    base_resolution: int
    level_scale: float

    def spec(self, hashed: bool) -> GridSpec:
        return GridSpec(
            self.levels, self.features, self.log2_size, self.base_resolution, float(self.level_scale), hashed
        )


@dataclass(frozen=True)
class GridSpec:
    levels: int
    features: int
    log2_size: int
    base_resolution: int
    per_level_scale: float
    hashed: bool  # hashgrid; False: densegrid

    @property
    def dim(self) -> int:
        """The encoding's width: the first layer's fan-in."""
        return self.levels * self.features

    @cached_property
    def layout(self) -> tuple[GridLevel, ...]:
        levels, offset = [], 0
        for level in range(self.levels):
            scale = float(np.float32(self.base_resolution * self.per_level_scale**level))
            resolution = math.floor(scale) + 2
            hashed = self.hashed and resolution * resolution > (1 << self.log2_size)
            size = (1 << self.log2_size) if hashed else resolution * resolution
            levels.append(GridLevel(scale, resolution, hashed, size, offset))
            offset += size
        return tuple(levels)

    @property
    def entries(self) -> int:
        last = self.layout[-1]
        return last.offset + last.size

    @property
    def param_count(self) -> int:
        return self.entries * self.features

    @property
    def finest_resolution(self) -> float:
        return self.layout[-1].scale

    def names(self) -> list[str]:
        """One label per encoded value (the network diagram)."""
        return [f"L{level} f{f}" for level in range(self.levels) for f in range(self.features)]

    def schema(self, name: str) -> dict:
        """network.json's encoding entry."""
        return {
            "kind": name,
            "levels": self.levels,
            "features": self.features,
            "log2_table_size": self.log2_size,
            "base_resolution": self.base_resolution,
            "per_level_scale": self.per_level_scale,
        }

    def initial_tables(self, rng: np.random.Generator) -> np.ndarray:
        return rng.uniform(-INIT_RANGE, INIT_RANGE, self.param_count).astype(np.float32)

    # ---- the numpy twin: forward and the tables' gradient -----------------------------------
    def corners(self, u: np.ndarray, level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For (N, 2) points u in grid units [0, 1]: each point's 4 corners' entry indices (N, 4)
        in the tables, their bilinear weights (N, 4) and the cell fractions (N, 2). Corner k is
        (k & 1, k >> 1) from the cell's lower corner."""
        spec = self.layout[level]
        pos = np.asarray(u, np.float64) * spec.scale
        cell = np.floor(pos)
        frac = pos - cell
        cell = cell.astype(np.int64)
        index, weight = [], []
        for k in range(4):
            dx, dy = k & 1, k >> 1
            x = (cell[:, 0] + dx) % (1 << 32)
            y = (cell[:, 1] + dy) % (1 << 32)
            if spec.hashed:
                entry = (x ^ ((y * HASH_PRIME) % (1 << 32))) & ((1 << self.log2_size) - 1)
            else:
                entry = (x % spec.resolution) + (y % spec.resolution) * spec.resolution
            index.append(spec.offset + entry)
            wx = frac[:, 0] if dx else 1.0 - frac[:, 0]
            wy = frac[:, 1] if dy else 1.0 - frac[:, 1]
            weight.append(wx * wy)
        return np.stack(index, axis=1), np.stack(weight, axis=1), frac

    def encode(self, u: np.ndarray, tables: np.ndarray) -> np.ndarray:
        """(N, 2) grid coordinates and the flat tables -> (N, levels * features), in float64."""
        table = np.asarray(tables, np.float64).reshape(self.entries, self.features)
        out = np.zeros((len(u), self.dim))
        for level in range(self.levels):
            index, weight, _ = self.corners(u, level)
            out[:, level * self.features : (level + 1) * self.features] = np.einsum("nk,nkf->nf", weight, table[index])
        return out

    def table_gradient(self, u: np.ndarray, d_encoded: np.ndarray) -> np.ndarray:
        """The gradient of sum(d_encoded * encode(u)) with respect to the flat tables."""
        grad = np.zeros((self.entries, self.features))
        d = np.asarray(d_encoded, np.float64)
        for level in range(self.levels):
            index, weight, _ = self.corners(u, level)
            block = d[:, level * self.features : (level + 1) * self.features]
            for k in range(4):
                np.add.at(grad, index[:, k], weight[:, k : k + 1] * block)
        return grad.ravel()


def grid_units(domain, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Points (x, y) of `domain` [x0, x1, y0, y1] as grid coordinates u in [0, 1]^2, (N, 2)."""
    x0, x1, y0, y1 = (float(v) for v in domain)
    return np.stack([(np.asarray(x, np.float64) - x0) / (x1 - x0), (np.asarray(y, np.float64) - y0) / (y1 - y0)], 1)


def check_level_scale(label: str, value) -> float:
    """Config.grid_level_scale's check: a number in [1, 4]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 1.0 <= value <= 4.0:
        raise UserError(f"{label} must be a number from 1 to 4 (got {value!r})")
    return float(value)
