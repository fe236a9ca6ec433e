"""What a gradient path declares about itself: whether it fits a network (group size, tile shape), how
a step is spread over threads and gradient slots and divided into pieces, what its kernel prints
into the generated module, and the few facts the rest of the app asks of it. Every path is one
object in its folder; app/kernels/paths/__init__.py lists them in the order they are tried."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from ..launch_shape import LaunchShape
from ..plan import LayerPlan, NetworkPlan
from ..shadergen.derivatives import derivative_functions


@dataclass(frozen=True)
class PathRequest:
    """What the choice of a path depends on: the network, its precision and --matmul, its truth
    and loss, and what the device offers."""

    sizes: tuple[int, ...]
    layers: tuple[LayerPlan, ...]
    precision: str
    matmul: str  # "auto": tensor cores where the device and the network allow; "simt": never
    squared: bool  # the loss is the squared error
    points: bool  # trained on a dataset's points
    grid_params: int  # a trained grid encoding's table values, after the MLP's parameters (0: no grid)
    image: bool  # an image is the truth
    tensor_cores: bool  # the device has cooperative matrices
    fused: bool  # ...and holds their operands as the fused trainer's weight copies assume
    cpu: bool  # a CPU driver, with lane tiles
    derivatives: bool = False  # the loss has terms on the input gradient (app/model/derivative_loss.py)
    point_dim: int = 2  # functions of (x, y), or of (x, y, z)

    @property
    def grid(self) -> bool:
        """A trained grid encoding is the input."""
        return self.grid_params > 0

    @property
    def sampled(self) -> bool:
        """The squared error of samples drawn over the domain: what the tensor-core kernels and the
        CPU's lane tiles compute inline (the other losses and a dataset's points take SIMT tiles)."""
        return self.squared and not self.points

    @property
    def mlp_param_count(self) -> int:
        return self.layers[-1].end

    @property
    def one_to_one(self) -> bool:
        """Every activation's derivative follows from its output (the tiled kernels keep outputs)."""
        return all(layer.activation.derivative_from_output for layer in self.layers)


class GradientPath(ABC):
    """A gradient path. Subclasses set the attributes, define the three abstract methods and
    override what else differs."""

    name: str  # NetworkPlan.gradient_path, and summary.json's gradient_path
    sums: str  # summary.json's gradient_sums: where the sums are kept (thread, group, tiles or lanes)
    label: str  # the window's Training panel: "<label> gradient sums"
    description: str  # the generated module's header; formatted with group_size and tile_samples
    # GFLOP/s a step trained at (6 x weights a sample, batch 4096, float) on a CPU driver and on a
    # GPU, before this device measured any path (app/loop/step_cost.py). lavapipe (2 cores, LLVM
    # 15), per two seconds of CPU time; on an H200 the float SIMT paths are all of one order.
    rates: tuple[float, float]
    thread_accumulators = False  # each thread keeps its gradient sums in registers
    sliced = False  # each sample (or tile) adds into the slot: a thread's loop may be cut
    side_by_side = False  # its groups run side by side on a GPU: the budget sizes pieces by trying
    quick_compile = False  # its kernels build in a second or two on a CPU driver (app/ui/opening.py)
    # It trains on derivative losses (app/model/derivative_loss.py): the per-thread paths, whose
    # per-sample backward pass can be the nested one, and the fused trainer with its jets (the other
    # tiled kernels' cannot).
    derivatives = False
    # It trains on points of (x, y, z) (--dims 3): the paths that draw samples through drawSample
    # (the others sample (x, y) in kernels of their own).
    points_3d = False

    @abstractmethod
    def fits(self, request: PathRequest) -> dict | None:
        """The plan's fields this path sets (group_size, and tile shapes where it has them), or
        None where the network does not fit it."""

    @abstractmethod
    def launch(self, plan: NetworkPlan, batch_size: int, wave_width: int) -> LaunchShape:
        """How a step of `batch_size` samples is spread over threads, workgroups and slots."""

    @abstractmethod
    def kernel(self, plan: NetworkPlan) -> str:
        """learnGradient for the generated module: its constants, includes and kernel."""

    # ---- what most paths share ------------------------------------------------------------
    def loop_count(self, plan: NetworkPlan, launch: LaunchShape, batch_size: int) -> int:
        """learnGradient's loop, recorded as its sample_end: each thread's samples."""
        return -(-batch_size // launch.thread_count)

    def learn_unit_samples(self, plan: NetworkPlan, launch: LaunchShape, batch_size: int) -> int:
        """Samples one (slice, group) unit of learnGradient covers (what the frame budget measures)."""
        samples = self.loop_count(plan, launch, batch_size)
        return plan.group_size * (1 if self.sliced else samples)

    def derivative_part(self, plan: NetworkPlan) -> str:
        """What the generated module takes for a loss's derivative terms: the per-thread paths'
        derivativeSample (shadergen/derivatives.py), or only the define where there are none."""
        return derivative_functions(plan)

    def views(self, plan: NetworkPlan) -> str | None:
        """The network's views functions where the path has its own (lane tiles), else None."""
        return None

    def weight_copies(self, plan: NetworkPlan) -> tuple:
        """Copies of the hidden weights adjustParameters keeps beside them (the fused trainer)."""
        return ()

    def weight_count(self, plan: NetworkPlan) -> int:
        """Values in the kernels' weights buffer."""
        return plan.param_count

    def weight_image(self, plan: NetworkPlan, weights: np.ndarray) -> np.ndarray:
        """The kernels' weights buffer holding `weights` (the parameters in the kernels' precision)."""
        return weights

    def products_note(self, plan: NetworkPlan) -> str:
        """What the module's header adds to its products line."""
        return ""
