"""PyTorch references for the benchmark: the same network, encoding, targets, loss and Adam as the app;
eager, and best (the loss compiled with torch.compile, the whole step captured in one CUDA graph),
each in fp32 or with fp16 autocast for the matmuls (the loss stays fp32)."""

from __future__ import annotations

import time


def available() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:
        return False


def _model(sizes: list[int], device):
    import torch

    layers = []
    for k, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(torch.nn.Linear(fan_in, fan_out))
        if k < len(sizes) - 2:
            layers.append(torch.nn.LeakyReLU(0.01))
    return torch.nn.Sequential(*layers).to(device)


def _loss_function(model, sizes: list[int], half: bool):
    import torch

    def loss(points):
        x, y = points[:, 0], points[:, 1]
        features = torch.stack([x, y, x * x, y * y], 1) if sizes[0] == 4 else points
        truth = torch.stack([(x + y) / (1 + y * y), 2 * x + y, 0.5 * x * x + 1.2 * y, x + 0.5 * y * y], 1)
        with torch.autocast("cuda", dtype=torch.float16, enabled=half):
            prediction = model(features)
        return ((prediction.float() - truth) ** 2).sum(1).mean()

    return loss


def timed_steps(step, steps: int, device="cuda") -> float:
    """Seconds for `steps` calls of `step` after 3 warm-up calls, the device synchronized before
    and after (a CPU device has nothing to wait for): every eager PyTorch row's timing."""
    import torch

    def synchronize() -> None:
        if torch.device(device).type == "cuda":
            torch.cuda.synchronize(device)

    for _ in range(3):
        step()
    synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    synchronize()
    return time.perf_counter() - start


def time_eager(sizes: list[int], batch: int, steps: int, half: bool = False) -> float:
    """Seconds for `steps` eager steps (after 3 warm-up steps)."""
    import torch

    device = torch.device("cuda")
    model = _model(sizes, device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, betas=(0.9, 0.999), eps=1e-7)
    loss = _loss_function(model, sizes, half)

    def step() -> None:
        value = loss(torch.rand(batch, 2, device=device) * 2 - 1)
        optimizer.zero_grad(set_to_none=True)
        value.backward()
        optimizer.step()

    return timed_steps(step, steps)


class CompiledGraph:
    """One compiled, graph-captured training step of a network and batch; build once, time often
    (compiling with max-autotune takes more than a minute a shape, the default mode seconds)."""

    def __init__(self, sizes: list[int], batch: int, half: bool = False, mode: str = "max-autotune-no-cudagraphs"):
        import torch

        device = torch.device("cuda")
        self.model = _model(sizes, device)
        self.optimizer = torch.optim.Adam(
            self.model.parameters(), lr=0.01, betas=(0.9, 0.999), eps=1e-7, fused=True, capturable=True
        )
        loss = compile_fresh(_loss_function(self.model, sizes, half), mode=mode)
        self.points = torch.empty(batch, 2, device=device)

        def step() -> None:
            self.points.uniform_(-1.0, 1.0)  # in the graph: fresh samples every replay
            value = loss(self.points)
            self.optimizer.zero_grad(set_to_none=False)
            value.backward()
            self.optimizer.step()

        self.graph, self.build_seconds = capture(step)

    def time(self, steps: int) -> float:
        return replay_seconds(self.graph, steps)


def compile_fresh(function, **options):
    """torch.compile of `function` with dynamo's caches cleared first. Every row's loss is one code
    object (a closure made afresh for each network), and past dynamo's recompile limit (8) a
    further network's would run eager without a word (docs/benchmarks.md)."""
    import torch

    torch._dynamo.reset()
    return torch.compile(function, **options)


def capture(step):
    """`step` warmed up (and compiled) on a side stream, outside the capture, then captured in one
    CUDA graph: (the graph, the seconds all that took)."""
    import torch

    start = time.perf_counter()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    torch.cuda.synchronize()
    return graph, time.perf_counter() - start


def replay_seconds(graph, steps: int) -> float:
    """Seconds for `steps` replays of a captured step, after one untimed replay."""
    import torch

    graph.replay()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        graph.replay()
    torch.cuda.synchronize()
    return time.perf_counter() - start
