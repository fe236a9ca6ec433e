"""The slice of a function of (x, y, z) that the heatmaps show: a plane (xy, xz or yz) at a depth
along the third axis, as the evaluation kernel spans it (a corner and the two edges of the square
it samples, shaders/views/visualize.slang) and as the window and heatmaps.png name it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Each plane's axes: across (left to right), up (bottom to top), and the one its depth is along
PLANES = {"xy": (0, 1, 2), "xz": (0, 2, 1), "yz": (1, 2, 0)}
AXIS_NAMES = "xyz"


def box(domain, z_range) -> np.ndarray:
    """The (3, 2) ranges of x, y and z that a function of (x, y, z) is trained on."""
    x0, x1, y0, y1 = domain
    return np.array([[x0, x1], [y0, y1], list(z_range)], np.float64)


@dataclass(frozen=True)
class Slice:
    plane: str = "xy"
    depth: float | None = None  # along the third axis; None: the middle of its range

    @property
    def axes(self) -> tuple[int, int, int]:
        return PLANES[self.plane]

    @property
    def names(self) -> tuple[str, str]:
        """The names of the axes across and up: the heatmaps' x and y."""
        across, up, _ = self.axes
        return AXIS_NAMES[across], AXIS_NAMES[up]

    def depth_in(self, domain, z_range) -> float:
        """The depth, the middle of the third axis's range by default, kept within the range."""
        low, high = box(domain, z_range)[self.axes[2]]
        return 0.5 * (low + high) if self.depth is None else float(min(max(self.depth, low), high))

    def extent(self, domain, z_range) -> tuple[float, float, float, float]:
        """The slice's ranges across and up, as a 2D domain is written (x0, x1, y0, y1)."""
        ranges = box(domain, z_range)
        across, up, _ = self.axes
        return (*map(float, ranges[across]), *map(float, ranges[up]))

    def frame(self, domain, z_range) -> tuple[list[float], list[float], list[float]]:
        """evaluateGrid's corner and the edges across and up of the square it samples."""
        ranges = box(domain, z_range)
        across, up, normal = self.axes
        corner = ranges[:, 0].copy()
        corner[normal] = self.depth_in(domain, z_range)
        edge_across, edge_up = np.zeros(3), np.zeros(3)
        edge_across[across] = ranges[across, 1] - ranges[across, 0]
        edge_up[up] = ranges[up, 1] - ranges[up, 0]
        return corner.tolist(), edge_across.tolist(), edge_up.tolist()

    def caption(self, domain, z_range) -> str:
        """'the slice z = 0 of z in [-1, 1]'."""
        normal = self.axes[2]
        low, high = box(domain, z_range)[normal]
        name = AXIS_NAMES[normal]
        return f"the slice {name} = {self.depth_in(domain, z_range):.4g} of {name} in [{low:g}, {high:g}]"
