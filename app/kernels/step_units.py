"""How one training step divides into units that may be recorded apart, over several frames:
learnGradient's (sample slice, group) units and adjustParameters' workgroups, and how far a
step recorded in pieces has got. Pure arithmetic on a plan, its launch shape and the batch; what
differs between gradient paths, each path says (app/kernels/paths/base.py)."""

from __future__ import annotations

from dataclasses import dataclass

from .launch_shape import ADJUST_PARAMS, ADJUST_THREADS, LaunchShape
from .paths import path_of
from .plan import NetworkPlan


@dataclass
class StepProgress:
    """How far the current step has got when it is recorded in pieces: learnGradient's groups
    [0, position) in the "learn" phase, adjustParameters' groups [0, position) in "adjust"."""

    phase: str = "learn"
    position: int = 0

    @property
    def started(self) -> bool:
        return self.phase != "learn" or self.position > 0

    @property
    def updating(self) -> bool:
        """Whether some of the step's parameter updates are recorded: until then the parameters
        and the optimizer state are still those of the step's start (learnGradient writes only
        the gradient sums), and a snapshot of them is a snapshot at the step boundary."""
        return self.phase == "adjust" and self.position > 0


@dataclass(frozen=True)
class StepUnits:
    plan: NetworkPlan
    launch: LaunchShape
    batch_size: int

    @property
    def samples_per_thread(self) -> int:
        return -(-self.batch_size // self.launch.thread_count)

    @property
    def loop_count(self) -> int:
        """learnGradient's loop, recorded as its sample_end: each thread's samples, or with lane
        tiles each workgroup's tiles."""
        return path_of(self.plan).loop_count(self.plan, self.launch, self.batch_size)

    @property
    def sample_slices(self) -> int:
        """Ways each thread's loop may be cut: group tiles add into the gradient slot once per
        sample, lane tiles once per tile; thread accumulators and workgroup tiles hold their sums
        in registers to the loop's end."""
        return self.loop_count if path_of(self.plan).sliced else 1

    @property
    def learn_units(self) -> int:
        """learnGradient's work as (sample slice, group) units, slice-major."""
        return self.launch.group_count * self.sample_slices

    @property
    def learn_unit_samples(self) -> int:
        return path_of(self.plan).learn_unit_samples(self.plan, self.launch, self.batch_size)

    @property
    def mlp_adjust_units(self) -> int:
        """adjustParameters' workgroups for the MLP: ADJUST_PARAMS parameters each; the loss counts
        as one parameter."""
        return -(-(self.plan.mlp_param_count + 1) // ADJUST_PARAMS)

    @property
    def adjust_units(self) -> int:
        """adjustParameters' workgroups: the MLP's, then a grid's, ADJUST_THREADS table values each."""
        return self.mlp_adjust_units + -(-self.plan.grid_param_count // ADJUST_THREADS)

    def adjust_range(self, first: int, count: int) -> tuple[int, int, int, int]:
        """adjustParameters' workgroups [first, first + count) as StepArgs' ranges: the MLP's
        parameters [param offset, param end) (the loss is parameter mlp_param_count), then the grid's
        table values [grid offset, grid end)."""
        mlp, end = self.mlp_adjust_units, first + count
        params = (min(first, mlp) * ADJUST_PARAMS, min(end, mlp) * ADJUST_PARAMS)
        params = (params[0], min(params[1], self.plan.mlp_param_count + 1))
        grid = (max(first - mlp, 0) * ADJUST_THREADS, max(end - mlp, 0) * ADJUST_THREADS)
        return (*params, grid[0], min(grid[1], self.plan.grid_param_count))

    def learn_ranges(self, first: int, count: int) -> list[tuple[int, int, int, int]]:
        """learnGradient's units [first, first + count), slice-major, as (first group, groups,
        sample begin, sample end) dispatches: whole slices in one, parts of a slice in one each,
        so that every group walks its samples in order."""
        groups = self.launch.group_count
        if self.sample_slices == 1:
            return [(first, count, 0, self.loop_count)]
        ranges, unit, end = [], first, first + count
        while unit < end:
            k, g = divmod(unit, groups)
            if g == 0 and end - unit >= groups:
                rows = (end - unit) // groups
                ranges.append((0, groups, k, k + rows))
                unit += rows * groups
            else:
                n = min(groups - g, end - unit)
                ranges.append((g, n, k, k + 1))
                unit += n
        return ranges
