"""An SVG file's filled shapes as an Outline in the domain: the elements, transforms and fill rules
read, what is skipped and what is refused, and the placement: docs/formats.md, 'Input files'. The
boundary is the contours' segments whose two sides differ (segments.outline_of), flattened within
TOLERANCE of the domain's size."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree

import numpy as np

from ...errors import UserError, read_user_bytes
from .segments import Contours, Outline, outline_of
from .svg_path import Piece, parse_path_data

MAX_FILE_BYTES = 16 << 20
MAX_SEGMENTS = 200_000
TOLERANCE = 1e-4  # of the domain's larger side: the flattened curves' largest error
HIDDEN = {"defs", "symbol", "clipPath", "mask", "pattern", "marker"}
REFUSED = {"use", "svg"}
_TRANSFORM = re.compile(r"[\s,]*(matrix|translate|scale|rotate|skewX|skewY)\s*\(([^)]*)\)")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
Subpaths = list[list[Piece]]


def _tag(element) -> str:
    return element.tag.rsplit("}", 1)[-1] if isinstance(element.tag, str) else ""


def _length(where: str, element, key: str, default: float | None = 0.0) -> float:
    text = element.get(key)
    if text is None:
        if default is None:
            raise UserError(f"{where}: <{_tag(element)}> has no {key}")
        return default
    match = re.fullmatch(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(px)?\s*", text)
    if match is None:
        raise UserError(f"{where}: <{_tag(element)}> {key}={text!r} is not a number (units other than px are not read)")
    return float(match.group(1))


def _numbers(text: str) -> list[float]:
    return [float(v) for v in _NUMBER.findall(text)]


def _transform(where: str, text: str) -> np.ndarray:
    matrix, at = np.eye(3), 0
    for match in _TRANSFORM.finditer(text):
        if text[at : match.start()].strip(" \t\r\n,"):
            break
        name, v = match.group(1), _numbers(match.group(2))
        counts = {"matrix": (6,), "translate": (1, 2), "scale": (1, 2), "rotate": (1, 3), "skewX": (1,), "skewY": (1,)}
        if len(v) not in counts[name]:
            raise UserError(f"{where}: transform {name}() takes {' or '.join(map(str, counts[name]))} numbers")
        step = np.eye(3)
        if name == "matrix":
            step[:2] = np.array(v).reshape(3, 2).T
        elif name == "translate":
            step[:2, 2] = (v[0], v[1] if len(v) == 2 else 0.0)
        elif name == "scale":
            step[0, 0], step[1, 1] = v[0], v[-1]
        elif name == "rotate":
            angle, (cx, cy) = np.radians(v[0]), (v[1:] if len(v) == 3 else (0.0, 0.0))
            turn = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
            step[:2, :2], step[:2, 2] = turn, np.array([cx, cy]) - turn @ np.array([cx, cy])
        else:
            step[0 if name == "skewX" else 1, 1 if name == "skewX" else 0] = np.tan(np.radians(v[0]))
        matrix, at = matrix @ step, match.end()
    if text[at:].strip(" \t\r\n,"):
        raise UserError(f"{where}: cannot read transform {text.strip()!r}")
    return matrix


def _style(element, inherited: dict[str, str]) -> dict[str, str]:
    """fill, fill-rule and display: the element's own (style attribute first), else inherited."""
    style = dict(inherited, display="inline")
    declared = dict(
        (key.strip(), value.strip())
        for key, _, value in (item.partition(":") for item in (element.get("style") or "").split(";"))
        if key.strip()
    )
    for key in ("fill", "fill-rule", "display"):
        value = declared.get(key, element.get(key))
        if value is not None:
            style[key] = value.strip()
    return style


def _polygon(points: list[float], where: str) -> Subpaths:
    if len(points) < 4 or len(points) % 2:
        raise UserError(f"{where}: points must be pairs of numbers, at least two")
    xy = np.array(points).reshape(-1, 2)
    return [[Piece("line", np.array([p, q])) for p, q in zip(xy, np.roll(xy, -1, axis=0))]]


def _rect(where: str, element) -> Subpaths:
    x, y = _length(where, element, "x"), _length(where, element, "y")
    w, h = _length(where, element, "width", None), _length(where, element, "height", None)
    rx = _length(where, element, "rx", None) if element.get("rx") is not None else None
    ry = _length(where, element, "ry", None) if element.get("ry") is not None else None
    rx, ry = (rx if rx is not None else ry or 0.0), (ry if ry is not None else rx or 0.0)  # one gives both
    rx, ry = min(max(rx, 0.0), w / 2), min(max(ry, 0.0), h / 2)
    if rx == 0 or ry == 0:
        return _polygon([x, y, x + w, y, x + w, y + h, x, y + h], where)
    centres = ((x + w - rx, y + ry), (x + w - rx, y + h - ry), (x + rx, y + h - ry), (x + rx, y + ry))
    arcs = [
        Piece("arc", np.array([centre, [rx, 0.0], [0.0, ry]]), (k * np.pi / 2 - np.pi / 2, k * np.pi / 2))
        for k, centre in enumerate(centres)
    ]
    pieces = []
    for k, arc in enumerate(arcs):  # each corner's arc, then the straight edge to the next one
        pieces += [arc, Piece("line", np.array([arc.end(), arcs[(k + 1) % 4].start()]))]
    return [pieces]


def _ellipse(where: str, element, tag: str) -> Subpaths:
    cx, cy = _length(where, element, "cx"), _length(where, element, "cy")
    rx = _length(where, element, "r" if tag == "circle" else "rx", None)
    ry = rx if tag == "circle" else _length(where, element, "ry", None)
    if rx <= 0 or ry <= 0:
        return []
    return [[Piece("arc", np.array([[cx, cy], [rx, 0.0], [0.0, ry]]), (0.0, 2 * np.pi))]]


def _element(where: str, element, tag: str) -> Subpaths:
    if tag == "path":
        return parse_path_data(element.get("d") or "", where)
    if tag in ("polygon", "polyline"):
        return _polygon(_numbers(element.get("points") or ""), where)
    if tag == "rect":
        return _rect(where, element)
    return _ellipse(where, element, tag)


def _walk(where: str, element, matrix: np.ndarray, style: dict[str, str], found: list) -> None:
    """Appends (subpaths mapped to SVG user space, fill-rule) of every filled shape below."""
    for child in element:
        tag = _tag(child)
        if tag in HIDDEN:
            continue
        if tag in REFUSED:
            raise UserError(f"{where}: <{tag}> elements are not supported")
        here = f"{where} <{tag}>"
        child_style = _style(child, style)
        child_matrix = matrix @ _transform(here, child.get("transform") or "")
        if child_style["display"] == "none":
            continue
        if tag in ("g", "a"):
            _walk(where, child, child_matrix, child_style, found)
        elif tag in ("path", "polygon", "polyline", "rect", "circle", "ellipse") and child_style["fill"] != "none":
            subpaths = [[piece.mapped(child_matrix) for piece in pieces] for pieces in _element(here, child, tag)]
            found.append((subpaths, "evenodd" if child_style["fill-rule"] == "evenodd" else "nonzero"))


def _view_box(where: str, root) -> tuple[float, float, float, float] | None:
    if root.get("viewBox") is not None:
        box = _numbers(root.get("viewBox"))
        if len(box) != 4 or box[2] <= 0 or box[3] <= 0:
            raise UserError(f"{where}: viewBox {root.get('viewBox')!r} must be four numbers, width and height > 0")
        return box[0], box[1], box[2], box[3]
    if root.get("width") is not None and root.get("height") is not None:
        width, height = _length(where, root, "width"), _length(where, root, "height")
        return (0.0, 0.0, width, height) if width > 0 and height > 0 else None
    return None


def _placement(box, domain) -> np.ndarray:
    """The affine map of the box (x, y, w, h) into the domain: fitted, centred, y flipped."""
    x0, x1, y0, y1 = domain
    bx, by, bw, bh = box
    scale = min((x1 - x0) / bw, (y1 - y0) / bh)
    return np.array(
        [
            [scale, 0.0, (x0 + x1) / 2 - scale * (bx + bw / 2)],
            [0.0, -scale, (y0 + y1) / 2 + scale * (by + bh / 2)],
            [0, 0, 1],
        ]
    )


def _bounding_box(found) -> tuple[float, float, float, float]:
    """The shapes' bounding box, from their outlines flattened finely for their size (the control
    points' box holds the curves, so its size sets the tolerance)."""
    pieces = [piece for subpaths, _ in found for pieces in subpaths for piece in pieces]
    controls = np.concatenate([p.points[:1] if p.kind == "arc" else p.points for p in pieces])
    reach = max(
        np.ptp(controls, axis=0).max(), max((np.abs(p.points[1:]).sum() for p in pieces if p.kind == "arc"), default=0)
    )
    points = np.concatenate([piece.flatten(max(reach, 1e-12) * TOLERANCE) for piece in pieces])
    low, high = points.min(axis=0), points.max(axis=0)
    size = np.maximum(high - low, 1e-12)
    return low[0], low[1], size[0], size[1]


def _contours(subpaths: Subpaths, rule: str, tolerance: float) -> Contours:
    """Closed polylines of the subpaths as segments a -> b, each closed back to its start."""
    starts, ends = [], []
    for pieces in subpaths:
        line = np.concatenate([pieces[0].flatten(tolerance)[:1]] + [p.flatten(tolerance)[1:] for p in pieces])
        starts.append(line)
        ends.append(np.roll(line, -1, axis=0))
    return Contours(np.concatenate(starts), np.concatenate(ends), rule)


def _parse(path: str):
    where = f"SVG {str(path)!r}"
    try:
        root = ElementTree.fromstring(read_user_bytes(path, "SVG", MAX_FILE_BYTES))
    except ElementTree.ParseError as error:
        raise UserError(f"{where} does not parse as XML: {error}") from None
    if _tag(root) != "svg":
        raise UserError(f"{where} is not an SVG image: its root element is <{_tag(root)}>")
    found: list = []
    root_style = _style(root, {"fill": "black", "fill-rule": "nonzero"})
    _walk(where, root, _transform(where, root.get("transform") or ""), root_style, found)
    if not found:
        raise UserError(f"{where} has no filled path or shape (path, polygon, rect, circle, ellipse)")
    return where, _view_box(where, root) or _bounding_box(found), found


def load_svg(path: str, domain) -> tuple[Outline, np.ndarray]:
    """The file's Outline in domain units and its boundary's outward normals."""
    where, box, found = _parse(path)
    placement = _placement(box, domain)
    tolerance = TOLERANCE * max(domain[1] - domain[0], domain[3] - domain[2])
    fills = tuple(
        _contours([[piece.mapped(placement) for piece in pieces] for pieces in subpaths], rule, tolerance)
        for subpaths, rule in found
        if subpaths
    )
    if not fills:
        raise UserError(f"{where} has no filled path or shape: its paths hold no segments")
    if sum(len(c.a) for c in fills) > MAX_SEGMENTS:
        raise UserError(f"{where} flattens to more than {MAX_SEGMENTS:,} segments")
    outline, normals = outline_of(fills, tolerance / 10)
    if len(outline.a) == 0:
        raise UserError(f"{where} encloses no area: its shapes have no inside")
    return outline, normals
