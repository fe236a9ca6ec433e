"""Compiled kernels, one set per architecture, cached by the device's Gpu so that switching back
to an architecture costs nothing."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import slangpy as spy

from ..kernels.network_module import network_source
from ..kernels.plan import NetworkPlan
from .struct_layout import struct_dtype

ENTRY_POINTS = ("learnGradient", "adjustParameters", "evaluateGrid", "drawHeatmaps", "drawColorbars", "drawNeurons")
# Plans that train on a dataset's points also have these (shaders/views/points.slang)
POINT_ENTRY_POINTS = ("evaluatePoints", "drawPoints", "drawDataView", "drawSignedBar")


@dataclass
class PointKernels:
    evaluate_points: spy.ComputeKernel
    draw_points: spy.ComputeKernel
    draw_data_view: spy.ComputeKernel
    draw_signed_bar: spy.ComputeKernel


IMAGE_ENTRY_POINTS = ("evaluateImage", "drawImageView")  # an image target's (shaders/views/image_eval.slang)
VOLUME_ENTRY_POINTS = ("evaluateVolume",)  # a function of (x, y, z)'s (shaders/views/volume.slang)
RENDER_ENTRY_POINTS = ("renderSurface",)  # its 3D view's sphere tracer (shaders/views/render3d.slang)


@dataclass
class NetworkKernels:
    step_args: np.dtype  # what learnGradient and adjustParameters read (shaders/common/step_args.slang)
    learn_gradient: spy.ComputeKernel
    adjust_parameters: spy.ComputeKernel
    evaluate_grid: spy.ComputeKernel
    draw_heatmaps: spy.ComputeKernel
    draw_colorbars: spy.ComputeKernel
    draw_neurons: spy.ComputeKernel
    compile_seconds: float
    points: PointKernels | None = None
    evaluate_image: spy.ComputeKernel | None = None
    draw_image_view: spy.ComputeKernel | None = None
    evaluate_volume: spy.ComputeKernel | None = None
    render_surface: spy.ComputeKernel | None = None


def entry_points(source: str) -> tuple[str, ...]:
    """The entry points of a generated module: the points' where it includes shaders/views/points.slang,
    an image target's where it includes shaders/views/image_eval.slang, the lattice's where it includes
    shaders/views/volume.slang."""
    return (
        ENTRY_POINTS
        + (POINT_ENTRY_POINTS if '#include "views/points.slang"' in source else ())
        + (IMAGE_ENTRY_POINTS if '#include "views/image_eval.slang"' in source else ())
        + (VOLUME_ENTRY_POINTS if '#include "views/volume.slang"' in source else ())
        + (RENDER_ENTRY_POINTS if '#include "views/render3d.slang"' in source else ())
    )


def link_programs(device: spy.Device, name: str, source: str) -> tuple[spy.SlangModule, list[spy.ShaderProgram]]:
    """The generated module `source` compiled as module `name`, and one program per entry point."""
    module = device.load_module_from_source(name, source)
    return module, [device.link_program([module], [module.entry_point(entry)]) for entry in entry_points(source)]


class KernelCache:
    def __init__(self, device: spy.Device):
        self.device = device
        self._built: dict[str, NetworkKernels] = {}

    def get(self, plan: NetworkPlan) -> NetworkKernels:
        """The plan's kernels, compiled (Slang, then linked) on first use."""
        name = plan.module_name
        if name not in self._built:
            start = time.perf_counter()
            source = network_source(plan)
            module, programs = link_programs(self.device, name, source)
            built = [self.device.create_compute_kernel(program) for program in programs]
            kernels = dict(zip(entry_points(source), built))
            points = (
                PointKernels(*(kernels[entry] for entry in POINT_ENTRY_POINTS)) if "drawPoints" in kernels else None
            )
            self._built[name] = NetworkKernels(
                struct_dtype(module, "StepArgs"),
                *(kernels[entry] for entry in ENTRY_POINTS),
                compile_seconds=time.perf_counter() - start,
                points=points,
                evaluate_image=kernels.get("evaluateImage"),
                draw_image_view=kernels.get("drawImageView"),
                evaluate_volume=kernels.get("evaluateVolume"),
                render_surface=kernels.get("renderSurface"),
            )
        return self._built[name]

    def has(self, plan: NetworkPlan) -> bool:
        return plan.module_name in self._built
