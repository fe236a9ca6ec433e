"""The 3D view's orbit camera: it looks at the box's centre from a yaw and pitch about it (y up), from
the distance that shows the whole box times a zoom; a drag turns it, the wheel zooms it."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

YAW, PITCH = 35.0, 25.0  # degrees: the view it opens on, from the front right and above
FOV = 40.0  # degrees, top to bottom
PITCH_LIMIT = 89.0  # never straight down the up axis, where "right" is undefined
DEGREES_PER_PIXEL = 0.4  # of a drag
WHEEL_ZOOM = 0.85  # the distance's factor per wheel notch away from the user (nearer)
ZOOM_RANGE = (0.15, 6.0)
UP = (0.0, 1.0, 0.0)


@dataclass(frozen=True)
class OrbitCamera:
    yaw: float = YAW  # degrees about the up axis; 0 looks along -z with x to the right
    pitch: float = PITCH  # degrees above the box's middle, toward +y
    zoom: float = 1.0  # the distance over the one at which the box's bounding sphere just fits

    def turned(self, dx: float, dy: float) -> OrbitCamera:
        """After a drag of (dx, dy) pixels: the shape turns with the mouse (right: it turns right;
        down: its top comes toward the viewer)."""
        pitch = min(max(self.pitch + DEGREES_PER_PIXEL * dy, -PITCH_LIMIT), PITCH_LIMIT)
        return replace(self, yaw=(self.yaw - DEGREES_PER_PIXEL * dx) % 360.0, pitch=pitch)

    def zoomed(self, notches: float) -> OrbitCamera:
        """After `notches` of the wheel (positive: away from the user, nearer)."""
        return replace(self, zoom=min(max(self.zoom * WHEEL_ZOOM**notches, ZOOM_RANGE[0]), ZOOM_RANGE[1]))

    def distance(self, box: np.ndarray) -> float:
        """From the box's centre; `box` is (3, 2): the ranges of x, y and z."""
        radius = 0.5 * float(np.linalg.norm(box[:, 1] - box[:, 0]))
        return self.zoom * radius / math.sin(math.radians(0.5 * FOV))

    def pose(self, box: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(eye, target, up) in the box's coordinates."""
        target = 0.5 * (box[:, 0] + box[:, 1])
        yaw, pitch = math.radians(self.yaw), math.radians(self.pitch)
        direction = np.array([math.cos(pitch) * math.sin(yaw), math.sin(pitch), math.cos(pitch) * math.cos(yaw)])
        return target + self.distance(box) * direction, target, np.array(UP)
