"""LaunchShape: how one training step of a batch is spread over threads, workgroups and gradient
slots on a device of a given wave width, and adjustParameters' workgroups. A gradient path
(app/kernels/paths/) gives its shape with one of the two ways here: threads that each walk some
samples (thread_launch), or workgroups that each walk some tiles (tile_launch)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the plan's types only: this module stays below app/kernels/plan.py
    from .plan import NetworkPlan

# Launch shape (measured on an H200, 4-16-4): one sample per thread up to 4,096 samples, then
# at least 4 per thread, and at most 32,768 threads. More samples per thread amortise each
# thread's final wave sum of its gradients; fewer threads than this starve the GPU. Pairs (half
# precision) take a pair per thread where the batch is small: a pair costs one sample's latency.
MIN_PARALLEL_THREADS = 4096
MIN_SAMPLES_PER_THREAD = 4
MAX_TRAIN_THREADS = 32768
SLOT_MEMORY_BYTES = 256 << 20

# adjustParameters: a workgroup sums the slots of ADJUST_PARAMS parameters, ADJUST_PARTS threads
# a parameter (32 x 8: a slot row is one 128-byte line; a thread walks 1/8 of the slots)
ADJUST_PARAMS, ADJUST_PARTS = 32, 8
ADJUST_THREADS = ADJUST_PARAMS * ADJUST_PARTS
MAX_TILE_GROUPS = 512  # about what an H200 runs at once (132 SMs x 4); fewer slots to sum


@dataclass(frozen=True)
class LaunchShape:
    thread_count: int
    group_count: int  # learnGradient workgroups; a step may be split by ranges of them
    waves_per_group: int
    gradient_slot_count: int  # one per wave (thread accumulators) or per group (tiles)
    loss_slot_count: int  # one per wave (per group for workgroup tiles)
    scratch_floats: int = 0  # lane tiles: each group's activations, after the gradient slots


def thread_launch(plan: NetworkPlan, batch_size: int, wave_width: int, *, samples_a_lane: int = 1) -> LaunchShape:
    """Threads that each walk their samples: one gradient slot per wave (thread accumulators) or
    per group (group tiles), capped by memory; one loss slot per wave. `samples_a_lane`: samples
    a thread takes at once (pairs: 2)."""
    group = plan.group_size
    waves_per_group = -(-group // wave_width)
    slots_per_group = waves_per_group if plan.thread_accumulators else 1
    max_groups = max(1, SLOT_MEMORY_BYTES // (4 * plan.slot_stride * slots_per_group))
    lane_samples = -(-batch_size // samples_a_lane)  # a pair a thread at least
    threads = min(lane_samples, max(MIN_PARALLEL_THREADS, batch_size // MIN_SAMPLES_PER_THREAD), MAX_TRAIN_THREADS)
    groups = min(-(-threads // group), max_groups)
    return LaunchShape(
        thread_count=groups * group,
        group_count=groups,
        waves_per_group=waves_per_group,
        gradient_slot_count=groups * slots_per_group,
        loss_slot_count=groups * waves_per_group,
    )


def tile_launch(plan: NetworkPlan, batch_size: int, most_groups: int, scratch_floats: int = 0) -> LaunchShape:
    """Workgroups that each walk every group_count-th tile of samples, at most `most_groups` of
    them: one gradient slot and one loss slot a group, and `scratch_floats` of scratch each (lane
    tiles' activations), capped by memory."""
    group = plan.group_size
    tiles = -(-batch_size // plan.tile_samples)
    groups = max(1, min(tiles, most_groups, SLOT_MEMORY_BYTES // (4 * (plan.slot_stride + scratch_floats))))
    return LaunchShape(
        thread_count=groups * group,
        group_count=groups,
        waves_per_group=1,
        gradient_slot_count=groups,
        loss_slot_count=groups,
        scratch_floats=groups * scratch_floats,
    )
