"""NetworkPlan: everything derived from a Config's structural fields, derived once: the parameter
layout (each layer's W, Out rows of In values, then b, in one flat vector), the activations and
encoding, and the gradient path. planning.py derives it from a config; network_module.py prints it
as Slang; the trainer, network.json and the network diagram read it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ..config.config import Config
from ..model.activations import Activation
from ..model.encodings import Encoding, Setting
from ..model.hashgrid import GridSpec
from ..model.losses import LOSSES, Loss
from ..truth.image_truth import ImageTruth
from ..truth.mesh_truth import MeshTruth
from ..truth.sdf_truth import SdfTruth


@dataclass(frozen=True)
class LayerPlan:
    fan_in: int
    fan_out: int
    activation: Activation
    offset: int  # first weight in the flat parameter vector; biases follow the weights
    z_offset: int  # first pre-activation in the per-thread cache (shaders/model/layers.slang)

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
    encoding: Encoding
    encoding_setting: Setting  # what the encoding's functions take (app/model/encodings.py)
    precision: str
    targets: tuple[str, ...]  # expressions, when slang_truth is None
    slang_truth: SlangTruth | None
    # The gradient path's name (app/kernels/paths/: thread, pairs, fused, lanes, tiles or group;
    # path_of(plan) gives the path) and the fields it set: learnGradient's group size, and where
    # the path has them, per-layer tensor-core flags and its tiles' shape
    gradient_path: str
    group_size: int
    thread_accumulators: bool = False  # each thread keeps its gradient sums in registers
    mma: tuple[bool, ...] = ()  # per layer: products on tensor cores (workgroup tiles)
    # Those products emulated with plain loops (shaders/common/mma_emulated.slang): CI runs the tensor-core
    # kernels so on a device without cooperative matrices (VISUAL_TRAINER_TENSOR_CORES=emulated)
    emulated_mma: bool = False
    tile_samples: int = 0  # samples a tile (workgroup and lane tiles)
    tile_pad: int = 0  # workgroup tiles: the row padding that keeps shared-memory banks apart
    tile_inputs: int = 1  # group tiles' shared-memory rows (shaders/common/gradients.slang); 1 where unused
    tile_outputs: int = 1
    # Where each step's samples and their truth come from (app/kernels/shadergen/truth.py): "formula"
    # (targets or a Slang file), "image" (both sampled afresh every step) or "points" (a dataset
    # on the GPU)
    truth_kind: str = "formula"
    loss_name: str = "squared"  # app/model/losses.py: squared, logistic or softmax
    image: ImageTruth | None = None  # an image as the ground truth (instead of targets or a Slang file)
    sdf: SdfTruth | None = None  # a shape's signed distance field as the truth (app/truth/sdf_truth.py)
    derivatives: bool = False  # the loss has terms on the input gradient (shaders/model/derivatives.slang)
    normals: bool = False  # ...and one on a shape's boundary points (drawSample draws some there)
    mesh: MeshTruth | None = None  # a triangle mesh's signed distance (app/truth/mesh_truth.py), in 3D
    point_dim: int = 2  # the coordinates of a point: 2, (x, y); or 3, (x, y, z) (app/truth/space.py)

    @property
    def loss(self) -> Loss:
        return LOSSES[self.loss_name]

    @property
    def grid(self) -> GridSpec | None:
        """A trained grid encoding's layout: its tables follow the MLP's parameters."""
        return self.encoding_setting if self.encoding.trained else None

    @property
    def matmul(self) -> str:
        """What summary.json and the window report: tensor cores, or SIMT arithmetic."""
        return ("emulated tensor-core" if self.emulated_mma else "tensor-core") if any(self.mma) else "simt"

    @property
    def mlp_param_count(self) -> int:
        """The MLP's weights and biases: what each gradient slot holds (the grid's tables, when
        there are any, follow them in the parameters and sum their gradients apart)."""
        return self.layers[-1].end

    @property
    def slot_stride(self) -> int:
        """Floats from one gradient slot to the next: the MLP's parameters, rounded up to a multiple
        of 4 so that every slot starts 16-byte aligned. Tensor cores store whole 16x16 tiles of
        weight gradients into a slot, and a slot that started 4, 8 or 12 bytes off (any network
        whose output count is not a multiple of 4) had its tiles written wherever the hardware's
        16-byte stores rounded them to: into the slot of the workgroup before it, whose last
        biases it raced with (different weights every run on an H100)."""
        return -(-self.mlp_param_count // 4) * 4

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
        return self.encoding.names(self.encoding_setting)

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
        spills, far slower than loops (docs/benchmarks.md)."""
        return self.thread_accumulators

    @property
    def module_name(self) -> str:
        key = (
            self.sizes,
            tuple(layer.activation.name for layer in self.layers),
            self.encoding.name,
            self.encoding_setting,
            self.precision,
            self.targets,
            self.slang_truth,
            self.gradient_path,
            self.mma,
            self.emulated_mma,
            self.tile_samples,
            self.tile_pad,
            self.truth_kind,
            self.loss_name,
            self.image and (self.image.width, self.image.height, self.image.channels),
            self.sdf and (self.sdf.width, self.sdf.height),
            self.derivatives,
            self.normals,
        ) + ((self.point_dim, self.mesh) if self.point_dim != 2 else ())  # 2D keeps its names (and caches)
        return f"network_{hashlib.sha1(repr(key).encode()).hexdigest()[:16]}"

    @property
    def title(self) -> str:
        return " -> ".join(map(str, self.sizes))

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


def learned_distance(plan: NetworkPlan, config: Config) -> bool:
    """Whether the network is a distance field the export defines sdf(p) of: a shape's (--sdf), or a
    function of (x, y, z) with one output trained with the eikonal term."""
    mesh = plan.mesh is not None
    return plan.sdf is not None or mesh or (plan.point_dim == 3 and plan.output_dim == 1 and config.eikonal > 0)
