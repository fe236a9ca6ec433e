"""Target functions as small expressions in x and y, checked once and compiled two ways: to Slang for
the kernels and to numpy for references and tests. No text of an expression reaches the Slang
compiler: the Slang is printed from the parsed tree an allow-list checked (docs/architecture.md,
'Targets and truths')."""

from __future__ import annotations

import ast
import json
import math
from collections.abc import Callable

import numpy as np

from ..errors import UserError
from ..resources import asset

MAX_TARGETS = 8  # outputs a run may have, whatever its truth

TUTORIAL_TARGETS = ["(x + y) / (1 + y*y)", "2*x + y", "0.5*x*x + 1.2*y", "x + 0.5*y*y"]

_FUNCTIONS_1 = {"sin", "cos", "tan", "exp", "log", "sqrt", "abs"}
_FUNCTIONS_2 = {"pow", "min", "max"}
_NUMPY = {
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "abs": np.abs,
    "pow": np.power,
    "min": np.minimum,
    "max": np.maximum,
}
_BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
CONSTANTS = {"pi": math.pi, "e": math.e}  # names a target may use besides x and y
FLOAT32_MAX = float(np.finfo(np.float32).max)

MAX_TARGET_LENGTH = 500  # characters: far more than any formula a user types...
MAX_TARGET_DEPTH = 40  # ...and its nesting, which bounds the recursion of the parser and the checks


class TargetError(UserError):
    """A rejected expression; `column` (1-based) is where the problem is, when it has a place."""

    def __init__(self, message: str, column: int | None = None):
        super().__init__(message)
        self.column = column


def _shown(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def _fail(text: str, column: int | None, problem: str) -> TargetError:
    where = f" at column {column}" if column is not None else ""
    return TargetError(f"target {_shown(text)!r}{where}: {problem}", column)


def _carets_as_powers(text: str) -> tuple[str, list[int]]:
    """`text` with each ^ spelled ** (a power, as most people and calculators write it; `^` has
    no other meaning here, Python's exclusive or being no operator of targets), and for each
    character of the result, plus one past its end, the 0-based index in `text` it came from:
    columns name what the user typed. ** keeps Python's rules: x^2^3 is x^(2^3), -x^2 is -(x^2)."""
    origin = [i for i, char in enumerate(text) for _ in range(2 if char == "^" else 1)]
    return text.replace("^", "**"), origin + [len(text)]


def _check(node: ast.AST, text: str, origin: list[int], variables: tuple[str, ...]) -> None:
    """Accepts numbers, the variables (x, y; x, y, z in 3D), pi, e, + - * /, ** and ^ (as pow), unary +/-,
    parentheses and the listed functions; anything else (names, attributes, subscripts, strings, calls of
    other names, comparisons, lambdas...) is an error at its column (origin: parse_target's map)."""
    column = origin[max(getattr(node, "col_offset", 0), 0)] + 1
    if isinstance(node, ast.Expression):
        return _check(node.body, text, origin, variables)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        try:
            value = float(node.value)
        except OverflowError:
            value = math.inf
        if not abs(value) <= FLOAT32_MAX:  # also NaN
            raise _fail(text, column, "the number is too large for a 32-bit float")
        return
    if isinstance(node, ast.Name):
        if node.id not in (*variables, *CONSTANTS):
            raise _fail(text, column, f"unknown name {node.id!r} (use {', '.join(variables)}, pi and e)")
        return
    if isinstance(node, ast.BinOp) and (type(node.op) in _BINARY or isinstance(node.op, ast.Pow)):
        _check(node.left, text, origin, variables)
        return _check(node.right, text, origin, variables)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _check(node.operand, text, origin, variables)
    if isinstance(node, ast.Call) and not isinstance(node.func, ast.Name):
        raise _fail(
            text,
            origin[node.func.col_offset] + 1,
            f"{_describe(node.func)} is not allowed (only the listed functions can be called)",
        )
    if isinstance(node, ast.Call) and not node.keywords:
        name = node.func.id
        arity = 1 if name in _FUNCTIONS_1 else 2 if name in _FUNCTIONS_2 else None
        if arity is None:
            raise _fail(text, column, f"unknown function {name!r}")
        if len(node.args) != arity or any(isinstance(a, ast.Starred) for a in node.args):
            raise _fail(text, column, f"{name} takes {arity} argument{'s' if arity > 1 else ''}")
        for arg in node.args:
            _check(arg, text, origin, variables)
        return
    raise _fail(
        text,
        column,
        f"{_describe(node)} is not allowed (numbers, x, y, pi, e, + - * / ** ^, parentheses "
        f"and {', '.join(sorted(_FUNCTIONS_1 | _FUNCTIONS_2))})",
    )


def _describe(node: ast.AST) -> str:
    kinds = {
        ast.Attribute: "an attribute",
        ast.Subscript: "a subscript",
        ast.Compare: "a comparison",
        ast.Lambda: "a lambda",
        ast.IfExp: "a conditional",
        ast.Call: "this call",
        ast.BoolOp: "and/or",
        ast.JoinedStr: "a string",
        ast.Constant: "this constant",
        ast.Tuple: "a tuple",
    }
    for kind, words in kinds.items():
        if isinstance(node, kind):
            return words
    if isinstance(node, ast.BinOp):
        return "this operator"
    return "this syntax"


def _depth(node: ast.AST) -> int:
    depth, level = 0, [node]
    while level:
        depth += 1
        level = [child for n in level for child in ast.iter_child_nodes(n)]
    return depth


def _bracket_depth_column(text: str) -> int | None:
    """The column of the first bracket nested deeper than MAX_TARGET_DEPTH: found before parsing,
    because Python's parser stops at 200 levels with a message that names no limit of ours."""
    depth = 0
    for index, char in enumerate(text):
        depth += char in "([{"
        depth -= char in ")]}"
        if depth > MAX_TARGET_DEPTH:
            return index + 1
    return None


def _syntax_column(text: str, error: SyntaxError) -> int:
    """The 1-based column in `text` of a SyntaxError (its line and offset; no offset: the end)."""
    if not error.offset or error.offset < 1 or not error.lineno:
        return len(text) + 1
    lines = text.split("\n")
    return sum(len(line) + 1 for line in lines[: error.lineno - 1]) + error.offset


VARIABLES = {2: ("x", "y"), 3: ("x", "y", "z")}  # a target's variables, by the dimensions it spans


def parse_target(text: str, dims: int = 2) -> ast.Expression:
    """The checked tree of `text`, a function of (x, y), or of (x, y, z) where dims is 3; a
    TargetError names the problem and its column."""
    if not isinstance(text, str) or not text.strip():
        raise TargetError(f"a target must be a non-empty expression in {' and '.join(VARIABLES[dims])}")
    if len(text) > MAX_TARGET_LENGTH:
        raise TargetError(f"a target must be at most {MAX_TARGET_LENGTH} characters (got {len(text)})")
    deep = _bracket_depth_column(text)
    if deep is not None:
        raise _fail(text, deep, f"parentheses are nested more than {MAX_TARGET_DEPTH} levels deep")
    spelled, origin = _carets_as_powers(text)
    lead = len(spelled) - len(spelled.lstrip())
    origin = origin[lead:]  # by offset in the stripped text that Python parses
    try:
        tree = ast.parse(spelled.strip(), mode="eval")
    except SyntaxError as error:
        if "null bytes" in (error.msg or ""):
            raise _fail(text, None, "it contains a NUL character") from None
        offset = min(_syntax_column(spelled.strip(), error) - 1, len(origin) - 1)
        raise _fail(text, origin[offset] + 1, error.msg or "invalid syntax") from None
    except ValueError:  # a NUL character, on some Python versions
        raise _fail(text, None, "it contains a NUL character") from None
    except (RecursionError, MemoryError):
        raise _fail(text, None, "it is nested too deeply") from None
    if _depth(tree) > MAX_TARGET_DEPTH:
        raise _fail(text, None, f"it is nested more than {MAX_TARGET_DEPTH} levels deep")
    # ast's columns count UTF-8 bytes: the map is spread over each character's bytes for _check
    in_bytes = [origin[i] for i, char in enumerate(spelled.strip()) for _ in char.encode("utf-8", "surrogatepass")]
    _check(tree, text, in_bytes + [origin[-1]], VARIABLES[dims])
    return tree


def _integer_exponent(node: ast.AST) -> int | None:
    """A constant whole-number exponent (2, -1, 3.0), else None."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -1 if isinstance(node.op, ast.USub) else 1
        node = node.operand
    if isinstance(node, ast.Constant):
        value = float(node.value)
        if value.is_integer() and abs(value) < 2**31:
            return sign * int(value)
    return None


def _power_to_slang(base: ast.AST, exponent: ast.AST) -> str:
    # SPIR-V's pow is undefined for a negative base (NaN on NVIDIA), and Slang's forward
    # derivative of it was wrong there on lavapipe: whole-number powers multiply instead
    # (powInteger, shaders/truth/targets.slang), exactly, as numpy does for x**2 with x < 0.
    n = _integer_exponent(exponent)
    if n is not None:
        return f"powInteger({_to_slang(base)}, {n})"
    return f"pow({_to_slang(base)}, {_to_slang(exponent)})"


def _to_slang(node: ast.AST) -> str:
    if isinstance(node, ast.Expression):
        return _to_slang(node.body)
    if isinstance(node, ast.Constant):
        return repr(float(node.value))
    if isinstance(node, ast.Name):
        return repr(CONSTANTS[node.id]) if node.id in CONSTANTS else f"p.{node.id}"
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Pow):
            return _power_to_slang(node.left, node.right)
        return f"({_to_slang(node.left)} {_BINARY[type(node.op)]} {_to_slang(node.right)})"
    if isinstance(node, ast.UnaryOp):
        return f"({'-' if isinstance(node.op, ast.USub) else '+'}{_to_slang(node.operand)})"
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    if node.func.id == "pow":
        return _power_to_slang(*node.args)
    return f"{node.func.id}({', '.join(_to_slang(a) for a in node.args)})"


def target_to_slang(text: str, dims: int = 2) -> str:
    return _to_slang(parse_target(text, dims))


def _to_numpy(node: ast.AST, point: dict[str, np.ndarray]) -> np.ndarray:
    if isinstance(node, ast.Expression):
        return _to_numpy(node.body, point)
    if isinstance(node, ast.Constant):
        return np.full_like(point["x"], float(node.value))
    if isinstance(node, ast.Name):
        return np.full_like(point["x"], CONSTANTS[node.id]) if node.id in CONSTANTS else point[node.id]
    if isinstance(node, ast.BinOp):
        a, b = _to_numpy(node.left, point), _to_numpy(node.right, point)
        if isinstance(node.op, ast.Pow):
            return np.power(a, b)
        return {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}[_BINARY[type(node.op)]](a, b)
    if isinstance(node, ast.UnaryOp):
        value = _to_numpy(node.operand, point)
        return -value if isinstance(node.op, ast.USub) else value
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    return _NUMPY[node.func.id](*(_to_numpy(a, point) for a in node.args))


def target_to_numpy(text: str, dtype=np.float64, dims: int = 2) -> Callable[..., np.ndarray]:
    """f(x, y), or f(x, y, z) where dims is 3, in numpy."""
    tree = parse_target(text, dims)

    def evaluate(x: np.ndarray, y: np.ndarray, z: np.ndarray | None = None) -> np.ndarray:
        point = {"x": np.asarray(x, dtype=dtype), "y": np.asarray(y, dtype=dtype)}
        if z is not None:
            point["z"] = np.asarray(z, dtype=dtype)
        with np.errstate(all="ignore"):
            return _to_numpy(tree, point)

    return evaluate


PRESET_FILE = asset("targets.json")


def target_presets() -> list[tuple[str, list[str]]]:
    """(name, expressions) of the presets in assets/targets.json; ones that fail the grammar are
    left out (the file is the project's own, and tested)."""
    try:
        entries = json.loads(PRESET_FILE.read_text(encoding="utf-8"))["presets"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    presets = []
    for entry in entries:
        try:
            for text in entry["targets"]:
                parse_target(text)
        except (UserError, KeyError, TypeError):
            continue
        presets.append((str(entry["name"]), list(entry["targets"])))
    return presets
