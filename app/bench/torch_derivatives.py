"""The PyTorch reference for the derivatives rows: the task of derivatives_task.py written plainly in
PyTorch, the input gradient by autograd.grad(create_graph=True) and a double backward through it;
eager, and best (the loss compiled whole, the step in a CUDA graph; eager and captured where
compiling fails). docs/benchmarks.md, 'Derivative training'. The functions take a device, so that
tests/torch_derivatives_check.py checks them on a CPU."""

from __future__ import annotations

from .derivatives_task import CIRCLE_RADIUS, SIZES, WEIGHTS
from .torch_reference import capture, compile_fresh, replay_seconds, timed_steps

LEARNING_RATE, BETAS, EPSILON = 0.01, (0.9, 0.999), 1e-7  # the app's Adam defaults


def unavailable_reason() -> str | None:
    """Why the PyTorch rows cannot run here, or None where torch imports with a CUDA device."""
    try:
        import torch
    except Exception as error:
        return f"PyTorch does not import ({type(error).__name__})"
    if not torch.cuda.is_available():
        return "PyTorch has no CUDA device"
    return None


def describe_failure(error: Exception) -> str:
    """An exception on one line for a row's note: its type and its message's first line (the
    compiler's messages run to pages)."""
    first_line = (str(error).strip().splitlines() or [""])[0]
    return f"{type(error).__name__}: {first_line[:160]}"


def build_model(sizes: list[int], device):
    """Linear layers with Softplus (beta 1) between them and nothing after the last."""
    import torch

    layers = []
    for k, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(torch.nn.Linear(fan_in, fan_out))
        if k < len(sizes) - 2:
            layers.append(torch.nn.Softplus(beta=1.0))
    return torch.nn.Sequential(*layers).to(device)


def sobolev_truth(points):
    """sin(3x) cos(2y) and its two derivatives, each (B,)."""
    import torch

    x, y = points[:, 0], points[:, 1]
    value = torch.sin(3 * x) * torch.cos(2 * y)
    return value, 3 * torch.cos(3 * x) * torch.cos(2 * y), -2 * torch.sin(3 * x) * torch.sin(2 * y)


def loss_function(loss: str, model, weight: float):
    """The mean loss of a batch of points (B, 2), which must require grad: "sobolev" (one output
    per target; the derivatives' terms summed over outputs) or "eikonal" (one output)."""
    import torch

    def input_gradient(values, points):
        return torch.autograd.grad(values.sum(), points, create_graph=True)[0]

    def sobolev(points):
        value = model(points)[:, 0]
        dx_dy = input_gradient(value, points)
        truth, truth_dx, truth_dy = sobolev_truth(points)
        derivatives = (dx_dy[:, 0] - truth_dx) ** 2 + (dx_dy[:, 1] - truth_dy) ** 2
        return ((value - truth) ** 2 + weight * derivatives).mean()

    def eikonal(points):
        value = model(points)[:, 0]
        slope = torch.linalg.vector_norm(input_gradient(value, points), dim=1)
        distance = torch.linalg.vector_norm(points, dim=1) - CIRCLE_RADIUS
        return ((value - distance) ** 2 + weight * (slope - 1.0) ** 2).mean()

    return {"sobolev": sobolev, "eikonal": eikonal}[loss]


def _adam(model, **options):
    import torch

    return torch.optim.Adam(model.parameters(), lr=LEARNING_RATE, betas=BETAS, eps=EPSILON, **options)


def time_eager(loss: str, batch: int, steps: int, device="cuda") -> float:
    """Seconds for `steps` eager steps (after 3 warm-up steps)."""
    import torch

    device = torch.device(device)
    model = build_model(SIZES, device)
    optimizer = _adam(model)
    parameters = list(model.parameters())
    value_of = loss_function(loss, model, WEIGHTS[loss])

    def step() -> None:
        points = (torch.rand(batch, 2, device=device) * 2 - 1).requires_grad_(True)
        value = value_of(points)
        optimizer.zero_grad(set_to_none=True)
        value.backward(inputs=parameters)  # the points' own gradient is not needed
        optimizer.step()

    return timed_steps(step, steps, device)


def compile_whole(value_of, mode: str):
    """`value_of` compiled as one graph (fullgraph: a split one would refuse the double
    backward), with autograd.grad traced into it where this PyTorch has the option for it."""
    import torch

    compiled = compile_fresh(value_of, mode=mode, fullgraph=True)
    config = torch._dynamo.config
    if not hasattr(config, "trace_autograd_ops"):
        return compiled

    def traced(points):
        with config.patch(trace_autograd_ops=True):
            return compiled(points)

    return traced


def _captured_step(loss: str, batch: int, mode: str | None, half: bool = False):
    """One step of a fresh model captured in a CUDA graph, its loss compiled in `mode` (eager
    where None), under fp16 autocast with `half` (the products on tensor cores, as the app's half
    rows): (the graph, the seconds its compile and capture took)."""
    import contextlib

    import torch

    device = torch.device("cuda")
    model = build_model(SIZES, device)
    optimizer = _adam(model, fused=True, capturable=True)
    parameters = list(model.parameters())
    value_of = loss_function(loss, model, WEIGHTS[loss])
    if mode is not None:
        value_of = compile_whole(value_of, mode)
    points = torch.empty(batch, 2, device=device, requires_grad=True)

    def step() -> None:
        with torch.no_grad():
            points.uniform_(-1.0, 1.0)  # in the graph: fresh samples every replay
        with torch.autocast("cuda", dtype=torch.float16) if half else contextlib.nullcontext():
            value = value_of(points)
        optimizer.zero_grad(set_to_none=False)
        value.backward(inputs=parameters)
        optimizer.step()

    return capture(step)


class BestStep:
    """The strongest PyTorch step we know for one loss and batch, built once, timed often:
    compiled and captured, else (the compiler's failure in `note`) eager and captured.
    `variant` says which: "compiled" or "eager"."""

    def __init__(self, loss: str, batch: int, mode: str = "default", half: bool = False):
        self.variant, self.note = "compiled", ""
        try:
            self.graph, self.build_seconds = _captured_step(loss, batch, mode, half)
        except Exception as error:
            self.variant, self.note = "eager", f"torch.compile failed: {describe_failure(error)}"
            self.graph, self.build_seconds = _captured_step(loss, batch, None, half)

    def time(self, steps: int) -> float:
        return replay_seconds(self.graph, steps)
