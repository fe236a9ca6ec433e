"""Independent references for the shape tests: each built-in's boundary sampled densely and its
inside by plain geometry, the distance by brute force over the samples (within half the sample
spacing of the exact one), and a crossing-number point-in-polygon test."""

from __future__ import annotations

import numpy as np

SPACING = 1e-3


def circle_points(radius: float, centre=(0.0, 0.0)) -> np.ndarray:
    count = int(np.ceil(2 * np.pi * radius / SPACING))
    angle = np.linspace(0, 2 * np.pi, count, endpoint=False)
    return np.asarray(centre) + radius * np.stack([np.cos(angle), np.sin(angle)], axis=1)


def polygon_points(corners: np.ndarray) -> np.ndarray:
    pieces = []
    for a, b in zip(corners, np.roll(corners, -1, axis=0)):
        t = np.linspace(0, 1, int(np.ceil(np.hypot(*(b - a)) / SPACING)), endpoint=False)
        pieces.append(a + t[:, None] * (b - a))
    return np.concatenate(pieces)


def star_corners() -> np.ndarray:
    k = np.arange(10)
    angle = np.radians(90 + 36 * k)
    radius = np.where(k % 2 == 0, 0.6, 0.25)
    return np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)


def in_polygon(xy: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """Crossing number of a ray to +x, one edge at a time."""
    inside = np.zeros(len(xy), bool)
    for (ax, ay), (bx, by) in zip(corners, np.roll(corners, -1, axis=0)):
        straddles = (ay > xy[:, 1]) != (by > xy[:, 1])
        x_cross = ax + (xy[:, 1] - ay) * (bx - ax) / np.where(by != ay, by - ay, 1)
        inside ^= straddles & (xy[:, 0] < x_cross)
    return inside


def _rounded_box_points() -> np.ndarray:
    """Edges x = +-0.5 (|y| <= 0.2) and y = +-0.35 (|x| <= 0.35), and the outer quarter of a circle
    of radius 0.15 about each corner (+-0.35, +-0.2)."""
    side = polygon_points(np.array([[0.5, -0.2], [0.5, 0.2], [-0.5, 0.2], [-0.5, -0.2]]))
    top = polygon_points(np.array([[-0.35, 0.35], [0.35, 0.35], [0.35, -0.35], [-0.35, -0.35]]))
    pieces = [side[np.abs(side[:, 0]) == 0.5], top[np.abs(top[:, 1]) == 0.35]]
    for sx in (-1, 1):
        for sy in (-1, 1):
            arc = circle_points(0.15, (sx * 0.35, sy * 0.2))
            pieces.append(arc[(sx * (arc[:, 0] - sx * 0.35) >= 0) & (sy * (arc[:, 1] - sy * 0.2) >= 0)])
    return np.concatenate(pieces)


def _rounded_box_inside(xy):
    a = np.abs(xy)
    core = ((a[:, 0] <= 0.5) & (a[:, 1] <= 0.2)) | ((a[:, 0] <= 0.35) & (a[:, 1] <= 0.35))
    return core | (np.hypot(a[:, 0] - 0.35, a[:, 1] - 0.2) <= 0.15)


BOX = np.array([[0.5, -0.35], [0.5, 0.35], [-0.5, 0.35], [-0.5, -0.35]])
REFERENCES = {
    "circle": (lambda: circle_points(0.5), lambda xy: np.hypot(*xy.T) < 0.5),
    "box": (lambda: polygon_points(BOX), lambda xy: (np.abs(xy[:, 0]) < 0.5) & (np.abs(xy[:, 1]) < 0.35)),
    "rounded-box": (_rounded_box_points, _rounded_box_inside),
    "ring": (
        lambda: np.concatenate([circle_points(0.3), circle_points(0.6)]),
        lambda xy: (np.hypot(*xy.T) > 0.3) & (np.hypot(*xy.T) < 0.6),
    ),
    "star": (lambda: polygon_points(star_corners()), lambda xy: in_polygon(xy, star_corners())),
}


def nearest_sample(xy: np.ndarray, samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distance to the nearest sample and that sample, by brute force in chunks."""
    distance, nearest = np.empty(len(xy)), np.empty((len(xy), 2))
    for start in range(0, len(xy), 512):
        part = xy[start : start + 512]
        squared = (part[:, :1] - samples[:, 0]) ** 2 + (part[:, 1:] - samples[:, 1]) ** 2
        best = squared.argmin(axis=1)
        distance[start : start + 512] = np.sqrt(squared[np.arange(len(part)), best])
        nearest[start : start + 512] = samples[best]
    return distance, nearest


def brute_signed_distance(name: str, xy: np.ndarray) -> np.ndarray:
    sampler, inside = REFERENCES[name]
    distance, _ = nearest_sample(xy, sampler())
    return np.where(inside(xy), -distance, distance)
