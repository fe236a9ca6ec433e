"""NetworkPlan: everything derived from a Config's structural fields, derived once. The
parameter layout (each layer's weights W, Out rows of In values, then its biases b, in one flat
vector), the activations and encoding, and how learnGradient sums gradients. app/kernels/shadergen/
prints it as Slang; the trainer, network.json and the network diagram read it. Which gradient
path it takes is chosen in app/kernels/gradient_paths.py; a batch's launch shape in app/kernels/launch_shape.py."""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass

import numpy as np

from ..config.config import Config, Structure
from ..datasets.source import problem_of
from ..model.components import ACTIVATIONS, ENCODINGS, Activation, Encoding, Setting
from ..model.hashgrid import GRID_ENCODINGS, GridEncoding, GridSpec, grid_encoding, grid_spec
from ..model.losses import LOSSES, Loss
from ..truth.image_truth import ImageTruth
from .fused_layout import fused_layout
from .gradient_paths import choose_gradient_path, tile_height
from .launch_shape import LaunchShape, launch_shape_for

PAIR_LINE_HALVES = 8  # pairs read the half weights in 16-byte lines (shaders/pairs.slang)


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
    # Where each step's samples and their truth come from (app/kernels/shadergen/truth.py): "formula"
    # (targets or a Slang file), "image" (both sampled afresh every step) or "points" (a dataset
    # on the GPU)
    truth_kind: str = "formula"
    loss_name: str = "squared"  # app/model/losses.py: squared, logistic or softmax
    grid: GridSpec | None = None  # a trainable grid encoding: its tables follow the MLP's parameters
    image: ImageTruth | None = None  # an image as the ground truth (instead of targets or a Slang file)

    @property
    def loss(self) -> Loss:
        return LOSSES[self.loss_name]

    @property
    def encoding_setting(self) -> Setting:
        """What the encoding's functions take: the frequencies, or the features."""
        return self.frequencies if self.encoding.name in ("fourier", *GRID_ENCODINGS) else self.features

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
            row += tile_height(size, any(self.mma))
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
        """How a step of `batch_size` samples is spread over threads and slots (app/kernels/launch_shape.py)."""
        return launch_shape_for(self, batch_size, wave_width)

    @property
    def weight_count(self) -> int:
        """Values in the kernels' weights buffer: the parameters, then (fused trainer) the block
        copies of its hidden layers (app/kernels/fused_layout.py); for pairs, zeros to a whole number of
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
        a grid's tables uniform in +-1e-4 (app/model/hashgrid.py)."""
        rng = np.random.default_rng(seed)
        params = np.zeros(self.param_count, np.float32)
        for layer in self.layers:
            fan = layer.fan_in if layer.activation.relu_like else layer.fan_in + layer.fan_out
            limit = np.sqrt(6.0 / fan)
            params[layer.offset : layer.bias_offset] = rng.uniform(-limit, limit, layer.fan_out * layer.fan_in)
        if self.grid is not None:
            params[self.mlp_param_count :] = self.grid.initial_tables(rng)
        return params


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
    path = choose_gradient_path(
        s,
        sizes,
        layers,
        tensor_cores,
        fused,
        cpu,
        squared=common["loss_name"] == "squared",
        points=problem is not None,
        grid=grid is not None,
        image=image is not None,
    )
    return NetworkPlan(**common, **path)


def plan_for(config: Config, tensor_cores: bool = False, fused: bool | None = None, cpu: bool = False) -> NetworkPlan:
    """The plan of `config`'s structure on a device with or without cooperative matrices, and on a
    CPU driver or not (cached: configs that differ only in hot fields share it). `fused`: whether
    the fully fused trainer may run there (its weight copies assume NVIDIA's fragment layout:
    app/gpu/gpu.py checks it); by default wherever there are cooperative matrices."""
    return _plan(config.structure(), tensor_cores, tensor_cores if fused is None else fused, cpu)
