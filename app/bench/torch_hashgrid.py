"""The PyTorch reference for the hash-grid rows: the app's `hashgrid` model and task written plainly
in PyTorch (the app's layout, hash and bilinear weights; a 64-64 ReLU MLP; Adam at the app's
settings, epsilon 1e-15 for the tables), the tables' gradients PyTorch's own dense scatter-add.
Eager, and compiled with the step in a CUDA graph, each in fp32 or fp16 autocast for the MLP.
`Reference(grid)` is the pair for one grid, with the other references' interface."""

from __future__ import annotations

from ..model.hashgrid import HASH_PRIME, GridSpec
from .hashgrid_task import HIDDEN, photo_pixels
from .torch_reference import capture, compile_fresh, replay_seconds, timed_steps


def encode(u, tables, grid: GridSpec):
    """(B, 2) grid coordinates and the (entries, F) tables -> (B, L * F): app/model/hashgrid.py's encoding."""
    import torch

    features = []
    for level in grid.layout:
        pos = u * level.scale
        lower = torch.floor(pos)
        frac = pos - lower
        cell = lower.long()
        value = 0.0
        for k in range(4):
            dx, dy = k & 1, k >> 1
            x, y = (cell[:, 0] + dx) & 0xFFFFFFFF, (cell[:, 1] + dy) & 0xFFFFFFFF
            if level.hashed:
                entry = (x ^ ((y * HASH_PRIME) & 0xFFFFFFFF)) & (level.size - 1)
            else:
                entry = x % level.resolution + (y % level.resolution) * level.resolution
            wx = frac[:, 0:1] if dx else 1.0 - frac[:, 0:1]
            wy = frac[:, 1:2] if dy else 1.0 - frac[:, 1:2]
            value = value + wx * wy * tables[level.offset + entry]
        features.append(value)
    return torch.cat(features, 1)


class _Task:
    """The model, its optimizer and the loss of one batch of points."""

    def __init__(self, half: bool, grid: GridSpec):
        import torch

        device = torch.device("cuda")
        pixels = photo_pixels()
        self.image = torch.tensor(pixels, device=device)  # (H, W, C)
        height, width, channels = pixels.shape
        self.grid = grid
        self.tables = torch.nn.Parameter((torch.rand(grid.entries, grid.features, device=device) * 2 - 1) * 1e-4)
        sizes = [grid.dim, *HIDDEN, channels]
        layers = []
        for k, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            layers.append(torch.nn.Linear(fan_in, fan_out))
            if k < len(sizes) - 2:
                layers.append(torch.nn.ReLU())
        self.mlp = torch.nn.Sequential(*layers).to(device)
        self.half = half
        self.size = (width, height)

    def optimizer(self, **options):
        import torch

        groups = [
            {"params": [self.tables], "eps": 1e-15},
            {"params": list(self.mlp.parameters()), "eps": 1e-7},
        ]
        return torch.optim.Adam(groups, lr=0.01, betas=(0.9, 0.999), **options)

    def loss(self, u):
        import torch

        width, height = self.size
        px = u[:, 0] * width - 0.5
        py = (1.0 - u[:, 1]) * height - 0.5
        c0, r0 = torch.floor(px), torch.floor(py)
        fx, fy = (px - c0)[:, None], (py - r0)[:, None]
        c0, r0 = c0.long(), r0.long()
        c1, r1 = (c0 + 1).clamp(0, width - 1), (r0 + 1).clamp(0, height - 1)
        c0, r0 = c0.clamp(0, width - 1), r0.clamp(0, height - 1)
        top = (1 - fx) * self.image[r0, c0] + fx * self.image[r0, c1]
        truth = (1 - fy) * top + fy * ((1 - fx) * self.image[r1, c0] + fx * self.image[r1, c1])
        features = encode(u, self.tables, self.grid)
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.half):
            prediction = self.mlp(features)
        return ((prediction.float() - truth) ** 2).sum(1).mean()


def time_eager(grid: GridSpec, batch: int, steps: int, half: bool = False) -> float:
    """Seconds for `steps` eager steps (after 3 warm-up steps)."""
    import torch

    task = _Task(half, grid)
    optimizer = task.optimizer()

    def step() -> None:
        value = task.loss(torch.rand(batch, 2, device="cuda"))
        optimizer.zero_grad(set_to_none=True)
        value.backward()
        optimizer.step()

    return timed_steps(step, steps)


class CompiledGraph:
    """One compiled, graph-captured training step (torch_reference.CompiledGraph's recipe)."""

    def __init__(self, grid: GridSpec, batch: int, half: bool = False, mode: str = "default"):
        import torch

        task = _Task(half, grid)
        self.optimizer = task.optimizer(fused=True, capturable=True)
        loss = compile_fresh(task.loss, mode=mode)
        self.points = torch.empty(batch, 2, device="cuda")

        def step() -> None:
            self.points.uniform_(0.0, 1.0)
            value = loss(self.points)
            self.optimizer.zero_grad(set_to_none=False)
            value.backward()
            self.optimizer.step()

        self.graph, self.build_seconds = capture(step)

    def time(self, steps: int) -> float:
        return replay_seconds(self.graph, steps)


class Reference:
    """time_eager and CompiledGraph for one grid, called as app/bench/torch_reference.py's are:
    with the layer sizes first, which this model takes from the grid and HIDDEN instead."""

    def __init__(self, grid: GridSpec):
        self.grid = grid

    def time_eager(self, sizes, batch: int, steps: int, half: bool = False) -> float:
        return time_eager(self.grid, batch, steps, half)

    def CompiledGraph(self, sizes, batch: int, half: bool = False, mode: str = "default") -> CompiledGraph:
        return CompiledGraph(self.grid, batch, half, mode)
