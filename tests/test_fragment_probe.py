"""How app/gpu/gpu.py reads the fragment probe (app/kernels/paths/fused/fragment_probe.slang) before the fused
trainer runs on a device: the kernel needs cooperative matrices, so here its answers are made in
numpy, as NVIDIA's drivers gave them on an H100 (2026-11-27): B operands in mma.sync's order on
Vulkan and on CUDA; A operands and accumulators in mma.sync's order on CUDA, which
app/kernels/paths/fused/fused_registers.slang relies on there, and in another on Vulkan, which it
does not use."""

from __future__ import annotations

import types

import numpy as np
import pytest
import slangpy as spy

from app.gpu.gpu import Gpu
from app.kernels.paths.fused.fragments import fragment_slot, operand_slot

ROWS, COLUMNS = np.divmod(np.arange(256), 16)


def _held(slot) -> np.ndarray:
    """What a probe tile reads back: at each lane's component, the element (r * 16 + c) held there."""
    held = np.empty(256, np.int64)
    held[slot(ROWS, COLUMNS)] = np.arange(256)
    return held


def _vulkan_operand_slot(r, c):
    """Vulkan's A operands and accumulators on the H100: columns 8-15 before rows 8-15."""
    return ((r % 8) * 4 + (c % 8) // 2) * 8 + c % 2 + 2 * (c // 8) + 4 * (r // 8)


def _gpu(device_type, tiles) -> Gpu:
    gpu = Gpu.__new__(Gpu)
    gpu.__dict__.update(tensor_cores=True, emulated_tensor_cores=False)
    gpu.device = types.SimpleNamespace(info=types.SimpleNamespace(type=device_type))
    gpu._fragment_probe = lambda: np.stack(tiles)
    return gpu


CUDA_TILES = [_held(fragment_slot)] + [_held(operand_slot)] * 3
VULKAN_TILES = [_held(fragment_slot)] + [_held(_vulkan_operand_slot)] * 3


def test_the_probes_answers_as_the_h100_gave_them_let_the_fused_trainer_run():
    # lane 0's components of each tile, as the H100 printed them
    assert VULKAN_TILES[0][:8].tolist() == CUDA_TILES[0][:8].tolist() == [0, 16, 128, 144, 8, 24, 136, 152]
    assert VULKAN_TILES[1][:8].tolist() == [0, 1, 8, 9, 128, 129, 136, 137]
    assert CUDA_TILES[1][:8].tolist() == [0, 1, 128, 129, 8, 9, 136, 137]
    assert _gpu(spy.DeviceType.cuda, CUDA_TILES).fused_fragments
    assert _gpu(spy.DeviceType.vulkan, VULKAN_TILES).fused_fragments


@pytest.mark.parametrize("tile", [1, 2, 3])
def test_on_cuda_every_tile_must_be_where_the_register_loads_read_it(tile):
    """Vulkan's order in any one of CUDA's A or accumulator tiles keeps the fused trainer off."""
    tiles = list(CUDA_TILES)
    tiles[tile] = _held(_vulkan_operand_slot)
    assert not _gpu(spy.DeviceType.cuda, tiles).fused_fragments


def test_a_b_operand_out_of_place_keeps_the_fused_trainer_off_everywhere():
    moved = _held(fragment_slot)
    moved[[0, 1]] = moved[[1, 0]]
    assert not _gpu(spy.DeviceType.vulkan, [moved] + VULKAN_TILES[1:]).fused_fragments
    assert not _gpu(spy.DeviceType.cuda, [moved] + CUDA_TILES[1:]).fused_fragments


def test_components_a_device_does_not_have_keep_it_off():
    """-1: a lane with fewer than 8 components of a tile (another fragment size)."""
    short = _held(fragment_slot)
    short[::8] = -1
    assert not _gpu(spy.DeviceType.vulkan, [short] + VULKAN_TILES[1:]).fused_fragments


def test_a_probe_that_does_not_build_keeps_it_off():
    gpu = _gpu(spy.DeviceType.cuda, CUDA_TILES)

    def fails():
        raise RuntimeError("no cooperative matrices")

    gpu._fragment_probe = fails
    assert not gpu.fused_fragments
