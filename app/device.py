"""The one place a SlangPy device is created."""

from __future__ import annotations

import os
from pathlib import Path

import slangpy as spy

from .errors import UserError, first_line
from .resources import shader_dir

DEVICE_TYPES = {
    "auto": spy.DeviceType.automatic,
    "vulkan": spy.DeviceType.vulkan,
    "cuda": spy.DeviceType.cuda,
    "d3d12": spy.DeviceType.d3d12,
    "metal": spy.DeviceType.metal,
}


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "slang-visual-trainer"


def device_kind(kind: str = "auto") -> str:
    """The device type to use: SLANGPY_DEVICE_TYPE_OVERRIDE where it is set (as SlangPy's own
    create_device honours it, for test runs on other APIs), else `kind`."""
    override = os.environ.get("SLANGPY_DEVICE_TYPE_OVERRIDE")
    if override is not None:
        if override.lower() not in DEVICE_TYPES or override.lower() == "auto":
            allowed = ", ".join(k for k in DEVICE_TYPES if k != "auto")
            raise UserError(f"SLANGPY_DEVICE_TYPE_OVERRIDE must be one of {allowed} (got {override!r})")
        return override.lower()
    if kind not in DEVICE_TYPES:
        raise UserError(f"device must be one of {', '.join(DEVICE_TYPES)} (got {kind!r})")
    return kind


def create_device(kind: str = "auto") -> spy.Device:
    """Creates the device for training, heatmaps and UI."""
    kind = device_kind(kind)
    options = spy.SlangCompilerOptions()
    # SlangPy's own shaders too, as spy.create_device adds them: `import slangpy` in the
    # gradient check's module (app/grad_check.py) needs its tensor types.
    options.include_paths = [str(shader_dir()), spy.SHADER_PATH]
    # SlangPy's own caches: compiled Slang modules, and the driver's pipeline binaries.
    caches = {"module_cache_path": cache_dir() / "modules", "shader_cache_path": cache_dir() / "shaders"}
    try:
        for path in caches.values():
            path.mkdir(parents=True, exist_ok=True)
    except OSError:
        caches = {}  # a read-only home only costs compile time
    try:
        return spy.Device(
            type=DEVICE_TYPES[kind],
            compiler_options=options,
            enable_hot_reload=False,
            **{name: str(path) for name, path in caches.items()},
        )
    except Exception as error:  # sgl raises plain RuntimeError with a multi-line report
        raise UserError(f"no usable {kind} device: {first_line(error)}") from None


def describe(device: spy.Device) -> dict[str, str]:
    return {"type": device.info.type.name, "adapter": device.info.adapter_name}
