"""What one training step of a network would take on this device, before it is built, so that the
window can warn before a rebuild that would train one step in many seconds.

A step costs about 6 x weights x batch floating-point operations (forward, dH and dW products).
Its time is that at the rate this device trained networks of the same gradient path this session
(measured by the frame budget), or, before any such measure, at the rate of the network that is
training, scaled by how the paths compare on that kind of device (PATH_RATES). Before anything was
measured, PATH_RATES itself."""

from __future__ import annotations

from ..kernels.plan import NetworkPlan

# GFLOP/s (at 6 x weights a sample) each gradient path trained at, batch 4096, float. lavapipe
# (2 cores, LLVM 15), per two seconds of CPU time (the machine was shared): thread 2.6 (4-16-4),
# group 1.5 (4-64-64-4, sin), tiles 1.2 (4-64-64-4), lanes 7.0, 8.6 and 12.0 (4-64-64-4,
# 4-128-128-4, 4-256x8-4). A GPU: the H200's float SIMT paths are all of the same order.
PATH_RATES = {
    "software": {"thread": 2.6, "group": 1.5, "tiles": 1.2, "lanes": 10.0},
    "gpu": {"thread": 5e3, "group": 1e3, "tiles": 5e3, "lanes": 5e3},
}


def step_flops(plan: NetworkPlan, batch_size: int) -> float:
    return 6.0 * sum(layer.fan_in * layer.fan_out for layer in plan.layers) * batch_size


class StepCost:
    """Seconds per floating-point operation of each gradient path, as measured on one device."""

    def __init__(self, software: bool):
        self.rates = PATH_RATES["software" if software else "gpu"]
        self.measured: dict[str, float] = {}  # gradient path -> seconds per FLOP
        self._last: tuple[str, float] | None = None  # the latest measure's path and seconds per FLOP

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
            per_flop = measured * self.rates[measured_path] / self.rates[path]
        else:
            per_flop = 1e-9 / self.rates[path]
        return step_flops(plan, batch_size) * per_flop
