"""A user's Slang target compiled alone on the device with a small probe kernel
(shaders/truth/target_probe.slang): compile errors with the compiler's line before anything is
rebuilt, `target` checked differentiable (the derivative views run fwd_diff through it), and
TARGET_COUNT read. Without a numpy twin, its values are checked for NaN and infinity on the GPU."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..truth.slang_file import TARGET_NAMESPACE, SlangTargetError, compiler_messages, read_source, slang_target_block
from ..truth.targets import MAX_TARGETS
from .gpu import Gpu

# The probe kernel (shaders/truth/target_probe.slang), after the file's text
_PROBE = f"""
#define TARGET_NAMESPACE {TARGET_NAMESPACE}
#include "truth/target_probe.slang"
"""


def probe(gpu: Gpu, source: str, name: str, dims: int = 2) -> int:
    """Compiles `source` with the probe kernel and returns its TARGET_COUNT; a
    SlangTargetError carries the compiler's messages. With dims 3, `target` takes a float3."""
    device = gpu.device
    module_name = f"target_probe_{abs(hash(source)):x}" + ("" if dims == 2 else "_3d")
    switch = "" if dims == 2 else "#define POINT_3D 1\n"
    try:
        module = device.load_module_from_source(module_name, switch + slang_target_block(source) + _PROBE)
        kernel = device.create_compute_kernel(device.link_program([module], [module.entry_point("probeTarget")]))
    except Exception as error:  # SlangCompileError, or a pipeline the driver refused
        messages = compiler_messages(str(error), name, dims)
        more = f" (and {len(messages) - 1} more)" if len(messages) > 1 else ""
        raise SlangTargetError(f"target file {name!r} does not compile: {messages[0]}{more}", messages) from None
    count, derivative = gpu.buffer(4), gpu.buffer(4)
    kernel.dispatch([1, 1, 1], count=count.device_address, derivative=derivative.device_address)
    value = int(gpu.read(count, 1, np.int32)[0])
    if not 1 <= value <= MAX_TARGETS:
        message = f"{name}: TARGET_COUNT must be between 1 and {MAX_TARGETS} (got {value})"
        raise SlangTargetError(message, [message])
    return value


def load(gpu: Gpu, path: str | Path, dims: int = 2) -> dict:
    """Config.slang_target for the file at `path`: read, compiled and counted (its `target` of a
    float2 point, or of a float3 with dims 3)."""
    source = read_source(path)
    count = probe(gpu, source, Path(path).name, dims)
    return {"file": str(path), "source": source, "count": count}
