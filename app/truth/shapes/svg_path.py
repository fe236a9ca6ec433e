"""SVG geometry: path data parsed into pieces (lines, quadratic and cubic Béziers, elliptical arcs),
moved by affine maps (each kind to its own kind, so pieces map into the domain first), and flattened
there into polylines within a tolerance, the fewest equal steps whose bound on the chord's error
keeps within it (docs/architecture.md, 'Shapes and their distances')."""

from __future__ import annotations

import re
from dataclasses import dataclass
from math import comb

import numpy as np

from ...errors import UserError, counted

MAX_STEPS = 4096  # of one piece
ARITY = {"M": 2, "L": 2, "H": 1, "V": 1, "C": 6, "S": 4, "Q": 4, "T": 2, "Z": 0}
_TOKEN = re.compile(r"[\s,]*([A-Za-z]|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")


@dataclass(frozen=True)
class Piece:
    kind: str  # "line", "quad", "cubic" or "arc"
    points: np.ndarray  # (2, 2), (3, 2), (4, 2) control points; an arc's c, u, v
    angles: tuple[float, float] = (0.0, 0.0)  # an arc's t0, t1

    def mapped(self, matrix: np.ndarray) -> Piece:
        """This piece under the affine map x -> matrix[:2, :2] x + matrix[:2, 2]."""
        moved = self.points @ matrix[:2, :2].T
        moved[0 if self.kind == "arc" else slice(None)] += matrix[:2, 2]
        return Piece(self.kind, moved, self.angles)

    def start(self) -> np.ndarray:
        return self.flatten_at(np.zeros(1))[0]

    def end(self) -> np.ndarray:
        return self.flatten_at(np.ones(1))[0]

    def flatten_at(self, t: np.ndarray) -> np.ndarray:
        if self.kind == "arc":
            angle = self.angles[0] + t * (self.angles[1] - self.angles[0])
            c, u, v = self.points
            return c + np.cos(angle)[:, None] * u + np.sin(angle)[:, None] * v
        degree = len(self.points) - 1
        return sum(
            (comb(degree, k) * (1 - t) ** (degree - k) * t**k)[:, None] * point for k, point in enumerate(self.points)
        )

    def steps(self, tolerance: float) -> int:
        if self.kind == "line":
            return 1
        if self.kind == "arc":
            radius = max(np.hypot(*self.points[1]), np.hypot(*self.points[2]))
            sweep = abs(self.angles[1] - self.angles[0])
            chord = 2 * np.arccos(max(-1.0, 1 - tolerance / radius)) if radius > tolerance else np.pi
            return int(min(MAX_STEPS, max(2, np.ceil(sweep / chord))))
        second = self.points[:-2] - 2 * self.points[1:-1] + self.points[2:]
        bend = (6 if self.kind == "cubic" else 2) * np.hypot(*second.T).max()
        return int(min(MAX_STEPS, max(1, np.ceil(np.sqrt(bend / (8 * tolerance))))))

    def flatten(self, tolerance: float) -> np.ndarray:
        """The polyline (n + 1, 2) from the piece's start to its end."""
        if self.kind == "line":
            return self.points
        return self.flatten_at(np.linspace(0.0, 1.0, self.steps(tolerance) + 1))


def _tokens(data: str, where: str) -> list[str]:
    tokens, at = [], 0
    while at < len(data):
        match = _TOKEN.match(data, at)
        if match is None:
            rest = data[at:].lstrip(" \t\r\n,")
            if rest:
                raise UserError(
                    f"{where}: cannot read path data at character {len(data) - len(rest) + 1}: {rest[:12]!r}"
                )
            break
        tokens.append(match.group(1))
        at = match.end()
    return tokens


class _PathReader:
    """Reads path data command by command into subpaths, each a list of pieces in order."""

    def __init__(self, where: str):
        self.where = where
        self.subpaths: list[list[Piece]] = []
        self.pieces: list[Piece] = []
        self.current = self.start = np.zeros(2)
        self.control = None  # the last Bézier's last control point, for S and T
        self.previous = ""

    def add(self, kind: str, *points) -> None:
        self.pieces.append(Piece(kind, np.array([self.current, *points], np.float64)))
        self.current = np.asarray(points[-1], np.float64)

    def end_subpath(self) -> None:
        if self.pieces:
            self.subpaths.append(self.pieces)
        self.pieces = []

    def reflected(self, kinds: str) -> np.ndarray:
        return 2 * self.current - self.control if self.previous in kinds else self.current

    def command(self, letter: str, args: list[float]) -> None:
        upper = letter.upper()
        base = self.current if letter.islower() else np.zeros(2)
        xy = [base + np.array(args[k : k + 2]) for k in range(0, len(args) - 1, 2)]
        control = None
        if upper == "M":
            self.end_subpath()
            self.current = self.start = xy[0]
        elif upper == "L" or upper in "HV":
            target = self.current.copy()
            if upper == "L":
                target = xy[0]
            else:
                axis = 0 if upper == "H" else 1
                target[axis] = args[0] + (self.current[axis] if letter.islower() else 0.0)
            self.add("line", target)
        elif upper == "C":
            control = xy[1]
            self.add("cubic", *xy)
        elif upper == "S":
            control = xy[0]
            self.add("cubic", self.reflected("CS"), *xy)
        elif upper == "Q":
            control = xy[0]
            self.add("quad", *xy)
        elif upper == "T":
            control = self.reflected("QT")
            self.add("quad", control, xy[0])
        else:  # Z
            if np.any(self.current != self.start):
                self.add("line", self.start)
            self.end_subpath()
            self.current = self.start
        self.control, self.previous = control, upper


def parse_path_data(data: str, where: str) -> list[list[Piece]]:
    """The subpaths of an SVG path's d attribute; a UserError for what can't be read, naming
    `where` (the file and element). Arcs (A, a) are refused."""
    tokens = _tokens(data, where)
    reader = _PathReader(where)
    letter, at = None, 0
    while at < len(tokens):
        if tokens[at].isalpha():
            letter, at = tokens[at], at + 1
            if letter.upper() not in ARITY:
                what = "the arc command" if letter in "Aa" else "the unknown command"
                raise UserError(f"{where}: path data uses {what} {letter!r}, which is not supported")
        elif letter is None:
            raise UserError(f"{where}: path data must start with a move (M or m), not {tokens[at]!r}")
        elif letter in "Zz":
            raise UserError(f"{where}: path data has a number after {letter!r}: {tokens[at]!r}")
        if reader.previous == "" and letter not in "Mm":
            raise UserError(f"{where}: path data must start with a move (M or m), not {letter!r}")
        count = ARITY[letter.upper()]
        args = tokens[at : at + count]
        if len(args) < count or any(token.isalpha() for token in args):
            raise UserError(f"{where}: path command {letter!r} needs {counted(count, 'number')}")
        reader.command(letter, [float(token) for token in args])
        at += count
        if letter in "Mm":
            letter = "l" if letter == "m" else "L"  # a move's further pairs are lines
    reader.end_subpath()
    return reader.subpaths
