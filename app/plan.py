"""NetworkPlan: everything derived from a Config's structural fields, derived once. The
parameter layout (each layer's weights W, Out rows of In values, then its biases b, in one flat
vector), the activations and encoding, and how learnGradient sums gradients. app/shadergen/
prints it as Slang; the trainer, network.json and the network diagram read it.

LaunchShape: how one training step of a batch is spread over threads, workgroups and gradient
slots on a device of a given wave width."""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass

import numpy as np

from .components import ACTIVATIONS, ENCODINGS, Activation, Encoding, Setting
from .config import Config, Structure
from .datasets.source import problem_of
from .fused_layout import FUSED_SAMPLES, FUSED_THREADS, fused_layout
from .hashgrid import GRID_ENCODINGS, GridEncoding, GridSpec, grid_encoding, grid_spec
from .image_truth import ImageTruth
from .lane_tiles import LANE_THREADS, LANE_TILE, MAX_LANE_GROUPS, lanes_fit, scratch_layout
from .losses import LOSSES, Loss

# Up to this many parameters, each thread keeps its gradient sums in registers; above it they
# spill, so the group sums gradients through shared-memory tiles (shaders/gradients.slang).
# On an H200 a 4-16-16-4 network (420 parameters) ran 26x faster with tiles than with
# accumulators, and 1,284 accumulators failed to build a pipeline.
MAX_THREAD_ACCUMULATORS = 192
THREAD_ACCUMULATOR_GROUP_SIZE = 256
TILE_BUDGET_FLOATS = 4096  # 16 KiB of shared memory, the Vulkan minimum, for x and dZ tiles
MIN_TILE_SAMPLES, MAX_TILE_SAMPLES = 8, 256

# Launch shape (measured on an H200, 4-16-4): one sample per thread up to 4,096 samples, then
# at least 4 per thread, and at most 32,768 threads. More samples per thread amortise each
# thread's final wave sum of its gradients; fewer threads than this starve the GPU. Pairs (half
# precision) take a pair per thread where the batch is small: a pair costs one sample's latency.
MIN_PARALLEL_THREADS = 4096
MIN_SAMPLES_PER_THREAD = 4
MAX_TRAIN_THREADS = 32768
PAIR_LINE_HALVES = 8  # pairs read the half weights in 16-byte lines (shaders/pairs.slang)
SLOT_MEMORY_BYTES = 256 << 20

# Workgroup tiles (shaders/tiles.slang), for networks past the thread accumulators when they fit:
# shared memory for a tile's activations, registers for the weight-gradient accumulators.
TILED_THREADS = 256
TILE_SHARED_BUDGET = 48 << 10  # bytes: Vulkan on an H200 takes 48 KiB (64 lost the device)
MAX_MMA_TILES_PER_WARP = 12  # fp32 accumulator tiles a warp holds (8 registers a lane each)
MMA_SUBGROUP = 32  # cooperative matrices work per 32-lane subgroup (NVIDIA)
# adjustParameters: a workgroup sums the slots of ADJUST_PARAMS parameters, ADJUST_PARTS threads
# a parameter (32 x 8: a slot row is one 128-byte line; a thread walks 1/8 of the slots)
ADJUST_PARAMS, ADJUST_PARTS = 32, 8
ADJUST_THREADS = ADJUST_PARAMS * ADJUST_PARTS
MAX_TILE_GROUPS = 512  # about what an H200 runs at once (132 SMs x 4); fewer slots to sum
FUSED_MAX_GROUPS = 264  # the fused trainer: two workgroups an SM ran fastest on an H200 (2^16 and 2^20)


@dataclass(frozen=True)
class LayerPlan:
    fan_in: int
    fan_out: int
    activation: Activation
    offset: int  # first weight in the flat parameter vector; biases follow the weights
    z_offset: int  # first pre-activation in the per-thread cache (shaders/layers.slang)

    @property
    def bias_offset(self) -> int:
        return self.offset + self.fan_in * self.fan_out

    @property
    def end(self) -> int:
        return self.bias_offset + self.fan_out

    def weights(self, params: np.ndarray) -> np.ndarray:
        """(fan_out, fan_in) view of this layer's W in `params`."""
        return params[self.offset : self.bias_offset].reshape(self.fan_out, self.fan_in)

    def biases(self, params: np.ndarray) -> np.ndarray:
        return params[self.bias_offset : self.end]


@dataclass(frozen=True)
class SlangTruth:
    """A ground truth from a user's Slang file (Config.slang_target): its text and target count."""

    file: str
    source: str
    count: int


@dataclass(frozen=True)
class LaunchShape:
    thread_count: int
    group_count: int  # learnGradient workgroups; a step may be split by ranges of them
    waves_per_group: int
    gradient_slot_count: int  # one per wave (thread accumulators) or per group (tiles)
    loss_slot_count: int  # one per wave (per group for workgroup tiles)
    scratch_floats: int = 0  # lane tiles: each group's activations, after the gradient slots


@dataclass(frozen=True)
class NetworkPlan:
    sizes: tuple[int, ...]
    layers: tuple[LayerPlan, ...]
    encoding: Encoding | GridEncoding
    frequencies: int
    precision: str
    targets: tuple[str, ...]  # expressions, when slang_truth is None
    slang_truth: SlangTruth | None
    # "thread" (registers), "group" (group tiles), "tiles" (workgroup tiles), "lanes" (lane tiles)
    gradient_path: str
    group_size: int
    mma: tuple[bool, ...] = ()  # per layer: products on tensor cores (workgroup tiles only)
    tile_samples: int = 0  # workgroup tiles: samples a tile
    tile_pad: int = 0  # ...and the row padding that keeps shared-memory banks apart
    fused: bool = False  # workgroup tiles by the fully fused tensor-core trainer (shaders/fused.slang)
    features: tuple[str, ...] = ()  # the features of a feature encoding (poly2, raw, features)
    # Where each step's samples and their truth come from (app/shadergen/truth.py): "formula"
    # (targets or a Slang file), "image" (both sampled afresh every step) or "points" (a dataset
    # on the GPU)
    truth_kind: str = "formula"
    loss_name: str = "squared"  # app/losses.py: squared, logistic or softmax
    grid: GridSpec | None = None  # a trainable grid encoding: its tables follow the MLP's parameters
    image: ImageTruth | None = None  # an image as the ground truth (instead of targets or a Slang file)

    @property
    def loss(self) -> Loss:
        return LOSSES[self.loss_name]

    @property
    def encoding_setting(self) -> Setting:
        """What the encoding's functions take: the frequencies, or the features."""
        return self.frequencies if self.encoding.name in ("fourier", "hashgrid", "densegrid") else self.features

    @property
    def thread_accumulators(self) -> bool:
        return self.gradient_path == "thread"

    @property
    def paired(self) -> bool:
        """Half precision on thread accumulators: samples two at a time, packed two to a register
        (shaders/pairs.slang). The pair kernel samples the domain and takes the squared error
        itself, so a dataset's points or another loss train on the one-sample thread kernel."""
        return (
            self.thread_accumulators
            and self.precision == "half"
            and self.truth_kind == "formula"
            and self.loss_name == "squared"
            and self.grid is None
        )

    @property
    def matmul(self) -> str:
        """What summary.json and the window report: tensor cores, or SIMT arithmetic."""
        return "tensor-core" if any(self.mma) else "simt"

    @property
    def tile_rows(self) -> tuple[int, ...]:
        """Workgroup tiles: the first shared-memory row of each layer's input, then the output's."""
        rows, row = [], 0
        for size in self.sizes:
            rows.append(row)
            row += _tile_height(size, any(self.mma))
        return (*rows, row)

    @property
    def mlp_param_count(self) -> int:
        """The MLP's weights and biases: what each gradient slot holds (the grid's tables, when
        there are any, follow them in the parameters and sum their gradients apart)."""
        return self.layers[-1].end

    @property
    def param_count(self) -> int:
        """Every trained parameter: the MLP's, then the grid's tables."""
        return self.mlp_param_count + (self.grid.param_count if self.grid else 0)

    @property
    def grid_param_count(self) -> int:
        return self.grid.param_count if self.grid else 0

    def tables(self, params: np.ndarray) -> np.ndarray:
        """The grid's tables in `params` (entry-major, F features an entry)."""
        return params[self.mlp_param_count : self.param_count]

    def input_names(self) -> list[str]:
        """One label per encoded input (the network diagram, the neuron views)."""
        return self.grid.names() if self.grid else self.encoding.names(self.encoding_setting)

    @property
    def input_dim(self) -> int:
        return self.sizes[0]

    @property
    def output_dim(self) -> int:
        return self.sizes[-1]

    @property
    def neuron_count(self) -> int:
        """Every neuron of the neuron views: the encoded inputs, the hidden layers, the outputs."""
        return sum(self.sizes)

    def neuron_offset(self, column: int) -> int:
        """The first neuron of column `column` (0: the inputs) in the neuron views' order."""
        return sum(self.sizes[:column])

    @property
    def unroll_matvec(self) -> bool:
        """Unrolled mat-vecs keep small networks in registers; for wider layers the unrolled code
        spills and ran 4x slower than loops (H200, 2-64-64-64-4)."""
        return self.thread_accumulators

    @property
    def tile_inputs(self) -> int:
        """Group tiles' shared-memory rows (shaders/gradients.slang); 1 where they are unused."""
        return max(self.sizes[:-1]) if self.gradient_path == "group" else 1

    @property
    def tile_outputs(self) -> int:
        return max(self.sizes[1:]) if self.gradient_path == "group" else 1

    @property
    def module_name(self) -> str:
        key = (
            self.sizes,
            tuple(layer.activation.name for layer in self.layers),
            self.encoding.name,
            self.frequencies,
            self.precision,
            self.targets,
            self.slang_truth,
            self.gradient_path,
            self.mma,
            self.tile_samples,
            self.tile_pad,
            self.fused,
            self.features,
            self.truth_kind,
            self.loss_name,
            self.grid,
            self.image and (self.image.width, self.image.height, self.image.channels),
        )
        return f"network_{hashlib.sha1(repr(key).encode()).hexdigest()[:16]}"

    @property
    def title(self) -> str:
        return " -> ".join(map(str, self.sizes))

    def launch(self, batch_size: int, wave_width: int) -> LaunchShape:
        """One gradient slot per wave (thread accumulators) or per group (group and workgroup
        tiles), capped by memory; one loss slot per wave (per group for workgroup tiles)."""
        group = self.group_size
        if self.gradient_path in ("tiles", "lanes"):  # lane tiles: a scratch area per group too
            scratch = scratch_layout(self.sizes).total if self.gradient_path == "lanes" else 0
            most = MAX_LANE_GROUPS if self.gradient_path == "lanes" else MAX_TILE_GROUPS
            tiles = -(-batch_size // self.tile_samples)
            cap = FUSED_MAX_GROUPS if self.fused else most
            groups = max(1, min(tiles, cap, SLOT_MEMORY_BYTES // (4 * (self.mlp_param_count + scratch))))
            return LaunchShape(
                thread_count=groups * group,
                group_count=groups,
                waves_per_group=1,
                gradient_slot_count=groups,
                loss_slot_count=groups,
                scratch_floats=groups * scratch,
            )
        waves_per_group = -(-group // wave_width)
        slots_per_group = waves_per_group if self.thread_accumulators else 1
        max_groups = max(1, SLOT_MEMORY_BYTES // (4 * self.mlp_param_count * slots_per_group))
        lane_samples = -(-batch_size // 2) if self.paired else batch_size  # a pair a thread at least
        threads = min(lane_samples, max(MIN_PARALLEL_THREADS, batch_size // MIN_SAMPLES_PER_THREAD), MAX_TRAIN_THREADS)
        groups = min(-(-threads // group), max_groups)
        return LaunchShape(
            thread_count=groups * group,
            group_count=groups,
            waves_per_group=waves_per_group,
            gradient_slot_count=groups * slots_per_group,
            loss_slot_count=groups * waves_per_group,
        )

    @property
    def weight_count(self) -> int:
        """Values in the kernels' weights buffer: the parameters, then (fused trainer) the block
        copies of its hidden layers (app/fused_layout.py); for pairs, zeros to a whole number of
        the 16-byte lines they read weights in."""
        if self.fused:
            return fused_layout(self.sizes).weight_halves
        return -(-self.param_count // PAIR_LINE_HALVES) * PAIR_LINE_HALVES if self.paired else self.param_count

    def weight_image(self, weights: np.ndarray) -> np.ndarray:
        """The kernels' weights buffer holding `weights` (the parameters in the kernels' precision)."""
        if self.fused:
            return fused_layout(self.sizes).weight_image(weights)
        if self.paired:
            return np.concatenate([weights, np.zeros(self.weight_count - len(weights), weights.dtype)])
        return weights

    def initial_parameters(self, seed: int) -> np.ndarray:
        """He-uniform weights for ReLU-like activations, Glorot-uniform otherwise; zero biases;
        a grid's tables uniform in +-1e-4 (app/hashgrid.py)."""
        rng = np.random.default_rng(seed)
        params = np.zeros(self.param_count, np.float32)
        for layer in self.layers:
            fan = layer.fan_in if layer.activation.relu_like else layer.fan_in + layer.fan_out
            limit = np.sqrt(6.0 / fan)
            params[layer.offset : layer.bias_offset] = rng.uniform(-limit, limit, layer.fan_out * layer.fan_in)
        if self.grid is not None:
            params[self.mlp_param_count :] = self.grid.initial_tables(rng)
        return params


def _group_size(sizes: tuple[int, ...], thread_accumulators: bool) -> int:
    """learnGradient's group size: for group tiles, as many samples as the tile budget holds."""
    if thread_accumulators:
        return THREAD_ACCUMULATOR_GROUP_SIZE
    per_sample = max(sizes[:-1]) + max(sizes[1:])
    samples = MAX_TILE_SAMPLES
    while samples > MIN_TILE_SAMPLES and samples * per_sample > TILE_BUDGET_FLOATS:
        samples //= 2
    return samples


def _tile_height(size: int, mma: bool) -> int:
    return -(-size // 16) * 16 if mma else size


def _tiles(sizes: tuple[int, ...], layers: list[LayerPlan], precision: str, tensor_cores: bool, grid: bool = False):
    """(samples a tile, row pad, per-layer tensor-core flags) for workgroup tiles (with a trained
    grid, `grid`: room for the input's gradient and the tile's points), or None where they don't
    apply: sin (tiles keep outputs and derive gradients from them, and sin is not
    one-to-one), or no tile that fits in shared memory. On tensor cores every layer is a product:
    the hidden widths must be multiples of 16, and the narrow first and last layers are padded
    to 16 (their weights staged in shared memory); past MAX_MMA_TILES_PER_WARP accumulator
    tiles a warp, SIMT tiles instead."""
    if any(layer.activation.name == "sin" for layer in layers):
        return None
    mma = tensor_cores and precision == "half" and all(w % 16 == 0 for w in sizes[1:-1])
    warps = TILED_THREADS // MMA_SUBGROUP
    padded = [_tile_height(size, mma) for size in sizes]
    if (
        mma
        and sum(-(-(o // 16) * (i // 16) // warps) for i, o in zip(padded[:-1], padded[1:])) > MAX_MMA_TILES_PER_WARP
    ):
        return _tiles(sizes, layers, precision, False, grid)
    element = 2 if precision == "half" else 4
    # Tensor cores load 16-byte aligned rows. Without a pad (stride 64 bytes) shared-memory bank
    # conflicts made 2-64-64-64-4 30% slower on an H200 than with a pad of 8 halves.
    pad = 8 if mma else (2 if element == 2 else 1)
    fixed = TILED_THREADS * 4  # the loss partials
    if mma:  # each warp's fp32 stage, the padded narrow weights
        fixed += warps * 256 * 4 + (padded[1] * padded[0] + padded[-1] * padded[-2]) * 2
    # The gradient blocks hold dZ and dH of every layer; with a trained grid, dH of the input too.
    grad_rows = max(padded if grid else padded[1:])
    for samples in (64, 32, 16):
        points = 2 * samples * 4 if grid else 0  # the tile's points, for the grid's backward pass
        shared = (sum(padded) + 2 * grad_rows) * (samples + pad) * element + (sizes[-1] + 1) * samples * 4 + fixed
        shared += points
        if shared <= TILE_SHARED_BUDGET:
            return samples, pad, tuple(mma for _ in layers)
    return None


def _fused(sizes: tuple[int, ...], layers: list[LayerPlan], precision: str, tensor_cores: bool) -> bool:
    """The fully fused trainer: half precision on cooperative matrices, activations whose
    derivative follows from their output (not sin), and a network that fits its layout."""
    return (
        tensor_cores
        and precision == "half"
        and all(layer.activation.name != "sin" for layer in layers)
        and fused_layout(sizes) is not None
    )


@functools.lru_cache(maxsize=64)
def _plan(s: Structure, tensor_cores: bool, fused: bool, cpu: bool = False) -> NetworkPlan:
    grid = grid_spec(s)
    enc = grid_encoding(s.encoding) if grid else ENCODINGS[s.encoding]
    setting = enc.setting(s.frequencies, s.features) if not grid else s.frequencies
    problem = problem_of(dict(s.dataset)) if s.dataset else None
    image = ImageTruth(**dict(s.image)) if s.image and not problem else None
    slang_truth = SlangTruth(**dict(s.slang_target)) if s.slang_target and not (problem or image) else None
    inputs = grid.dim if grid else enc.dim(setting)
    outputs = (
        problem.outputs
        if problem
        else image.channels
        if image
        else slang_truth.count
        if slang_truth
        else len(s.targets)
    )
    sizes = (inputs, *s.hidden, outputs)
    layers, offset, z_offset = [], 0, 0
    for k, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        act = ACTIVATIONS[s.output_activation if k == len(sizes) - 2 else s.activation]
        layers.append(LayerPlan(fan_in, fan_out, act, offset, z_offset))
        offset += fan_in * fan_out + fan_out
        z_offset += fan_out
    common = dict(
        sizes=sizes,
        layers=tuple(layers),
        encoding=enc,
        frequencies=s.frequencies,
        precision=s.precision,
        targets=() if slang_truth or problem or image else s.targets,
        slang_truth=slang_truth,
        features=() if enc.name in ("fourier", *GRID_ENCODINGS) else setting,
        truth_kind="points" if problem else "image" if image else "formula",
        loss_name=problem.loss if problem else "squared",
        grid=grid,
        image=image,
    )
    if offset <= MAX_THREAD_ACCUMULATORS:
        return NetworkPlan(**common, gradient_path="thread", group_size=_group_size(sizes, True))
    # The tensor-core kernels and the CPU's lane tiles compute the squared error's output gradient
    # inline, and draw their own samples over the domain: the other losses and a dataset's points
    # train on SIMT tiles (the header of the generated module says so). The fused trainer has no
    # input gradient for a grid's tables, so a grid network takes the tiles too; lane tiles train
    # formulas alone (no grid, no image's pixels).
    squared = common["loss_name"] == "squared"
    sampled = squared and not problem
    if grid is None and _fused(sizes, layers, s.precision, fused and sampled and s.matmul == "auto"):
        return NetworkPlan(
            **common,
            gradient_path="tiles",
            group_size=FUSED_THREADS,
            mma=tuple(True for _ in layers),
            tile_samples=FUSED_SAMPLES,
            fused=True,
        )
    lanes = cpu and sampled and grid is None and image is None
    if lanes and lanes_fit(sizes, [layer.activation.name for layer in layers], s.precision):
        return NetworkPlan(**common, gradient_path="lanes", group_size=LANE_THREADS, tile_samples=LANE_TILE)
    tiles = _tiles(sizes, layers, s.precision, tensor_cores and squared and s.matmul == "auto", grid is not None)
    if tiles is not None:
        samples, pad, mma = tiles
        return NetworkPlan(
            **common, gradient_path="tiles", group_size=TILED_THREADS, mma=mma, tile_samples=samples, tile_pad=pad
        )
    return NetworkPlan(**common, gradient_path="group", group_size=_group_size(sizes, False))


def plan_for(config: Config, tensor_cores: bool = False, fused: bool | None = None, cpu: bool = False) -> NetworkPlan:
    """The plan of `config`'s structure on a device with or without cooperative matrices, and on a
    CPU driver or not (cached: configs that differ only in hot fields share it). `fused`: whether
    the fully fused trainer may run there (its weight copies assume NVIDIA's fragment layout:
    app/gpu.py checks it); by default wherever there are cooperative matrices."""
    return _plan(config.structure(), tensor_cores, tensor_cores if fused is None else fused, cpu)
