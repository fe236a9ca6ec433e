"""Independent numpy references: the sampler, the MLP forward/backward in float64, Adam/SGD
and the colour maps. Written from the formulas, not from the shaders' code paths."""

from __future__ import annotations

import numpy as np

M32 = 0xFFFFFFFF


def pcg_hash(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.uint64) & M32
    state = (v * 747796405 + 2891336453) & M32
    word = (((state >> ((state >> 28) + 4)) ^ state) * 277803737) & M32
    return ((word >> 22) ^ word) & M32


def sample_points(seed: int, step: int, count: int, domain) -> tuple[np.ndarray, np.ndarray]:
    index = np.arange(count, dtype=np.uint64)
    h = pcg_hash(index ^ pcg_hash(np.uint64(step) ^ pcg_hash(np.uint64(seed))))
    h2 = pcg_hash(h ^ 0x9E3779B9)
    u = (h >> 8).astype(np.float64) / 16777216.0
    w = (h2 >> 8).astype(np.float64) / 16777216.0
    x0, x1, y0, y1 = domain
    return (x0 + (x1 - x0) * u).astype(np.float32), (y0 + (y1 - y0) * w).astype(np.float32)


def sample_points_3d(seed: int, step: int, count: int, domain, z_range) -> tuple[np.ndarray, ...]:
    """A function of (x, y, z)'s samples: x and y as sample_points draws them, z from a third hash
    of the second (docs/guide/space.md)."""
    index = np.arange(count, dtype=np.uint64)
    h = pcg_hash(index ^ pcg_hash(np.uint64(step) ^ pcg_hash(np.uint64(seed))))
    h2 = pcg_hash(h ^ 0x9E3779B9)
    h3 = pcg_hash(h2 ^ 0x7F4A7C15)
    x, y = sample_points(seed, step, count, domain)
    (z0, z1), v = z_range, (h3 >> 8).astype(np.float64) / 16777216.0
    return x, y, (z0 + (z1 - z0) * v).astype(np.float32)


def grid_centres(domain, grid: int) -> tuple[np.ndarray, np.ndarray]:
    """x and y of the evaluation grid's G x G cell centres over `domain` (the docs' eval
    grid), float64, each (G, G) indexed [j, i] with j along y, as the evaluator stores cells."""
    x0, x1, y0, y1 = domain
    centres = (np.arange(grid) + 0.5) / grid
    return np.meshgrid(x0 + centres * (x1 - x0), y0 + centres * (y1 - y0))


# The Playground's input features, by their --features names (docs/guide/data.md)
FEATURES = {
    "x": lambda x, y: x,
    "y": lambda x, y: y,
    "x2": lambda x, y: x**2,
    "y2": lambda x, y: y**2,
    "xy": lambda x, y: x * y,
    "sinx": lambda x, y: np.sin(x),
    "siny": lambda x, y: np.sin(y),
}


def encode(config, x: np.ndarray, y: np.ndarray, z: np.ndarray | None = None) -> np.ndarray:
    """The network's input from (x, y), per the docs' description of each encoding (docs/guide/network.md);
    from (x, y, z) with z given (docs/guide/space.md)."""
    if z is not None:
        return _encode_3d(config, x, y, z)
    if config.encoding == "raw":
        return np.stack([x, y], axis=1)
    if config.encoding == "poly2":
        return np.stack([x, y, x * x, y * y], axis=1)
    if config.encoding == "features":
        return np.stack([FEATURES[name](x, y) for name in config.features], axis=1)
    columns = [x, y]
    for k in range(config.frequencies):
        w = np.pi * 2.0**k
        columns += [np.sin(w * x), np.cos(w * x), np.sin(w * y), np.cos(w * y)]
    return np.stack(columns, axis=1)


def _encode_3d(config, x, y, z) -> np.ndarray:
    if config.encoding == "raw":
        return np.stack([x, y, z], axis=1)
    if config.encoding == "poly2":
        return np.stack([x, y, z, x * x, y * y, z * z], axis=1)
    columns = [x, y, z]
    for k in range(config.frequencies):
        w = np.pi * 2.0**k
        columns += [np.sin(w * x), np.cos(w * x), np.sin(w * y), np.cos(w * y), np.sin(w * z), np.cos(w * z)]
    return np.stack(columns, axis=1)


def activate(name: str, z: np.ndarray) -> np.ndarray:
    return {
        "identity": lambda: z,
        "leaky_relu": lambda: np.where(z > 0, z, 0.01 * z),
        "relu": lambda: np.maximum(z, 0.0),
        "tanh": lambda: np.tanh(z),
        "sigmoid": lambda: 1.0 / (1.0 + np.exp(-z)),
        "sin": lambda: np.sin(z),
        "softplus": lambda: np.logaddexp(0.0, z),
        "silu": lambda: z * np.exp(-np.logaddexp(0.0, -z)),  # z / (1 + e^-z), without overflow
    }[name]()


def layer_sizes(config) -> list[int]:
    inputs = {"raw": 2, "poly2": 4, "fourier": 2 + 4 * config.frequencies, "features": len(config.features)}
    if getattr(config, "dims", 2) == 3:  # a namespace of the docs' fields may leave it out
        inputs = {"raw": 3, "poly2": 6, "fourier": 3 + 6 * config.frequencies}
    return [inputs[config.encoding], *config.hidden, config.output_dim]


def activation_derivative(name: str, z: np.ndarray) -> np.ndarray:
    if name == "identity":
        return np.ones_like(z)
    if name == "leaky_relu":
        return np.where(z > 0, 1.0, 0.01)
    if name == "relu":
        return (z > 0).astype(z.dtype)
    if name == "tanh":
        return 1.0 - np.tanh(z) ** 2
    if name == "sigmoid":
        s = 1.0 / (1.0 + np.exp(-z))
        return s * (1.0 - s)
    if name == "sin":
        return np.cos(z)
    if name == "softplus":
        return np.exp(-np.logaddexp(0.0, -z))  # sigmoid(z) = 1 / (1 + e^-z), without overflow
    if name == "silu":
        s = np.exp(-np.logaddexp(0.0, -z))
        return s + z * s * (1.0 - s)
    raise ValueError(name)


def unpack(config, params: np.ndarray):
    """[(W, b, activation), ...] from the flat parameter vector (W row-major, then b)."""
    sizes, layers, offset = layer_sizes(config), [], 0
    for k in range(len(sizes) - 1):
        fan_in, fan_out = sizes[k], sizes[k + 1]
        w = params[offset : offset + fan_in * fan_out].reshape(fan_out, fan_in).astype(np.float64)
        offset += fan_in * fan_out
        b = params[offset : offset + fan_out].astype(np.float64)
        offset += fan_out
        act = config.output_activation if k == len(sizes) - 2 else config.activation
        layers.append((w, b, act))
    return layers


def layer_outputs(config, params: np.ndarray, x: np.ndarray, y: np.ndarray, z=None) -> list[np.ndarray]:
    """Every layer's values at points (x, y), float64: the encoded input, each hidden layer, the
    outputs. From the definitions above alone (none of the app's code)."""
    h = encode(
        config, np.asarray(x, np.float64), np.asarray(y, np.float64), None if z is None else np.asarray(z, np.float64)
    )
    values = [h]
    for w, b, act in unpack(config, params):
        h = activate(act, h @ w.T + b)
        values.append(h)
    return values


def forward(config, params: np.ndarray, x: np.ndarray, y: np.ndarray, z=None) -> np.ndarray:
    """The network's outputs at (x, y), or (x, y, z): (N, outputs), float64."""
    return layer_outputs(config, params, x, y, z)[-1]


def kernel_parameters(config, params: np.ndarray) -> np.ndarray:
    """The parameters as the kernels compute with them: rounded to half in half precision."""
    return params.astype(np.float16).astype(np.float32) if config.precision == "half" else params


def sample_losses(kind: str, out: np.ndarray, truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-sample losses and their gradients with respect to the outputs, float64: the squared
    error summed over outputs; binary cross-entropy of one logit (truth 0 or 1); softmax
    cross-entropy of one logit per class (truth one-hot)."""
    if kind == "squared":
        return np.sum((out - truth) ** 2, axis=1), 2.0 * (out - truth)
    if kind == "logistic":
        z, t = out[:, 0], truth[:, 0]
        p = 1.0 / (1.0 + np.exp(-z))
        return -(t * np.log(p) + (1 - t) * np.log1p(-p)), (p - t)[:, None]
    e = np.exp(out - out.max(axis=1, keepdims=True))
    softmax = e / e.sum(axis=1, keepdims=True)
    return -np.sum(truth * np.log(softmax), axis=1), softmax - truth


def loss_and_gradient(
    config, params: np.ndarray, x: np.ndarray, y: np.ndarray, truth: np.ndarray, kind="squared", z=None
):
    """Mean over samples of the per-sample loss (sample_losses), and its gradient (flat)."""
    layers = unpack(config, params)
    h = encode(config, x.astype(np.float64), y.astype(np.float64), None if z is None else z.astype(np.float64))
    inputs, pre = [], []
    for w, b, act in layers:
        inputs.append(h)
        z = h @ w.T + b
        pre.append(z)
        h = activate(act, z)
    losses, d = sample_losses(kind, h, truth)
    loss = float(np.mean(losses))
    grad_parts = []
    d = d / len(x)
    for (w, _b, act), h_in, z in reversed(list(zip(layers, inputs, pre))):
        dz = d * activation_derivative(act, z)
        grad_parts.append((dz.T @ h_in).ravel())
        grad_parts[-1] = np.concatenate([grad_parts[-1], dz.sum(axis=0)])
        d = dz @ w
    return loss, np.concatenate(list(reversed(grad_parts)))


def encoding_jacobian(config, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """d(encoded input)/d(x, y): (N, inputs, 2), from the derivative of each encoding term."""
    one, zero = np.ones_like(x), np.zeros_like(x)
    rows = [(one, zero), (zero, one)]
    if config.encoding == "poly2":
        rows += [(2 * x, zero), (zero, 2 * y)]
    elif config.encoding == "fourier":
        for k in range(config.frequencies):
            w = np.pi * 2.0**k
            rows += [
                (w * np.cos(w * x), zero),
                (-w * np.sin(w * x), zero),
                (zero, w * np.cos(w * y)),
                (zero, -w * np.sin(w * y)),
            ]
    return np.stack([np.stack(row, axis=1) for row in rows], axis=1)


def forward_with_input_gradients(config, params: np.ndarray, x: np.ndarray, y: np.ndarray):
    """Outputs (N, outputs), their gradients with respect to (x, y) (N, outputs, 2), and the
    smallest |pre-activation| of each point (a kink of (leaky) ReLU makes its gradient
    ambiguous there). Forward-mode chain rule in float64."""
    x, y = x.astype(np.float64), y.astype(np.float64)
    h, jacobian = encode(config, x, y), encoding_jacobian(config, x, y)
    nearest_kink = np.full(len(x), np.inf)
    for w, b, act in unpack(config, params):
        z = h @ w.T + b
        nearest_kink = np.minimum(nearest_kink, np.min(np.abs(z), axis=1))
        jacobian = activation_derivative(act, z)[:, :, None] * np.einsum("oi,nij->noj", w, jacobian)
        h = activate(act, z)
    return h, jacobian, nearest_kink


def shuffled_index(position: np.ndarray, count: int, seed: int, epoch: np.ndarray) -> np.ndarray:
    """The docs' batch order (architecture.md): position p of epoch e is a four-round Feistel permutation of the
    smallest even number of bits holding `count`, keyed by (seed, e), walked until below count."""
    if count <= 1:
        return np.zeros_like(position)
    bits = int(count - 1).bit_length()
    half = (bits + 1) // 2
    mask = (1 << half) - 1
    key = pcg_hash(np.asarray(epoch, np.uint64) ^ pcg_hash(np.uint64(seed) ^ 0x85EBCA6B))
    x = np.asarray(position, np.uint64).copy()
    todo = np.ones(x.shape, bool)
    while todo.any():
        left, right = x[todo] >> half, x[todo] & mask
        k = key[todo] if key.shape else key
        for round_ in range(4):
            left, right = right, left ^ (pcg_hash(right ^ pcg_hash((k + round_) & M32)) & mask)
        x[todo] = (left << half) | right
        todo = x >= count
    return x.astype(np.int64)


def batch_rows(seed: int, position: int, count: int, batch: int) -> np.ndarray:
    """The training rows a step takes whose first sample is at `position` of the epochs."""
    p = position + np.arange(batch, dtype=np.int64)
    return shuffled_index(p % count, count, seed, (p // count).astype(np.uint64))


def truth_values(config, x: np.ndarray, y: np.ndarray, z=None) -> np.ndarray:
    from app.truth.targets import target_to_numpy

    if z is not None:
        point = (x.astype(np.float64), y.astype(np.float64), z.astype(np.float64))
        return np.stack([target_to_numpy(t, dims=3)(*point) for t in config.targets], axis=1)
    return np.stack([target_to_numpy(t)(x.astype(np.float64), y.astype(np.float64)) for t in config.targets], axis=1)


def truth_gradient(config, x: np.ndarray, y: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """(N, outputs, 2): the targets' gradient by central differences in float64."""
    x, y = x.astype(np.float64), y.astype(np.float64)
    dx = (truth_values(config, x + h, y) - truth_values(config, x - h, y)) / (2 * h)
    dy = (truth_values(config, x, y + h) - truth_values(config, x, y - h)) / (2 * h)
    return np.stack([dx, dy], axis=2)


def derivative_loss(config, out, gradient, truth, truth_gradient) -> float:
    """Training on derivatives' loss from the outputs (N, outputs) and their input gradients
    (N, outputs, 2): the mean over samples of sum_o (f - t)^2 + grad_weight |grad f - grad t|^2
    + eikonal (|grad f| - 1)^2, in float64."""
    value = ((out - truth) ** 2).sum(axis=1)
    sobolev = ((gradient - truth_gradient) ** 2).sum(axis=(1, 2))
    eikonal = ((np.sqrt((gradient**2).sum(axis=2)) - 1.0) ** 2).sum(axis=1)
    return float(np.mean(value + config.grad_weight * sobolev + config.eikonal * eikonal))


VIRIDIS_ENDS = {0.0: (0.267, 0.005, 0.329), 1.0: (0.993, 0.906, 0.144)}  # matplotlib's viridis
MAGMA_ENDS = {0.0: (0.001, 0.000, 0.014), 1.0: (0.987, 0.991, 0.750)}  # matplotlib's magma


def linear_to_srgb(c: np.ndarray) -> np.ndarray:
    c = np.clip(np.asarray(c, np.float64), 0, 1)
    return np.where(c <= 0.0031308, c * 12.92, 1.055 * c ** (1 / 2.4) - 0.055)
