"""Compiled kernels, one set per architecture, cached per device so switching back to an
architecture costs nothing."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import slangpy as spy

from app.config import Config
from app.device import SHADER_DIR
from app.shadergen import module_name, network_source

ENTRY_POINTS = ("learnGradient", "adjustParameters", "evaluateGrid", "drawHeatmaps", "drawColorbars")


@dataclass
class NetworkKernels:
    learn_gradient: spy.ComputeKernel
    adjust_parameters: spy.ComputeKernel
    evaluate_grid: spy.ComputeKernel
    draw_heatmaps: spy.ComputeKernel
    draw_colorbars: spy.ComputeKernel
    compile_seconds: float


_cache: dict[tuple[int, str], NetworkKernels] = {}
_wave_widths: dict[int, int] = {}


def kernels_for(device: spy.Device, config: Config) -> NetworkKernels:
    key = (id(device), module_name(config))
    if key not in _cache:
        start = time.perf_counter()
        module = device.load_module_from_source(key[1], network_source(config))
        built = []
        for name in ENTRY_POINTS:
            program = device.link_program([module], [module.entry_point(name)])
            built.append(device.create_compute_kernel(program))
        _cache[key] = NetworkKernels(*built, compile_seconds=time.perf_counter() - start)
    return _cache[key]


def is_cached(device: spy.Device, config: Config) -> bool:
    return (id(device), module_name(config)) in _cache


def wave_width(device: spy.Device) -> int:
    if id(device) not in _wave_widths:
        program = device.load_program(str(SHADER_DIR / "probe.slang"), ["waveWidth"])
        kernel = device.create_compute_kernel(program)
        result = device.create_buffer(size=4, usage=spy.BufferUsage.unordered_access | spy.BufferUsage.shader_resource)
        kernel.dispatch([64, 1, 1], result=result.device_address)
        _wave_widths[id(device)] = int(result.to_numpy().view(np.uint32)[0])
    return _wave_widths[id(device)]
