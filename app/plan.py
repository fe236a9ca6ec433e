"""NetworkPlan: everything derived from a Config's structural fields, derived once. The
parameter layout (each layer's weights W, Out rows of In values, then its biases b, in one flat
vector), the activations and encoding, and how learnGradient sums gradients. app/shadergen.py
prints it as Slang; the trainer, network.json and the network diagram read it.

LaunchShape: how one training step of a batch is spread over threads, workgroups and gradient
slots on a device of a given wave width."""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import Optional

import numpy as np

from app.components import ACTIVATIONS, ENCODINGS, Activation, Encoding
from app.config import Config

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
# thread's final wave sum of its gradients; fewer threads than this starve the GPU.
MIN_PARALLEL_THREADS = 4096
MIN_SAMPLES_PER_THREAD = 4
MAX_TRAIN_THREADS = 32768
SLOT_MEMORY_BYTES = 256 << 20


@dataclass(frozen=True)
class LayerPlan:
    fan_in: int
    fan_out: int
    activation: Activation
    offset: int     # first weight in the flat parameter vector; biases follow the weights
    z_offset: int   # first pre-activation in the per-thread cache (shaders/layers.slang)

    @property
    def bias_offset(self) -> int:
        return self.offset + self.fan_in * self.fan_out

    @property
    def end(self) -> int:
        return self.bias_offset + self.fan_out

    def weights(self, params: np.ndarray) -> np.ndarray:
        """(fan_out, fan_in) view of this layer's W in `params`."""
        return params[self.offset:self.bias_offset].reshape(self.fan_out, self.fan_in)

    def biases(self, params: np.ndarray) -> np.ndarray:
        return params[self.bias_offset:self.end]


@dataclass(frozen=True)
class SlangTruth:
    """A ground truth from a user's Slang file (Config.slang_target): its text and target count."""
    file: str
    source: str
    count: int


@dataclass(frozen=True)
class LaunchShape:
    thread_count: int
    group_count: int          # learnGradient workgroups; a step may be split by ranges of them
    waves_per_group: int
    gradient_slot_count: int  # one per wave (thread accumulators) or per group (tiles)
    loss_slot_count: int      # one per wave


@dataclass(frozen=True)
class NetworkPlan:
    sizes: tuple[int, ...]
    layers: tuple[LayerPlan, ...]
    encoding: Encoding
    frequencies: int
    precision: str
    targets: tuple[str, ...]            # expressions, when slang_truth is None
    slang_truth: Optional[SlangTruth]
    thread_accumulators: bool
    group_size: int

    @property
    def param_count(self) -> int:
        return self.layers[-1].end

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
        return 1 if self.thread_accumulators else max(self.sizes[:-1])

    @property
    def tile_outputs(self) -> int:
        return 1 if self.thread_accumulators else max(self.sizes[1:])

    @property
    def module_name(self) -> str:
        key = (self.sizes, tuple(l.activation.name for l in self.layers), self.encoding.name,
               self.frequencies, self.precision, self.targets, self.slang_truth)
        return f"network_{hashlib.sha1(repr(key).encode()).hexdigest()[:16]}"

    @property
    def title(self) -> str:
        return " -> ".join(map(str, self.sizes))

    def launch(self, batch_size: int, wave_width: int) -> LaunchShape:
        """One gradient slot per wave (thread accumulators) or per group (group tiles), capped by
        memory; one loss slot per wave."""
        group = self.group_size
        waves_per_group = -(-group // wave_width)
        slots_per_group = waves_per_group if self.thread_accumulators else 1
        max_groups = max(1, SLOT_MEMORY_BYTES // (4 * self.param_count * slots_per_group))
        threads = min(batch_size, max(MIN_PARALLEL_THREADS, batch_size // MIN_SAMPLES_PER_THREAD), MAX_TRAIN_THREADS)
        groups = min(-(-threads // group), max_groups)
        return LaunchShape(thread_count=groups * group, group_count=groups, waves_per_group=waves_per_group,
                           gradient_slot_count=groups * slots_per_group, loss_slot_count=groups * waves_per_group)

    def initial_parameters(self, seed: int) -> np.ndarray:
        """He-uniform weights for ReLU-like activations, Glorot-uniform otherwise; zero biases."""
        rng = np.random.default_rng(seed)
        params = np.zeros(self.param_count, np.float32)
        for layer in self.layers:
            fan = layer.fan_in if layer.activation.relu_like else layer.fan_in + layer.fan_out
            limit = np.sqrt(6.0 / fan)
            params[layer.offset:layer.bias_offset] = rng.uniform(-limit, limit, layer.fan_out * layer.fan_in)
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


@functools.lru_cache(maxsize=64)
def _plan(key: tuple) -> NetworkPlan:
    hidden, activation, output_activation, encoding, frequencies, precision, targets, slang_target = key
    enc = ENCODINGS[encoding]
    slang_truth = SlangTruth(**dict(slang_target)) if slang_target else None
    sizes = (enc.dim(frequencies), *hidden, slang_truth.count if slang_truth else len(targets))
    layers, offset, z_offset = [], 0, 0
    for k, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        act = ACTIVATIONS[output_activation if k == len(sizes) - 2 else activation]
        layers.append(LayerPlan(fan_in, fan_out, act, offset, z_offset))
        offset += fan_in * fan_out + fan_out
        z_offset += fan_out
    accumulate = offset <= MAX_THREAD_ACCUMULATORS
    return NetworkPlan(sizes=sizes, layers=tuple(layers), encoding=enc, frequencies=frequencies,
                       precision=precision, targets=() if slang_truth else tuple(targets), slang_truth=slang_truth,
                       thread_accumulators=accumulate,
                       group_size=_group_size(sizes, accumulate))


def plan_for(config: Config) -> NetworkPlan:
    """The plan of `config`'s structure (cached: configs that differ only in hot fields share it)."""
    return _plan(config.structure_key())
