"""A user's CSV of points: columns x, y, then a label column (classes) or value columns (regression),
with or without a header (how each is told: docs/formats.md, 'Input files'). A `set` column is left
out, so that a run's split.csv reads back. Every problem is one line naming the file, row and column,
and nothing is changed until the whole file has been read and checked."""

from __future__ import annotations

import csv
import hashlib
import io
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import UserError, counted
from .source import MAX_CLASSES, MAX_ROWS, MIN_ROWS

MAX_CSV_BYTES = 256 << 20
MAX_MAGNITUDE = 1e6  # features square the coordinates: x^2 of 1e30 is infinite in float32


@dataclass
class CsvData:
    x: np.ndarray  # float64 (n,)
    y: np.ndarray
    classes: np.ndarray | None  # int64 (n,) class indices, for a label column
    values: np.ndarray | None  # float64 (n, columns), for value columns
    names: tuple[str, ...]  # the classes in index order, or the value columns
    source: dict  # the config's dataset entry


def _fail(path: str, problem: str) -> UserError:
    return UserError(f"dataset {path!r}: {problem}")


def _read_text(path: str) -> tuple[str, str]:
    """The file's text (UTF-8) and SHA-256, or a UserError for a missing file, a folder, a file
    too large, or binary data (naming the row where it starts)."""
    file = Path(path)
    if file.is_dir():
        raise _fail(path, "is a folder, not a CSV file")
    try:
        if file.stat().st_size > MAX_CSV_BYTES:
            raise _fail(path, f"is larger than {MAX_CSV_BYTES >> 20} MB")
        data = file.read_bytes()
    except OSError as error:
        raise _fail(path, f"cannot be read: {error.strerror or error}") from None
    digest = hashlib.sha256(data).hexdigest()
    bad = data.find(b"\0")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        bad = error.start if bad < 0 else min(bad, error.start)
    if bad >= 0:
        row = data.count(b"\n", 0, bad) + 1
        raise _fail(path, f"row {row} holds binary data, not text: it is not a CSV file")
    return text, digest


def _number(path: str, row: int, column: int, name: str, cell: str) -> float:
    where = f"row {row}, column {column + 1} ({name})"
    if not cell.strip():
        raise _fail(path, f"{where} is empty")
    try:
        value = float(cell)
    except ValueError:
        raise _fail(path, f"{where}: {cell.strip()[:40]!r} is not a number") from None
    if not math.isfinite(value):
        raise _fail(path, f"{where}: {cell.strip()!r} is not a finite number")
    if abs(value) > MAX_MAGNITUDE:
        raise _fail(path, f"{where}: {value:g} is beyond +-{MAX_MAGNITUDE:g}, the range this app trains on")
    return value


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _rows(path: str, text: str) -> tuple[list[int], list[list[str]]]:
    """(line number, cells) of each non-blank row, at most MAX_ROWS + 1 of them."""
    lines, rows = [], []
    reader = csv.reader(io.StringIO(text, newline=""))  # lazily: a huge file stops at the limit
    try:
        for cells in reader:
            if not cells or (len(cells) == 1 and not cells[0].strip()):  # a blank line
                continue
            if len(rows) > MAX_ROWS:
                raise _fail(path, f"has more than {MAX_ROWS:,} rows (row {reader.line_num})")
            lines.append(reader.line_num)
            rows.append(cells)
    except csv.Error as error:
        raise _fail(path, f"row {reader.line_num}: {error}") from None
    if not rows:
        raise _fail(path, "is empty")
    return lines, rows


def _columns(path: str, first: list[str]) -> tuple[list[str], bool]:
    """The column names, and whether the first row is a header."""
    if len(first) < 3:
        separator = next((name for mark, name in ((";", "';'"), ("\t", "tabs")) if mark in first[0]), None)
        if separator is not None:
            raise _fail(
                path,
                f"row 1 has {counted(len(first), 'cell')}: its columns seem separated by {separator}, and a CSV "
                "here is separated by commas (save it as comma-separated)",
            )
        raise _fail(path, f"row 1 has {counted(len(first), 'cell')}: a CSV of points needs x, y and a label or values")
    if _is_number(first[0]) and _is_number(first[1]):
        return ["x", "y"] + (["label"] if len(first) == 3 else [f"value{k}" for k in range(1, len(first) - 1)]), False
    names = [cell.strip() for cell in first]
    if [n.lower() for n in names[:2]] != ["x", "y"]:
        raise _fail(path, f"row 1: a header's first columns must be x and y (got {names[0]!r}, {names[1]!r})")
    if any(not n for n in names) or len({n.lower() for n in names}) != len(names):
        raise _fail(path, "row 1: the header's names must be present and different")
    return names, True


def _check_shape(path: str, lines: list[int], rows: list[list[str]], width: int) -> None:
    for line, cells in zip(lines, rows):
        if len(cells) != width:
            raise _fail(path, f"row {line} has {counted(len(cells), 'cell')} where the header has {width}")


def _numbers(path: str, lines: list[int], rows: list[list[str]], column: int, name: str) -> np.ndarray:
    """A column as float64: numpy parses it at once; a failure is looked for cell by cell."""
    cells = [cells[column] for cells in rows]
    try:
        values = np.asarray(cells, dtype=np.float64)
        ok = bool(np.all(np.isfinite(values)) and np.max(np.abs(values)) <= MAX_MAGNITUDE)
    except ValueError:
        ok = False
    if not ok:
        for line, cell in zip(lines, cells):
            _number(path, line, column, name, cell)
    return values


def _labels(path: str, cells: list[str]) -> tuple[np.ndarray, tuple[str, ...]]:
    """Class indices and names: numbers in numeric order (whole numbers written as such), else
    text in sorted order."""
    stripped = [cell.strip() for cell in cells]
    distinct = sorted(set(stripped))
    if all(_is_number(name) and math.isfinite(float(name)) for name in distinct):
        fractions = [name for name in distinct if not float(name).is_integer()]
        if fractions:  # 0.5, 1.5, 2.5 are values to fit, not four classes
            raise _fail(
                path,
                f"the label column holds numbers that are not whole ({', '.join(fractions[:3])}): labels name "
                "classes (whole numbers or text); for values to fit, name the column otherwise (value, say)",
            )
        by_value: dict[float, str] = {}
        for name in distinct:
            by_value.setdefault(float(name), name)
        order = sorted(by_value)
        names = tuple(str(int(v)) if v.is_integer() else by_value[v] for v in order)
        index = {name: order.index(float(name)) for name in distinct}
    else:
        names = tuple(distinct)
        index = {name: k for k, name in enumerate(names)}
    if len(names) < 2:
        raise _fail(
            path, f"the label column holds a single class ({names[0]!r}): classification needs 2 to {MAX_CLASSES}"
        )
    if len(names) > MAX_CLASSES:
        raise _fail(path, f"the label column holds {len(names)} classes; at most {MAX_CLASSES} are supported")
    return np.array([index[s] for s in stripped], np.int64), names


def _label_column(header: bool, names: list[str], columns: list[int], rows: list[list[str]]) -> bool:
    if header:
        return len(columns) == 1 and names[columns[0]].lower() == "label"
    if len(columns) != 1:
        return False
    cells = {cells[columns[0]].strip() for cells in rows}
    if not all(_is_number(c) for c in cells):
        return True
    return len(cells) <= MAX_CLASSES and all(math.isfinite(float(c)) and float(c).is_integer() for c in cells)


def read_csv(path: str) -> CsvData:
    """Reads and checks a CSV of points; a UserError names the first problem."""
    text, digest = _read_text(path)
    lines, rows = _rows(path, text)
    names, header = _columns(path, rows[0])
    if header:
        lines, rows = lines[1:], rows[1:]
    _check_shape(path, lines, rows, len(names))
    if len(rows) < MIN_ROWS:
        raise _fail(
            path,
            f"has {counted(len(rows), 'row')} of points; at least {MIN_ROWS} are needed (one to train, one to test)",
        )
    x, y = (_numbers(path, lines, rows, k, names[k]) for k in (0, 1))
    source = {"csv": str(Path(path).resolve()), "sha256": digest, "rows": len(rows)}
    # the truth's columns: all after y, but split.csv's `set` (the split is made again)
    columns = [k for k in range(2, len(names)) if not (header and names[k].lower() == "set")]
    if not columns:
        raise _fail(path, "has no label or value column after x and y")
    if _label_column(header, names, columns, rows):
        classes, class_names = _labels(path, [cells[columns[0]] for cells in rows])
        return CsvData(x, y, classes, None, class_names, {**source, "classes": list(class_names)})
    if len(columns) > MAX_CLASSES:
        raise _fail(path, f"has {counted(len(columns), 'value column')}; at most {MAX_CLASSES} outputs are supported")
    values = np.stack([_numbers(path, lines, rows, k, names[k]) for k in columns], axis=1)
    value_names = tuple(names[k] for k in columns) if header or len(columns) > 1 else ("value",)
    return CsvData(x, y, None, values, value_names, {**source, "values": list(value_names)})
