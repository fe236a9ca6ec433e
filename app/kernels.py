"""Compiled kernels, one set per architecture, cached by the device's Gpu so that switching back
to an architecture costs nothing."""

from __future__ import annotations

import time
from dataclasses import dataclass

import slangpy as spy

from .plan import NetworkPlan
from .shadergen import network_source

ENTRY_POINTS = ("learnGradient", "adjustParameters", "evaluateGrid", "drawHeatmaps", "drawColorbars", "drawNeurons")
IMAGE_ENTRY_POINTS = ("evaluateImage", "drawImageView")  # an image target's (shaders/image_eval.slang)


@dataclass
class NetworkKernels:
    learn_gradient: spy.ComputeKernel
    adjust_parameters: spy.ComputeKernel
    evaluate_grid: spy.ComputeKernel
    draw_heatmaps: spy.ComputeKernel
    draw_colorbars: spy.ComputeKernel
    draw_neurons: spy.ComputeKernel
    compile_seconds: float
    evaluate_image: spy.ComputeKernel | None = None
    draw_image_view: spy.ComputeKernel | None = None


def link_programs(
    device: spy.Device, name: str, source: str, entries: tuple[str, ...] = ENTRY_POINTS
) -> list[spy.ShaderProgram]:
    """The generated module `source` compiled as module `name`, one program per entry point."""
    module = device.load_module_from_source(name, source)
    return [device.link_program([module], [module.entry_point(entry)]) for entry in entries]


class KernelCache:
    def __init__(self, device: spy.Device):
        self.device = device
        self._built: dict[str, NetworkKernels] = {}

    def get(self, plan: NetworkPlan) -> NetworkKernels:
        """The plan's kernels, compiled (Slang, then linked) on first use."""
        name = plan.module_name
        if name not in self._built:
            start = time.perf_counter()
            entries = ENTRY_POINTS + (IMAGE_ENTRY_POINTS if plan.image is not None else ())
            programs = link_programs(self.device, name, network_source(plan), entries)
            built = [self.device.create_compute_kernel(program) for program in programs]
            core, image = built[: len(ENTRY_POINTS)], built[len(ENTRY_POINTS) :]
            self._built[name] = NetworkKernels(*core, time.perf_counter() - start, *image)
        return self._built[name]

    def has(self, plan: NetworkPlan) -> bool:
        return plan.module_name in self._built
