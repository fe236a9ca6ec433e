"""The multiresolution grid encodings (Müller et al. 2022, "Instant neural graphics primitives"):
`hashgrid`, whose fine levels index their table through a spatial hash, and `densegrid`, every
level stored whole; their Slang twin is shaders/model/hashgrid.slang. The tables' layout:
docs/formats.md, 'The grid tables'; how they train, with bit-reproducible fixed-point gradients:
docs/architecture.md, 'Bit-reproducible table gradients'."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..errors import UserError

GRID_EPSILON = 1e-15
FIXED_POINT_BITS = 32
INIT_RANGE = 1e-4
HASH_PRIME = 2654435761
HASH_PRIME_Z = 805459861  # instant-ngp's third: a 3D corner hashes to x ^ y * HASH_PRIME ^ z * HASH_PRIME_Z
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

    def spec(self, hashed: bool, dims: int = 2) -> GridSpec:
        return GridSpec(
            self.levels, self.features, self.log2_size, self.base_resolution, float(self.level_scale), hashed, dims
        )


@dataclass(frozen=True)
class GridSpec:
    levels: int
    features: int
    log2_size: int
    base_resolution: int
    per_level_scale: float
    hashed: bool  # hashgrid; False: densegrid
    # 3: a grid of (x, y, z), whose levels hold R^3 corners. Not in the repr, which NetworkPlan's
    # module names hash: 2D's names (and kernel caches) stay as they were; a 3D plan adds its dims.
    dims: int = field(default=2, repr=False)

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
            corners = resolution**self.dims
            hashed = self.hashed and corners > (1 << self.log2_size)
            size = (1 << self.log2_size) if hashed else corners
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
        """For (N, D) points u in grid units [0, 1]^D: each point's 2^D corners' entry indices
        (N, 2^D) in the tables, their D-linear weights (N, 2^D) and the cell fractions (N, D). Corner
        k is (k & 1, (k >> 1) & 1, k >> 2) from the cell's lower corner (no z in 2D)."""
        spec = self.layout[level]
        pos = np.asarray(u, np.float64) * spec.scale
        cell = np.floor(pos)
        frac = pos - cell
        cell = cell.astype(np.int64)
        index, weight = [], []
        for k in range(1 << self.dims):
            offsets = [(k >> axis) & 1 for axis in range(self.dims)]
            coords = [(cell[:, axis] + offsets[axis]) % (1 << 32) for axis in range(self.dims)]
            if spec.hashed:
                entry = coords[0]
                for c, prime in zip(coords[1:], (HASH_PRIME, HASH_PRIME_Z)):
                    entry = entry ^ ((c * prime) % (1 << 32))
                entry = entry & ((1 << self.log2_size) - 1)
            else:
                entry = sum((c % spec.resolution) * spec.resolution**axis for axis, c in enumerate(coords))
            index.append(spec.offset + entry)
            w = 1.0
            for axis, offset in enumerate(offsets):
                w = w * (frac[:, axis] if offset else 1.0 - frac[:, axis])
            weight.append(w)
        return np.stack(index, axis=1), np.stack(weight, axis=1), frac

    def encode(self, u: np.ndarray, tables: np.ndarray) -> np.ndarray:
        """(N, D) grid coordinates and the flat tables -> (N, levels * features), in float64."""
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
            for k in range(1 << self.dims):
                np.add.at(grad, index[:, k], weight[:, k : k + 1] * block)
        return grad.ravel()


def grid_units(domain, x: np.ndarray, y: np.ndarray, z: np.ndarray | None = None) -> np.ndarray:
    """Points (x, y) of `domain` [x0, x1, y0, y1] as grid coordinates u in [0, 1]^2, (N, 2); with z,
    points of the box [x0, x1, y0, y1, z0, z1] as u in [0, 1]^3, (N, 3)."""
    bounds = [float(v) for v in domain]
    axes = (x, y) if z is None else (x, y, z)
    return np.stack(
        [(np.asarray(v, np.float64) - bounds[2 * a]) / (bounds[2 * a + 1] - bounds[2 * a]) for a, v in enumerate(axes)],
        1,
    )


def check_level_scale(label: str, value) -> float:
    """Config.grid_level_scale's check: a number in [1, 4]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 1.0 <= value <= 4.0:
        raise UserError(f"{label} must be a number from 1 to 4 (got {value!r})")
    return float(value)
