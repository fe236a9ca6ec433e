"""The fully fused tensor-core trainer's host side, which CI's lavapipe can check: its layout
fits the shared memory it promises, plans choose it only where it runs, and the fragment-native
weight copies that adjustParameters writes on the GPU (storeWeightCopies) hold exactly what the
host's numpy copy does. Its kernels need cooperative matrices: tests/test_tensor_cores.py."""

from __future__ import annotations

import numpy as np
import pytest

from app.config.config import Config, validate
from app.kernels.network_module import network_source
from app.kernels.paths import path_of
from app.kernels.paths.fused.fragments import fragment_slot, operand_slot
from app.kernels.paths.fused.layout import FUSED_SHARED_BUDGET, fused_layout
from app.kernels.paths.fused.shadergen import weight_copies_function
from app.kernels.planning import plan_for

WIDE = dict(encoding="raw", hidden=[64, 64, 64], precision="half")


def _nvidia_b_fragment(k: int, n: int) -> int:
    """mma.sync's B fragment, written out from PTX's figure: lane groupID = n % 8 and threadID
    (k % 8) / 2 hold (k, n) in b0..b3 (k < 8: b0, b1; k >= 8: b2, b3) of the n-half n / 8."""
    group, thread = n % 8, (k % 8) // 2
    register = (k % 2) + 2 * (k // 8)
    return (group * 4 + thread) * 8 + register + 4 * (n // 8)


def test_fragment_slots_are_nvidias_b_operand_and_a_permutation():
    slots = [fragment_slot(k, n) for k in range(16) for n in range(16)]
    assert sorted(slots) == list(range(256))
    assert all(fragment_slot(k, n) == _nvidia_b_fragment(k, n) for k in range(16) for n in range(16))


def _nvidia_a_fragment(r: int, c: int) -> int:
    """mma.sync's A fragment (and the accumulators of its two n-halves side by side), from PTX's
    figure: lane groupID = r % 8 and threadID (c % 8) / 2 hold (r, c); a0, a1 at rows under 8 and
    columns under 8, a2, a3 rows 8-15, a4, a5 columns 8-15, a6, a7 both."""
    group, thread = r % 8, (c % 8) // 2
    register = {(False, False): 0, (True, False): 2, (False, True): 4, (True, True): 6}[(r >= 8, c >= 8)]
    return (group * 4 + thread) * 8 + register + c % 2


def test_operand_slots_are_nvidias_a_operand_and_a_permutation():
    """Where app/kernels/paths/fused/fused_registers.slang reads and writes a lane's elements on CUDA."""
    slots = [operand_slot(r, c) for r in range(16) for c in range(16)]
    assert sorted(slots) == list(range(256))
    assert all(operand_slot(r, c) == _nvidia_a_fragment(r, c) for r in range(16) for c in range(16))
    assert operand_slot(np.arange(16), np.arange(16)).tolist() == [_nvidia_a_fragment(i, i) for i in range(16)]


def test_weight_copies_hold_each_weight_at_its_operand_place():
    layout = fused_layout((2, 64, 48, 4))
    copy = layout.copies[0]  # the 64 -> 48 layer
    weights = np.arange(48 * 64, dtype=np.float64).reshape(48, 64)
    forward, backward = copy.tiles(weights)
    for o, i in ((0, 0), (17, 5), (47, 63), (33, 40)):
        # forward: tile (o / 16, i / 16), element (k, n) = (i % 16, o % 16) of W^T
        assert forward[((o // 16) * 4 + i // 16) * 256 + fragment_slot(i % 16, o % 16)] == weights[o, i]
        # backward: tile (i / 16, o / 16), element (k, n) = (o % 16, i % 16) of W
        assert backward[((i // 16) * 3 + o // 16) * 256 + fragment_slot(o % 16, i % 16)] == weights[o, i]


@pytest.mark.parametrize(
    ("sizes", "shape"),
    [
        ((2, 64, 64, 64, 4), (8, 64)),  # 4 column tiles a layer: two subgroups share each
        ((4, 32, 32, 4), (8, 64)),  # 2 tiles: four share each
        ((34, 64, 64, 8), (8, 64)),
        ((2, 48, 48, 48, 48, 4), (4, 64)),  # 3 tiles a layer would leave two of eight idle
        ((2, 64, 4), (4, 64)),  # no layer split by columns
        ((2, 128, 128, 4), (8, 32)),  # 64 tiles of dW and 57 uint4 a sample: half the tile
        ((2, 64, 64, 64, 64, 4), (8, 32)),  # 19 accumulator tiles a subgroup of four
        ((2, 128, 128, 128, 4), None),
        ((2, 64, 40, 4), None),
        ((2, 64, 64, 20), None),
    ],
)
def test_layout_fits_shared_memory_or_declines(sizes, shape):
    layout = fused_layout(sizes)
    assert (layout and (layout.warps, layout.samples)) == shape
    if layout is not None:
        assert layout.shared_bytes <= FUSED_SHARED_BUDGET and layout.bias_columns[-1] <= 16
        assert layout.words >= max(b + s * layout.samples for b, s in zip(layout.bases, layout.strides))
        assert layout.words >= 64 * layout.warps, "each subgroup's fp32 stage at the end"
        assert layout.accumulators <= 16 and layout.row_blocks * 16 == layout.samples


@pytest.mark.parametrize("sizes", [(2, 16, 1), (2, 64, 64, 64, 4), (2, 128, 128, 4), (34, 64, 64, 8), (2, 64, 64, 16)])
def test_shared_memory_runs_past_the_column_major_reads_of_the_cuda_backend(sizes):
    """SlangPy's CUDA backend reads a column-major B operand's 16 columns and 8 more (compute-
    sanitizer found the reads past the end on an H100): the staged last layer's W^T (16 rows of
    last_stride words, read as columns) and the e_j window (from column 16 - j, 2 words a column)."""
    layout = fused_layout(sizes)
    last_rows_read = 16 + 8
    assert layout.last_w + last_rows_read * layout.last_stride <= layout.words
    assert layout.ones + (16 + 16 + 8) * 2 <= layout.words, "j = 0 starts at the window's column 16"


@pytest.mark.parametrize(
    "sizes, held, holds",
    [
        ((2, 64, 64, 64, 4), 16, True),  # 7 accumulator tiles (eight subgroups): 56 + 64 registers
        ((2, 48, 48, 48, 48, 4), 18, True),  # four subgroups, 12 accumulators: 96 + 72, the budget
        ((2, 80, 80, 4), 20, False),  # 2 rounds of 5 tiles each way: 96 + 80 would spill
        ((2, 64, 4), 0, True),  # no hidden layer split by columns
    ],
)
def test_weights_are_held_for_the_step_within_the_register_budget(sizes, held, holds):
    layout = fused_layout(sizes)
    assert layout.held_tiles == held and layout.holds_weights == holds


@pytest.mark.parametrize(
    ("sizes", "splits"),
    [
        ((2, 64, 64, 64, 4), (2, 2)),  # eight subgroups, 4 tiles: two to a tile, 2 of 4 row blocks each
        ((2, 128, 128, 4), (1, 1)),  # eight subgroups, 8 tiles: one each
        ((2, 48, 48, 48, 48, 4), (1, 1)),  # four subgroups, 3 tiles: no even split
    ],
)
def test_column_tiles_shared_by_subgroups_split_the_rows(sizes, splits):
    layout = fused_layout(sizes)
    copy = layout.copies[0]
    got = (layout.column_split(copy.fan_out // 16), layout.column_split(copy.fan_in // 16))
    assert got == splits
    for split in got:
        assert layout.row_blocks % split == 0 and layout.warps % split == 0


def _helper(source: str, name: str) -> str:
    """The body of the generated helper `name`: learnGradient's per-layer part (fused.slang calls it)."""
    body = source[source.index(f"void {name}(") :]
    return body[: body.index("\n}\n")]


def test_the_kernel_loads_held_weights_before_the_tile_loop_and_others_per_layer():
    def module(hidden):
        return network_source(
            plan_for(validate(Config(encoding="raw", hidden=hidden, precision="half")), tensor_cores=True)
        )

    held = module([64, 64, 64])  # fused.slang's learnGradient calls fusedBeginStep before its tile loop
    per_tile = "".join(_helper(held, name) for name in ("fusedForward", "fusedBackward"))
    assert _helper(held, "fusedBeginStep").count("fusedHoldColumns<") == 4 and "fusedHoldColumns<" not in per_tile
    wide = module([80, 80])
    assert "fusedHoldColumns<" not in _helper(wide, "fusedBeginStep")
    for name, layer in (("fusedForward", "fusedForwardColumns<"), ("fusedBackward", "fusedBackwardColumns<")):
        body = _helper(wide, name)
        assert body.count("fusedHoldColumns<") == 1 and body.index("fusedHoldColumns<") < body.index(layer), name


def test_plans_choose_the_fused_trainer_only_where_it_runs():
    half = validate(Config(**WIDE))
    assert plan_for(half, tensor_cores=True).gradient_path == "fused"
    assert plan_for(half, tensor_cores=True, fused=False).gradient_path != "fused"  # a device with another layout
    assert plan_for(half).gradient_path != "fused"
    assert plan_for(validate(Config(**dict(WIDE, precision="float"))), tensor_cores=True).gradient_path != "fused"
    assert plan_for(validate(Config(**dict(WIDE, activation="sin"))), tensor_cores=True).gradient_path != "fused"
    assert plan_for(validate(Config(**dict(WIDE, matmul="simt"))), tensor_cores=True).gradient_path != "fused"
    plan = plan_for(half, tensor_cores=True)
    params = np.random.default_rng(0).standard_normal(plan.param_count).astype(np.float16)
    image = path_of(plan).weight_image(plan, params)
    assert image.size == path_of(plan).weight_count(plan) > plan.param_count and np.array_equal(
        image[: plan.param_count], params
    )


def test_adjust_writes_the_same_copies_as_the_host(gpu):
    plan = plan_for(validate(Config(**WIDE)), tensor_cores=True)
    source = f"""typealias NFloat = half;
{weight_copies_function(path_of(plan).weight_copies(plan))}
[shader("compute")]
[numthreads(64, 1, 1)]
void writeCopies(uint3 id : SV_DispatchThreadID, uniform half* values, uniform half* out, uniform uint count)
{{
    if (id.x < count)
        storeWeightCopies(out, id.x, values[id.x]);
}}"""
    module = gpu.device.load_module_from_source("weight_copies_test", source)
    kernel = gpu.device.create_compute_kernel(gpu.device.link_program([module], [module.entry_point("writeCopies")]))
    values = np.random.default_rng(1).uniform(-2, 2, plan.param_count).astype(np.float16)
    src, out = gpu.buffer(values.nbytes), gpu.buffer(path_of(plan).weight_count(plan) * 2)
    gpu.write(src, values)
    gpu.write(out, np.zeros(path_of(plan).weight_count(plan), np.float16))
    count = plan.param_count
    kernel.dispatch([count, 1, 1], values=src.device_address, out=out.device_address, count=count)
    written = gpu.read(out, path_of(plan).weight_count(plan), np.float16)
    expected = path_of(plan).weight_image(plan, values)
    copies = slice(-(-count // 8) * 8, path_of(plan).weight_count(plan))
    assert np.array_equal(written[copies], expected[copies])
    assert np.count_nonzero(written[copies]) > 0.99 * (path_of(plan).weight_count(plan) - copies.start)
