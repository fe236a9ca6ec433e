"""Compiled kernels, one set per architecture, cached by the device's Gpu so that switching back
to an architecture costs nothing."""

from __future__ import annotations

import time
from dataclasses import dataclass

import slangpy as spy

from .plan import NetworkPlan
from .shadergen import network_source

ENTRY_POINTS = ("learnGradient", "adjustParameters", "evaluateGrid", "drawHeatmaps", "drawColorbars", "drawNeurons")


@dataclass
class NetworkKernels:
    learn_gradient: spy.ComputeKernel
    adjust_parameters: spy.ComputeKernel
    evaluate_grid: spy.ComputeKernel
    draw_heatmaps: spy.ComputeKernel
    draw_colorbars: spy.ComputeKernel
    draw_neurons: spy.ComputeKernel
    compile_seconds: float


def link_programs(device: spy.Device, name: str, source: str) -> list[spy.ShaderProgram]:
    """The generated module `source` compiled as module `name`, one program per ENTRY_POINTS."""
    module = device.load_module_from_source(name, source)
    return [device.link_program([module], [module.entry_point(entry)]) for entry in ENTRY_POINTS]


class KernelCache:
    def __init__(self, device: spy.Device):
        self.device = device
        self._built: dict[str, NetworkKernels] = {}

    def get(self, plan: NetworkPlan) -> NetworkKernels:
        """The plan's kernels, compiled (Slang, then linked) on first use."""
        name = plan.module_name
        if name not in self._built:
            start = time.perf_counter()
            programs = link_programs(self.device, name, network_source(plan))
            built = [self.device.create_compute_kernel(program) for program in programs]
            self._built[name] = NetworkKernels(*built, compile_seconds=time.perf_counter() - start)
        return self._built[name]

    def has(self, plan: NetworkPlan) -> bool:
        return plan.module_name in self._built
