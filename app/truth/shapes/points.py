"""Boundary points from a CSV file (x,y or x,y,nx,ny; the format: docs/formats.md, 'Input files'): the
grid holds the exact distance to the nearest point, signed by its outward normal, or UNSIGNED
without normals. A distance to points is not the distance to the curve through them: sparse points
give a scalloped truth."""

from __future__ import annotations

import math

import numpy as np

from ...errors import UserError, counted, read_user_text
from .segments import nearest_segment

MIN_POINTS = 3
MAX_POINTS = 1_000_000
MAX_FILE_BYTES = 64 << 20
HEADERS = (("x", "y"), ("x", "y", "nx", "ny"))


def _values(fields: list[str], columns: int | None, where: str, line: str) -> list[float]:
    """A data line's numbers: 2 or 4 of them (as many as the lines before), each finite; a
    UserError naming the column of the first that is not."""
    if len(fields) not in (2, 4) or (columns and len(fields) != columns):
        expected = f"{columns} numbers like the lines before it" if columns else "x,y or x,y,nx,ny (finite numbers)"
        raise UserError(f"{where}: expected {expected}, got {counted(len(fields), 'field')}: {line[:60]!r}")
    values = []
    for column, (name, field) in enumerate(zip(HEADERS[len(fields) // 2 - 1], fields), 1):
        try:
            value = float(field)
        except ValueError:
            raise UserError(f"{where}, column {column} ({name}): {field[:40]!r} is not a number") from None
        if not math.isfinite(value):
            raise UserError(f"{where}, column {column} ({name}): {field!r} is not a finite number")
        values.append(value)
    return values


def _rows(text: str, name: str) -> list[tuple[int, list[float]]]:
    """(line number, values) of each data line, all of 2 or all of 4 finite numbers."""
    rows: list[tuple[int, list[float]]] = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        fields = [field.strip() for field in stripped.split(",")]
        if not rows and tuple(field.lower() for field in fields) in HEADERS:
            continue
        columns = len(rows[0][1]) if rows else None
        rows.append((number, _values(fields, columns, f"points file {name} line {number}", stripped)))
        if len(rows) > MAX_POINTS:
            raise UserError(f"points file {name} has more than {MAX_POINTS:,} points")
    return rows


def read_points(path: str) -> tuple[np.ndarray, np.ndarray | None]:
    """The points (n, 2) float64 and their unit normals (n, 2), or None without normal columns."""
    name = repr(str(path))
    rows = _rows(read_user_text(path, "points file", MAX_FILE_BYTES), name)
    if len(rows) < MIN_POINTS:
        raise UserError(f"points file {name} has {counted(len(rows), 'point')}: at least {MIN_POINTS} are needed")
    values = np.array([row for _, row in rows])
    if values.shape[1] == 2:
        return values, None
    length = np.hypot(values[:, 2], values[:, 3])
    if (length == 0).any():
        line = rows[int(np.argmax(length == 0))][0]
        raise UserError(f"points file {name} line {line}: the normal (nx, ny) is zero")
    return values[:, :2], values[:, 2:] / length[:, None]


def points_distance(points: np.ndarray, normals: np.ndarray | None, xy: np.ndarray) -> np.ndarray:
    """Distance (n,) float64 from xy to the nearest point, signed by its normal where given."""
    distance, nearest = nearest_segment(xy, points, points)
    if normals is None:
        return distance
    side = np.sum((xy - points[nearest]) * normals[nearest], axis=1)
    return np.where(side < 0, -distance, distance)


def check_points_in_domain(name: str, points: np.ndarray, domain) -> None:
    x0, x1, y0, y1 = domain
    within = (points[:, 0] >= x0) & (points[:, 0] <= x1) & (points[:, 1] >= y0) & (points[:, 1] <= y1)
    if not within.any():
        raise UserError(
            f"shape {name} lies entirely outside the domain [{x0:g}, {x1:g}, {y0:g}, {y1:g}]: none of its points is in it"
        )
