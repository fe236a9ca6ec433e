"""--gpu and CUDA_VISIBLE_DEVICES on the command line (app/gpu/adapters.py decides, on made-up
adapters, in tests/test_adapters.py): summary.json names the adapter that ran, as SlangPy itself
lists it; an adapter that is not there is one line listing those that are, exit 2, nothing
written, in headless, gradient-check and window mode alike; and the window's rebuild child
compiles on the adapter it is given. VISUAL_TRAINER_KERNEL_CACHE names the folder of SlangPy's
kernel caches."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
import slangpy as spy
from helpers import ROOT, run_headless, run_headless_here

from app.entry import cli


def adapters_of(device_type: str) -> list:
    """SlangPy's adapters for a device type named as summary.json names it ("vulkan")."""
    return spy.Device.enumerate_adapters(getattr(spy.DeviceType, device_type))


def luid_hex(adapter) -> str:
    return "".join(f"{byte:02x}" for byte in adapter.luid)


def summary_of(tmp_path, *args: str) -> dict:
    result = run_headless(tmp_path, "--iterations", "10", "--eval-every", "10", "--out", str(tmp_path / "out"), *args)
    assert result.returncode == 0, result.stderr
    return json.loads((tmp_path / "out" / "summary.json").read_text())


def test_gpu_0_runs_on_the_first_adapter_and_says_so(tmp_path):
    summary = summary_of(tmp_path, "--gpu", "0")
    first = adapters_of(summary["device"]["type"])[0]
    assert summary["adapter"] == {"index": 0, "name": first.name, "uuid": luid_hex(first)}
    assert summary["device"]["adapter"] == first.name  # the device's own report agrees


def test_cuda_visible_devices_0_runs_on_gpu_0(tmp_path, monkeypatch):
    """Where nvidia-smi is missing (CI, lavapipe) the index is the adapter index; where it is
    there, the adapter is the one with nvidia-smi's GPU 0's UUID."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    summary = summary_of(tmp_path)
    listed = adapters_of(summary["device"]["type"])
    if shutil.which("nvidia-smi") is None:
        assert summary["adapter"]["uuid"] == luid_hex(listed[0])
    else:
        smi = ["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader", "--id=0"]
        uuid = subprocess.run(smi, capture_output=True, text=True, check=True).stdout.strip()
        assert summary["adapter"]["uuid"].startswith(uuid[4:].replace("-", "")[:16])


def assert_refused_naming_the_adapters(stderr: str, asked: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {asked}: ") and "Traceback" not in stderr, stderr
    for index, adapter in enumerate(adapters_of("automatic")):
        assert f"{index}: {adapter.name}, UUID {luid_hex(adapter)}" in lines[0], lines[0]


@pytest.mark.parametrize("asked", ["7", "GPU-deadbeef"])
def test_headless_on_no_such_adapter_is_one_line_and_writes_nothing(gpu, tmp_path, monkeypatch, asked):
    monkeypatch.delenv("SLANGPY_DEVICE_TYPE_OVERRIDE", raising=False)  # the adapters listed are auto's
    result = run_headless_here(gpu, tmp_path, "--iterations", "10", "--out", str(tmp_path / "out"), "--gpu", asked)
    assert result.returncode == 2
    assert_refused_naming_the_adapters(result.stderr, f"--gpu {asked}")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("mode", [["--grad-check"], []], ids=["grad-check", "window"])
def test_grad_check_and_window_on_no_such_adapter_are_one_line(tmp_path, monkeypatch, capsys, mode):
    """Refused before a device or a window exists, so in-process."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # no saved settings of the user's
    monkeypatch.delenv("SLANGPY_DEVICE_TYPE_OVERRIDE", raising=False)
    monkeypatch.setenv("DISPLAY", ":99")  # the window's check for a display passes; none is opened
    assert cli.main([*mode, "--gpu", "7"]) == cli.EXIT_USAGE
    assert_refused_naming_the_adapters(capsys.readouterr().err, "--gpu 7")


def warm_child(gpu, uuid: str) -> subprocess.CompletedProcess:
    """app/loop/rebuild.py's child as a window's rebuild starts it, on the adapter of `uuid`."""
    config = json.dumps({"hidden": [4]})
    kind = gpu.device.info.type.name.lower()
    command = [sys.executable, "-m", "app.loop.rebuild", config, kind, uuid]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_the_rebuild_child_compiles_on_the_windows_adapter(gpu):
    """It announces its four stages on the window's adapter, and refuses an adapter not there
    (it would otherwise have taken SlangPy's choice)."""
    done = warm_child(gpu, gpu.adapter.uuid)
    assert done.returncode == 0 and done.stdout.split() == ["0", "1", "2", "3"], done.stderr[-2000:]
    refused = warm_child(gpu, "deadbeef" * 4)
    assert refused.returncode != 0 and "adapter has this UUID" in refused.stderr, refused.stderr[-2000:]


def test_the_kernel_cache_variable_names_where_compiled_kernels_go(monkeypatch, tmp_path):
    """SlangPy's module and pipeline caches are under the cache folder, or under the folder
    VISUAL_TRAINER_KERNEL_CACHE names; the start-up benchmark's cold start drops the variable."""
    import app.gpu.device as device
    from app.bench.startup import _cache_env

    made = []

    class Made:
        enumerate_adapters = staticmethod(spy.Device.enumerate_adapters)

        def __init__(self, **options):
            made.append(options)
            raise RuntimeError("no device in this test")

    monkeypatch.setattr(device.spy, "Device", Made)
    monkeypatch.delenv("SLANGPY_DEVICE_TYPE_OVERRIDE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "own"))
    for named, folder in (
        (None, tmp_path / "own" / "slang-visual-trainer"),
        (tmp_path / "shared", tmp_path / "shared"),
    ):
        if named is None:
            monkeypatch.delenv(device.KERNEL_CACHE, raising=False)
        else:
            monkeypatch.setenv(device.KERNEL_CACHE, str(named))
        with pytest.raises(device.UserError):
            device.create_device("vulkan")
        assert (made[-1]["module_cache_path"], made[-1]["shader_cache_path"]) == (
            str(folder / "modules"),
            str(folder / "shaders"),
        )
        assert (folder / "modules").is_dir()
    assert device.cache_dir() == tmp_path / "own" / "slang-visual-trainer", "settings and autosaves stay"
    assert device.KERNEL_CACHE not in _cache_env(str(tmp_path / "cold"))
