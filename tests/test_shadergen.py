"""`python -m app.entry.shadergen` prints the module the app compiles, for any config: the printed
text is the app's own, and it compiles on the device into every entry point's pipeline (on
lavapipe too for the tensor-core module, which only an NVIDIA device runs: tests/test_tensor_cores.py).
Every entry point is written in a .slang file: the module prints constants, tables and the
per-layer helpers the gradient paths' learnGradient calls."""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

import pytest
from helpers import run_app

from app.entry.cli_args import build_parser, config_from_args
from app.entry.shadergen import source_for
from app.gpu import target_probe
from app.gpu.kernel_cache import link_programs
from app.kernels.network_module import network_source
from app.kernels.paths import path_of
from app.kernels.planning import plan_for

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_TARGET = str(ROOT / "assets" / "example-target.slang")
CONFIGS = {
    "thread accumulators": [],
    "workgroup tiles": ["--hidden", "64,64"],
    "fourier, tanh, half": [
        "--encoding",
        "fourier",
        "--frequencies",
        "3",
        "--activation",
        "tanh",
        "--precision",
        "half",
    ],
    "group tiles, sin": ["--hidden", "40,24,8", "--activation", "sin", "--output-activation", "sigmoid"],
    "Slang target file": ["--target-file", EXAMPLE_TARGET, "--hidden", "24"],
    "half pairs": ["--precision", "half", "--hidden", "7,5"],
}
TENSOR_CORES = ["--hidden", "64,48", "--precision", "half", "--encoding", "raw", "--tensor-cores"]
# The fused trainer's other shapes (app/kernels/paths/fused/layout.py): 8 subgroups on 64-sample tiles, two to
# a column tile; 8 subgroups on 32-sample tiles
FUSED_BUSY = ["--hidden", "64,64,64", "--precision", "half", "--encoding", "raw", "--tensor-cores"]
FUSED_WIDE = ["--hidden", "128,128", "--precision", "half", "--encoding", "raw", "--tensor-cores"]
# Workgroup tiles on tensor cores: where a device's cooperative matrices hold operands otherwise
# than the fused trainer's fragment-native copies assume (plan_for(fused=False))
TILES_MMA = ["--hidden", "128,128", "--precision", "half", "--encoding", "raw", "--tensor-cores"]


def _compile(device, source: str) -> None:
    """As the app loads a generated module (app.gpu.kernel_cache), then each entry point's pipeline, so
    that Slang's code generation and the driver see every kernel."""
    name = f"printed_{hashlib.sha1(source.encode()).hexdigest()[:16]}"
    for program in link_programs(device, name, source)[1]:
        device.create_compute_pipeline(program=program)


@pytest.mark.parametrize("argv", CONFIGS.values(), ids=CONFIGS.keys())
def test_printed_module_is_the_apps_and_compiles(gpu, argv):
    printed = source_for(argv)
    args = build_parser().parse_args(argv)
    config = config_from_args(args)
    if args.target_file is not None:  # as app.entry.cli reads it
        config = config.replace(slang_target=target_probe.load(gpu, args.target_file))
        assert "namespace user_target" in printed and "float ripple(float2 p)" in printed
    assert printed == network_source(plan_for(config)), "the app's module, for a device without tensor cores"
    _compile(gpu.device, printed)


def _layers(printed: str) -> str:
    """learnGradient's per-layer part of a generated module: the statics and helpers its .slang
    entry point calls (up to the views' includes)."""
    part = printed[printed.index("// learnGradient's layers") :]
    part = part[: part.index("#include")]
    assert part.count("{") == part.count("}")
    return part


def _helper(printed: str, name: str) -> str:
    body = printed[printed.index(f"void {name}(") :]
    return body[: body.index("\n}\n")]


def _tensor_core_kernel(argv: list[str]):
    printed = source_for(argv)
    config = config_from_args(build_parser().parse_args(argv[:-1]))
    plan = plan_for(config, tensor_cores=True)
    assert all(plan.mma) and printed == network_source(plan)
    assert printed != source_for(argv[:-1]), "--tensor-cores changes the plan"
    return printed, plan, _layers(printed)


@pytest.mark.parametrize(
    "argv", [TENSOR_CORES, FUSED_BUSY, FUSED_WIDE], ids=["4-subgroups", "8-subgroups-64", "8-subgroups-32"]
)
def test_fused_tensor_core_module_is_well_formed_and_compiles(gpu, argv):
    printed, plan, kernel = _tensor_core_kernel(argv)
    layers = len(plan.layers)
    assert (
        plan.gradient_path == "fused" and '#include "paths/fused/fused.slang"' in printed and "tiles_mma" not in printed
    )
    assert "products   tensor cores on layers 0, 1, 2" in printed
    calls = (
        ("fusedForwardRows<", 1),
        ("fusedForwardColumns<", layers - 2),
        ("fusedOutputAndLoss<", 1),
        ("fusedWeightGradients<", layers),
        ("fusedBackwardRows<", 1),
        ("fusedBackwardColumns<", layers - 2),
        ("fusedHoldColumns<", 2 * (layers - 2)),  # each hidden layer's weights, forward and backward
        ("fusedWriteGradients<", layers),
        # after each forward layer but the output's, one a layer backward (fused.slang's one a tile)
        ("GroupMemoryBarrierWithGroupSync();", 2 * layers - 1),
    )
    for call, count in calls:
        assert kernel.count(call) == count, call
    per_tile = _helper(printed, "fusedForward") + _helper(printed, "fusedBackward")
    assert "fusedHoldColumns<" in _helper(printed, "fusedBeginStep") and "fusedHoldColumns<" not in per_tile, (
        "held once a step, not per tile"
    )
    hidden = plan.layers[1]
    copies = printed[printed.index("void storeWeightCopies") :]
    assert f"if (index >= {hidden.offset} && index < {hidden.offset + hidden.fan_in * hidden.fan_out})" in copies
    copy_halves = sum(2 * layer.fan_in * layer.fan_out for layer in plan.layers[1:-1])  # both ways
    assert path_of(plan).weight_count(plan) == plan.param_count + (-plan.param_count) % 8 + copy_halves
    _compile(gpu.device, printed)


def test_tensor_core_module_is_well_formed_and_compiles(gpu):
    plan = plan_for(config_from_args(build_parser().parse_args(TILES_MMA[:-1])), tensor_cores=True, fused=False)
    printed = network_source(plan)
    kernel = _layers(printed)
    assert all(plan.mma)
    layers = len(plan.layers)
    assert plan.gradient_path != "fused"
    assert (
        '#include "paths/tiles/tiles_mma.slang"' in printed and "products   tensor cores on layers 0, 1, 2" in printed
    )
    for call, count in (("mmaForward<", layers), ("mmaGradients<", layers), ("mmaBackward<", layers - 1)):
        assert kernel.count(call) == count, call
    for k, layer in enumerate(plan.layers):
        assert f"mmaWriteGradients<{layer.fan_in}, {layer.fan_out}," in kernel
        assert f"if (tid < {layer.fan_out}) slot[{layer.bias_offset} + tid] = tileBias{k};" in kernel
    # dZ and dH take turns in gradient blocks 0 and 1 from the output layer back
    blocks = [int(b) for b in re.findall(r"tileBiasGradient<\d+>\(tid, (\d)\)", kernel)]
    assert blocks == [(layers - 1 - k) % 2 for k in reversed(range(layers))]
    _compile(gpu.device, printed)


def test_pairs_module_runs_each_layer_forward_and_back():
    """Half precision on thread accumulators: trainPair carries two samples through every layer
    and back, each layer reading the 16-byte lines of the weights buffer that hold its block."""
    printed = source_for(CONFIGS["half pairs"])
    assert '#include "paths/pairs/pairs.slang"' in printed and '#include "paths/thread/train.slang"' not in printed
    chain = printed[printed.index("void trainPair") :]
    chain = chain[: chain.index("\n}\n")]
    assert chain.count("pairForward<") == 3 and chain.count("pairAccumulate<") == 3
    assert chain.count("pairInputGradient<") == 2, "no input gradient below the first layer"
    # layer 1 (7 -> 5) starts at half 35 and ends at 75: lines 4 to 9
    assert "pairForward<7, 5, HiddenActivation, 35, 4, 6>(w, h0, z1)" in chain
    assert "pairInputGradient<7, 5, 35, 4, 5>(w, d1)" in chain, "its weights without the biases"


LANE_TILES = ["--hidden", "68,132,8", "--encoding", "fourier", "--frequencies", "1", "--cpu"]


def test_lane_tile_module_walks_a_table_of_the_layers_and_compiles(gpu):
    """A CPU driver's plan: one copy of each layer function, walked over a table of the layers."""
    if not gpu.software:  # NVIDIA's Vulkan driver fails the 68-132-8 lane module's pipeline (VK_ERROR_UNKNOWN)
        pytest.skip("lane tiles are the CPU drivers' path (app/gpu/gpu.py lane_tiles)")
    printed = source_for(LANE_TILES)
    config = config_from_args(build_parser().parse_args(LANE_TILES[:-1]))
    plan = plan_for(config, cpu=True)
    assert plan.gradient_path == "lanes" and printed == network_source(plan)
    assert printed != source_for(LANE_TILES[:-1]), "--cpu changes the plan"
    assert '#include "paths/lanes/lanes.slang"' in printed and "gradients  lane tiles of 64 samples" in printed
    table = printed[printed.index("LANE_LAYER_TABLE[LANE_LAYERS] = {") :]
    rows = re.findall(r"\{ ([\d, ]+) \},", table[: table.index("};")])
    assert [tuple(int(v) for v in row.split(", "))[:5] for row in rows] == [
        (layer.fan_in, layer.fan_out, -(-layer.fan_in // 4) * 4, -(-layer.fan_out // 4) * 4, layer.offset)
        for layer in plan.layers
    ]
    _compile(gpu.device, printed)


def test_the_module_prints_no_entry_point():
    """Every path's learnGradient is in its .slang file (app/kernels/paths/<name>/): the module
    prints the per-layer helpers it calls, and no entry point of its own."""
    for argv in (*CONFIGS.values(), TENSOR_CORES, FUSED_BUSY, TILES_MMA, LANE_TILES):
        if "--target-file" in argv:
            continue
        printed = source_for(argv)
        assert "[shader(" not in printed and "void learnGradient" not in printed, argv


def test_every_line_is_indented_by_whole_levels():
    for argv in (*CONFIGS.values(), TENSOR_CORES, TILES_MMA, LANE_TILES):
        if "--target-file" in argv:
            continue
        for line in source_for(argv).splitlines():
            assert (len(line) - len(line.lstrip(" "))) % 4 == 0 and not line.endswith(" "), line


def test_command_line_prints_the_module_and_refuses_bad_options(gpu, tmp_path):
    from app.entry import shadergen

    def run(*args: str) -> subprocess.CompletedProcess:
        return run_app(gpu, tmp_path, *args, main=shadergen.main)  # in this process

    printed = run("--hidden", "64,64", "--activation", "tanh")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.startswith("// Generated by app/kernels/network_module.py")
    assert "// network    4 -> 64 -> 64 -> 4: 4740 parameters, tanh hidden, identity output" in printed.stdout
    assert printed.stdout == source_for(["--hidden", "64,64", "--activation", "tanh"])
    for bad, message in (
        (["--hidden", "64,x"], "error: argument --hidden"),
        (["--precision", "double"], "error: argument --precision"),
        (["--hidden", "999"], "error: hidden layer width must be between"),
        (["--headless"], "error: --headless does not apply to the generated module"),
        (["--target-file", "/no/such/file.slang"], "error: cannot read target file"),
    ):
        result = run(*bad)
        assert result.returncode == 2 and result.stdout == "", bad
        assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith(message), result.stderr
