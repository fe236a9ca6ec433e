"""The one place a SlangPy device is created."""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import slangpy as spy

from ..errors import UserError, first_line
from ..resources import slang_include_paths
from .adapters import VISIBLE_DEVICES, Adapter, adapter_named, adapters_from, choose_adapter, read_nvidia_smi

DEVICE_TYPES = {
    "auto": spy.DeviceType.automatic,
    "vulkan": spy.DeviceType.vulkan,
    "cuda": spy.DeviceType.cuda,
    "d3d12": spy.DeviceType.d3d12,
    "metal": spy.DeviceType.metal,
}


# Names the folder of SlangPy's compiled kernels in place of the cache folder: one kernel cache for
# runs that each keep a cache folder of their own (a cluster's workers, a test suite's processes).
KERNEL_CACHE = "VISUAL_TRAINER_KERNEL_CACHE"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "slang-visual-trainer"


def kernel_cache_dir() -> Path:
    """Where SlangPy keeps compiled Slang modules and pipelines: $VISUAL_TRAINER_KERNEL_CACHE, else
    the cache folder."""
    named = os.environ.get(KERNEL_CACHE)
    return Path(named) if named else cache_dir()


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


def create_device(kind: str = "auto", gpu: str | None = None) -> spy.Device:
    """Creates the device for training, heatmaps and UI (open_device)."""
    return open_device(kind, gpu)[0]


def open_device(kind: str = "auto", gpu: str | None = None) -> tuple[spy.Device, Adapter | None]:
    """A device of `kind` on the adapter `gpu` names (an index or a UUID, as --gpu takes it),
    else on CUDA_VISIBLE_DEVICES's first GPU, else on SlangPy's choice (app/gpu/adapters.py);
    and the adapter it runs on (None where SlangPy lists none that it could be)."""
    kind = device_kind(kind)
    adapters = _adapters(kind)
    chosen = choose_adapter(adapters, kind, gpu, os.environ.get(VISIBLE_DEVICES), read_nvidia_smi)
    device = _new_device(kind, chosen)
    return device, chosen or adapter_named(adapters, device.info.adapter_name)


def _adapters(kind: str) -> list[Adapter]:
    """SlangPy's adapters for `kind`; none where it cannot list them (no driver for the API:
    creating the device then says why)."""
    with native_output_held():  # a missing CUDA driver prints a line of its own here
        try:
            return adapters_from(spy.Device.enumerate_adapters(DEVICE_TYPES[kind]))
        except Exception:  # sgl raises plain RuntimeError
            return []


def _new_device(kind: str, adapter: Adapter | None) -> spy.Device:
    options = spy.SlangCompilerOptions()
    # SlangPy's own shaders too, as spy.create_device adds them: `import slangpy` in the
    # gradient check's module (app/check/grad_check.py) needs its tensor types.
    options.include_paths = [*map(str, slang_include_paths()), spy.SHADER_PATH]
    # SlangPy's own caches: compiled Slang modules, and the driver's pipeline binaries.
    folder = kernel_cache_dir()
    caches = {"module_cache_path": folder / "modules", "shader_cache_path": folder / "shaders"}
    try:
        for path in caches.values():
            path.mkdir(parents=True, exist_ok=True)
    except OSError:
        caches = {}  # a read-only home only costs compile time
    with native_output_held() as held:
        try:
            device = spy.Device(
                type=DEVICE_TYPES[kind],
                compiler_options=options,
                enable_hot_reload=False,
                adapter_luid=None if adapter is None else list(bytes.fromhex(adapter.uuid)),
                **{name: str(path) for name, path in caches.items()},
            )
        except Exception as error:  # sgl raises plain RuntimeError with a multi-line report
            raise UserError(f"no usable {kind} device: {_reason(error, held.text())}") from None
    if held.text():
        sys.stderr.write(held.text())  # a device that works: what its driver said is worth seeing
    return device


def _reason(error: Exception, driver_lines: str) -> str:
    """The one line a failed device is reported with: sgl's own line is only "Failed to create
    device!"; the driver's last error line, held back, says why (no CUDA driver, say)."""
    said = [line for line in driver_lines.splitlines() if "error" in line.lower() or "failed" in line.lower()]
    cause = re.sub(r"\x1b\[[0-9;]*m", "", said[-1]).strip() if said else ""
    cause = re.sub(r"^\[ERROR\]\s*(\(\w+\)\s*)?(layer:\s*)?", "", cause)
    return f"{first_line(error)} ({cause})" if cause else first_line(error)


class _Held:
    def __init__(self, path: Path):
        self.path = path

    def text(self) -> str:
        try:
            return self.path.read_text(errors="replace")
        except OSError:
            return ""


@contextlib.contextmanager
def native_output_held() -> Iterator[_Held]:
    """While creating a device, what native code writes to stdout and stderr (sgl's log, the
    drivers' own prints) goes to a file instead of the terminal, so that a device that cannot
    be made is one line, not three driver lines before it. The caller decides what to show."""
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "native-output.txt"
        saved = [os.dup(1), os.dup(2)]
        try:
            with open(path, "wb") as sink:
                os.dup2(sink.fileno(), 1)
                os.dup2(sink.fileno(), 2)
                try:
                    yield _Held(path)
                finally:
                    _flush_c_stdio()
                    os.dup2(saved[0], 1)
                    os.dup2(saved[1], 2)
        finally:
            for fd in saved:
                os.close(fd)


def _flush_c_stdio() -> None:
    """Native prints sit in C's stdio buffers until flushed: out before the descriptors return."""
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):
        pass


def describe(device: spy.Device) -> dict[str, str]:
    return {"type": device.info.type.name, "adapter": device.info.adapter_name}
