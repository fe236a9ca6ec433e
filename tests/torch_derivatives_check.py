"""A check of app/bench/torch_derivatives.py on the CPU, against numpy written again on purpose:
each loss's value from a numpy forward pass whose input gradient is carried forward (Jacobians
layer by layer, not autograd), with the truth's derivatives taken by central differences of the
truth itself, not its closed form; and each parameter's gradient (PyTorch's double backward, in
float64) against central differences of that numpy loss.

    python tests/torch_derivatives_check.py [--compiled]

prints the errors and exits 1 where one is past its bound; --compiled also compiles each loss
with torch.compile on the CPU (about ten seconds each) and compares it with eager.
tests/test_torch_derivatives.py runs the same checks where torch imports."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.bench import torch_derivatives
from app.bench.derivatives_task import CIRCLE_RADIUS, LOSSES, SIZES, WEIGHTS

TINY = [2, 4, 3, 1]
LOSS_BOUND = 1e-8  # float64; the numpy truth's derivatives by central differences of step 1e-5 (~1e-10 off)
GRADIENT_BOUND = 1e-6  # central differences of step 1e-6 in float64, relative to the largest
COMPILED_BOUND = 1e-5  # float32, compiled against eager


def numpy_layers(model) -> list[tuple[np.ndarray, np.ndarray]]:
    linears = [layer for layer in model if isinstance(layer, torch.nn.Linear)]
    return [(lin.weight.detach().double().numpy().copy(), lin.bias.detach().double().numpy().copy()) for lin in linears]


def _softplus(z):
    return np.logaddexp(0.0, z)


def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def numpy_value_and_gradient(layers, points):
    """f (B,) and its gradient in (x, y) (B, 2), the Jacobian carried through every layer."""
    h = points
    jacobian = np.broadcast_to(np.eye(2), (len(points), 2, 2))  # d h / d p
    for k, (weight, bias) in enumerate(layers):
        z = h @ weight.T + bias
        dz = np.einsum("oi,bip->bop", weight, jacobian)
        if k < len(layers) - 1:
            h, jacobian = _softplus(z), _sigmoid(z)[:, :, None] * dz
        else:
            h, jacobian = z, dz
    return h[:, 0], jacobian[:, 0, :]


def _truth(points):
    return np.sin(3 * points[:, 0]) * np.cos(2 * points[:, 1])


def numpy_loss(loss: str, layers, points, weight: float) -> float:
    value, gradient = numpy_value_and_gradient(layers, points)
    if loss == "eikonal":
        distance = np.hypot(points[:, 0], points[:, 1]) - CIRCLE_RADIUS
        slope = np.hypot(gradient[:, 0], gradient[:, 1])
        return float(np.mean((value - distance) ** 2 + weight * (slope - 1.0) ** 2))
    step = 1e-5
    truth_gradient = np.stack(
        [(_truth(points + step * e) - _truth(points - step * e)) / (2 * step) for e in np.eye(2)], 1
    )
    derivatives = ((gradient - truth_gradient) ** 2).sum(1)
    return float(np.mean((value - _truth(points)) ** 2 + weight * derivatives))


def torch_loss_and_gradients(loss: str, model, points, weight: float, value_of=None):
    """PyTorch's loss and parameter gradients, flattened in the layers' order (W, b, W, b, ...)."""
    value_of = value_of or torch_derivatives.loss_function(loss, model, weight)
    model.zero_grad(set_to_none=True)
    value = value_of(points.clone().requires_grad_(True))
    value.backward(inputs=list(model.parameters()))
    gradients = np.concatenate([p.grad.detach().double().numpy().ravel() for p in model.parameters()])
    return float(value.detach()), gradients


def finite_differences(loss: str, layers, points, weight: float, indices, step: float = 1e-6) -> np.ndarray:
    """Central differences of numpy_loss in the parameters `indices` (into the flat W, b, ... order)."""
    arrays = [array for layer in layers for array in layer]
    offsets = np.cumsum([0] + [a.size for a in arrays])
    result = []
    for index in indices:
        k = int(np.searchsorted(offsets, index, side="right")) - 1
        flat = arrays[k].reshape(-1)
        kept = flat[index - offsets[k]]
        flat[index - offsets[k]] = kept + step
        above = numpy_loss(loss, layers, points, weight)
        flat[index - offsets[k]] = kept - step
        below = numpy_loss(loss, layers, points, weight)
        flat[index - offsets[k]] = kept
        result.append((above - below) / (2 * step))
    return np.array(result)


def check_loss(loss: str, sizes: list[int], batch: int, seed: int, parameters: int | None = None) -> dict:
    """The errors of one loss on one network: PyTorch float64 against numpy, over every parameter
    or `parameters` of them drawn at random."""
    torch.manual_seed(seed)
    model = torch_derivatives.build_model(sizes, "cpu").double()
    points = torch.rand(batch, 2, dtype=torch.float64) * 2 - 1
    weight, layers = WEIGHTS[loss], numpy_layers(model)
    value, gradients = torch_loss_and_gradients(loss, model, points, weight)
    expected = numpy_loss(loss, layers, points.numpy(), weight)
    rng = np.random.default_rng(seed)
    indices = np.arange(gradients.size) if parameters is None else rng.choice(gradients.size, parameters, False)
    differences = finite_differences(loss, layers, points.numpy(), weight, indices)
    scale = np.abs(differences).max()
    return dict(
        loss=loss,
        network="-".join(map(str, sizes)),
        value=value,
        loss_error=abs(value - expected) / abs(expected),
        gradient_error=float(np.abs(gradients[indices] - differences).max() / scale),
        largest_gradient=float(scale),
        parameters_checked=len(indices),
    )


def check_compiled(loss: str, batch: int = 256, seed: int = 3) -> dict:
    """The compiled loss (torch_derivatives.compile_whole, float32) against eager on the CPU."""
    torch.manual_seed(seed)
    model = torch_derivatives.build_model(SIZES, "cpu")
    points = torch.rand(batch, 2) * 2 - 1
    weight = WEIGHTS[loss]
    eager_value, eager = torch_loss_and_gradients(loss, model, points, weight)
    compiled_of = torch_derivatives.compile_whole(torch_derivatives.loss_function(loss, model, weight), "default")
    value, compiled = torch_loss_and_gradients(loss, model, points, weight, compiled_of)
    return dict(
        loss=loss,
        loss_error=abs(value - eager_value) / abs(eager_value),
        gradient_error=float(np.abs(compiled - eager).max() / np.abs(eager).max()),
    )


def all_checks(compiled: bool = False) -> list[dict]:
    rows = []
    for loss in LOSSES:
        rows.append(check_loss(loss, TINY, batch=16, seed=1))
        rows.append(check_loss(loss, SIZES, batch=32, seed=2, parameters=60))
        if compiled:
            rows.append({"network": "compiled", **check_compiled(loss)})
    return rows


def main() -> int:
    failed = False
    for row in all_checks("--compiled" in sys.argv[1:]):
        bounds = (COMPILED_BOUND, COMPILED_BOUND) if row["network"] == "compiled" else (LOSS_BOUND, GRADIENT_BOUND)
        passed = row["loss_error"] <= bounds[0] and row["gradient_error"] <= bounds[1]
        failed |= not passed
        print(
            f"{row['loss']:>8} {row['network']:>12}: loss error {row['loss_error']:.2e}, "
            f"gradient error {row['gradient_error']:.2e} {'ok' if passed else 'PAST ITS BOUND'}"
            + (
                f" ({row['parameters_checked']} parameters, largest {row['largest_gradient']:.3g})"
                if "value" in row
                else ""
            )
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
