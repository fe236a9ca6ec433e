"""The cooperative-matrix-2 road's primitive beside the app's (issue 20, item 2): a chain of
64-sample x 64 x 64 layers (product, leaky ReLU, round trip through shared memory), once as one
workgroup-scope 64x64 product a layer (VK_NV_cooperative_matrix2) and once as the subgroup-scope
16x16 products the fused trainer is built from (shaders/bench/bench_chains.slang). Checked against
numpy, then timed: TFLOP/s of the products."""

from __future__ import annotations

import time

import numpy as np
import slangpy as spy

from ..resources import shader_dir

USAGE = spy.BufferUsage.shader_resource | spy.BufferUsage.unordered_access
GROUPS = 132 * 16  # workgroups of 128 threads, each its own 64 x 64 tile
CHECK_REPS, TIMED_REPS = 3, 512
SLOPE = 0.01


def _reference(x: np.ndarray, w: np.ndarray, reps: int) -> np.ndarray:
    """The chain in float64 with the shader's half roundings between layers."""
    h, c = x.astype(np.float64), None
    for _ in range(reps):
        c = h @ w.astype(np.float64)
        c = np.maximum(c, SLOPE * c)
        h = c.astype(np.float16).astype(np.float64)
    return c


def measure(device: spy.Device) -> dict:
    """{road: {"correct": bool, "tflops": float}} for both scopes; a road the device cannot run
    gets {"error": first line}."""
    rng = np.random.default_rng(2)
    x = rng.uniform(-1, 1, (GROUPS * 64, 64)).astype(np.float16)
    w = (rng.standard_normal((64, 64)) / 8).astype(np.float16)  # keeps the chain's scale near 1
    xb, wb = device.create_buffer(data=x, usage=USAGE), device.create_buffer(data=w, usage=USAGE)
    out = device.create_buffer(size=GROUPS * 64 * 64 * 4, usage=USAGE)
    source = (shader_dir() / "bench" / "bench_chains.slang").read_text()
    module = device.load_module_from_source("bench_chains", source)
    results = {}
    for road, entry in (
        ("workgroup 64x64 (cooperative-matrix-2)", "roadWorkgroupChain"),
        ("subgroup 16x16 (the app's)", "roadSubgroupChain"),
    ):
        try:
            kernel = device.create_compute_kernel(device.link_program([module], [module.entry_point(entry)]))

            def run(reps: int, kernel=kernel) -> float:
                device.wait()
                start = time.perf_counter()
                kernel.dispatch(
                    [GROUPS * 128, 1, 1], x=xb.device_address, w=wb.device_address, out=out.device_address, reps=reps
                )
                device.wait()
                return time.perf_counter() - start

            run(CHECK_REPS)
            got = out.to_numpy().view(np.float32).reshape(GROUPS * 64, 64)
            rows = slice(0, 4 * 64)  # four workgroups' tiles
            want = _reference(x[rows], w, CHECK_REPS)
            correct = bool(np.allclose(got[rows], want, rtol=3e-2, atol=3e-2))
            seconds = min(run(TIMED_REPS), run(TIMED_REPS))
            tflops = GROUPS * TIMED_REPS * 2 * 64**3 / seconds / 1e12
            results[road] = {"correct": correct, "tflops": tflops}
        except Exception as error:  # a driver or compiler without the feature
            results[road] = {"error": str(error).splitlines()[0]}
    return results
