"""An independent numpy reference of the grid encodings, written from the docs' description
(not from app/model/hashgrid.py): level l has scale s = float32(base * b^l) and R = floor(s) + 2
corners a side; it is hashed (hashgrid only) when R^2 > 2^T, with entry (x ^ y * 2654435761) mod
2^T, else stored whole with entry x + y * R; a point's grid coordinates are (p - lo) / (hi - lo).
Plus the loss and gradient of a whole network with such an encoding, in float64."""

from __future__ import annotations

import numpy as np
from reference import activate, activation_derivative

PRIME = 2654435761


def levels(config) -> list[tuple[float, int, bool, int, int]]:
    """(scale, R, hashed, size, first entry) per level."""
    out, first = [], 0
    for level in range(config.grid_levels):
        scale = float(np.float32(config.grid_base_resolution * config.grid_level_scale**level))
        side = int(np.floor(scale)) + 2
        hashed = config.encoding == "hashgrid" and side * side > 2**config.grid_log2_size
        size = 2**config.grid_log2_size if hashed else side * side
        out.append((scale, side, hashed, size, first))
        first += size
    return out


def table_size(config) -> int:
    scale, side, hashed, size, first = levels(config)[-1]
    return (first + size) * config.grid_features


def _entry(config, level, cx: int, cy: int) -> int:
    scale, side, hashed, size, first = level
    x, y = cx % 2**32, cy % 2**32
    if hashed:
        return first + ((x ^ ((y * PRIME) % 2**32)) % 2**config.grid_log2_size)
    return first + (x % side) + (y % side) * side


def units(config, x, y) -> np.ndarray:
    x0, x1, y0, y1 = config.domain
    return np.stack([(np.asarray(x, np.float64) - x0) / (x1 - x0), (np.asarray(y, np.float64) - y0) / (y1 - y0)], 1)


def corners(config, u: np.ndarray):
    """Per point, per level: [(entry, weight, dweight/du)] for the 4 corners, point by point."""
    result = []
    for point in u:
        per_level = []
        for level in levels(config):
            pos = point * level[0]
            cell = np.floor(pos)
            fx, fy = pos - cell
            four = []
            for dx, dy in ((0, 0), (1, 0), (0, 1), (1, 1)):
                wx, dwx = (fx, 1.0) if dx else (1.0 - fx, -1.0)
                wy, dwy = (fy, 1.0) if dy else (1.0 - fy, -1.0)
                entry = _entry(config, level, int(cell[0]) + dx, int(cell[1]) + dy)
                four.append((entry, wx * wy, np.array([dwx * wy, wx * dwy]) * level[0]))
            per_level.append(four)
        result.append(per_level)
    return result


def encode(config, u: np.ndarray, tables: np.ndarray) -> np.ndarray:
    f = config.grid_features
    table = np.asarray(tables, np.float64).reshape(-1, f)
    out = np.zeros((len(u), config.grid_levels * f))
    for n, per_level in enumerate(corners(config, u)):
        for level, four in enumerate(per_level):
            for entry, weight, _ in four:
                out[n, level * f : level * f + f] += weight * table[entry]
    return out


def encode_jacobian(config, u: np.ndarray, tables: np.ndarray) -> np.ndarray:
    """d encoded / d u, (N, L * F, 2)."""
    f = config.grid_features
    table = np.asarray(tables, np.float64).reshape(-1, f)
    out = np.zeros((len(u), config.grid_levels * f, 2))
    for n, per_level in enumerate(corners(config, u)):
        for level, four in enumerate(per_level):
            for entry, _, slope in four:
                out[n, level * f : level * f + f] += table[entry][:, None] * slope[None, :]
    return out


def tables_gradient(config, u: np.ndarray, d_encoded: np.ndarray) -> np.ndarray:
    f = config.grid_features
    grad = np.zeros((table_size(config) // f, f))
    for n, per_level in enumerate(corners(config, u)):
        for level, four in enumerate(per_level):
            for entry, weight, _ in four:
                grad[entry] += weight * d_encoded[n, level * f : level * f + f]
    return grad.ravel()


def mlp_layers(config, params: np.ndarray, outputs: int) -> tuple[list, int]:
    """The MLP after a grid, [(W, b, activation)] in float64 (each W row-major, then b), and where
    the tables start in `params`."""
    sizes = [config.grid_levels * config.grid_features, *config.hidden, outputs]
    layers, offset = [], 0
    for k in range(len(sizes) - 1):
        w = params[offset : offset + sizes[k] * sizes[k + 1]].reshape(sizes[k + 1], sizes[k]).astype(np.float64)
        offset += sizes[k] * sizes[k + 1]
        b = params[offset : offset + sizes[k + 1]].astype(np.float64)
        offset += sizes[k + 1]
        layers.append((w, b, config.output_activation if k == len(sizes) - 2 else config.activation))
    return layers, offset


def forward(config, params: np.ndarray, x, y, outputs: int) -> np.ndarray:
    """A grid network's outputs at (x, y): (N, outputs), float64."""
    layers, offset = mlp_layers(config, params, outputs)
    h = encode(config, units(config, x, y), params[offset:])
    for w, b, act in layers:
        h = activate(act, h @ w.T + b)
    return h


def network_loss_and_gradient(config, params: np.ndarray, x, y, truth: np.ndarray):
    """The mean loss of a grid network and its gradient: the MLP's parameters, then the tables."""
    layers, offset = mlp_layers(config, params, truth.shape[1])
    u = units(config, x, y)
    h = encode(config, u, params[offset:])
    inputs, pre = [], []
    for w, b, act in layers:
        inputs.append(h)
        z = h @ w.T + b
        pre.append(z)
        h = activate(act, z)
    diff = h - truth
    loss = float(np.mean(np.sum(diff * diff, axis=1)))
    d, parts = 2.0 * diff / len(u), []
    for (w, _b, act), h_in, z in reversed(list(zip(layers, inputs, pre))):
        dz = d * activation_derivative(act, z)
        parts.append(np.concatenate([(dz.T @ h_in).ravel(), dz.sum(axis=0)]))
        d = dz @ w
    return loss, np.concatenate([*reversed(parts), tables_gradient(config, u, d)])
