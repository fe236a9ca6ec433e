"""What one training step of a network would take on this device, before it is built, so that the
window can warn before a rebuild that would train one step in many seconds: about 6 x weights x
batch floating-point operations, at this device's measured rate for the network's gradient path,
else the running network's scaled by the paths' `rates` (app/kernels/paths/), else those rates."""

from __future__ import annotations

from ..kernels.paths import path_named
from ..kernels.plan import NetworkPlan


def step_flops(plan: NetworkPlan, batch_size: int) -> float:
    return 6.0 * sum(layer.fan_in * layer.fan_out for layer in plan.layers) * batch_size


class StepCost:
    """Seconds per floating-point operation of each gradient path, as measured on one device."""

    def __init__(self, software: bool):
        self.software = software
        self.measured: dict[str, float] = {}  # gradient path -> seconds per FLOP
        self._last: tuple[str, float] | None = None  # the latest measure's path and seconds per FLOP

    def rate(self, path: str) -> float:
        """The GFLOP/s a path trains at on this kind of device before any measure."""
        software, gpu = path_named(path).rates
        return software if self.software else gpu

    def observe(self, plan: NetworkPlan, batch_size: int, step_seconds: float) -> None:
        """A measured step of `plan` at `batch_size`."""
        per_flop = step_seconds / step_flops(plan, batch_size)
        self.measured[plan.gradient_path] = per_flop
        self._last = (plan.gradient_path, per_flop)

    def seconds(self, plan: NetworkPlan, batch_size: int) -> float:
        """The estimated seconds of one step of `plan` at `batch_size`."""
        path = plan.gradient_path
        if path in self.measured:
            per_flop = self.measured[path]
        elif self._last is not None:  # this device's speed, and how the paths compare
            measured_path, measured = self._last
            per_flop = measured * self.rate(measured_path) / self.rate(path)
        else:
            per_flop = 1e-9 / self.rate(path)
        return step_flops(plan, batch_size) * per_flop
