"""Target functions as small expressions in x and y, checked once and compiled two ways:
to Slang source for the GPU kernels and to a numpy function for references and tests."""

from __future__ import annotations

import ast
from typing import Callable

import numpy as np

from app.errors import UserError

TUTORIAL_TARGETS = ["(x + y) / (1 + y*y)", "2*x + y", "0.5*x*x + 1.2*y", "x + 0.5*y*y"]

_FUNCTIONS_1 = {"sin", "cos", "tan", "exp", "log", "sqrt", "abs"}
_FUNCTIONS_2 = {"pow", "min", "max"}
_NUMPY = {"sin": np.sin, "cos": np.cos, "tan": np.tan, "exp": np.exp, "log": np.log,
          "sqrt": np.sqrt, "abs": np.abs, "pow": np.power, "min": np.minimum, "max": np.maximum}
_BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}


def _check(node: ast.AST, text: str) -> None:
    """Accepts numbers, x, y, + - * /, ** (as pow), unary +/-, parentheses and the listed functions."""
    if isinstance(node, ast.Expression):
        return _check(node.body, text)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return
    if isinstance(node, ast.Name):
        if node.id not in ("x", "y"):
            raise UserError(f"target {text!r}: unknown name {node.id!r} (use x and y)")
        return
    if isinstance(node, ast.BinOp) and (type(node.op) in _BINARY or isinstance(node.op, ast.Pow)):
        _check(node.left, text)
        return _check(node.right, text)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _check(node.operand, text)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        name = node.func.id
        arity = 1 if name in _FUNCTIONS_1 else 2 if name in _FUNCTIONS_2 else None
        if arity is None:
            raise UserError(f"target {text!r}: unknown function {name!r}")
        if len(node.args) != arity:
            raise UserError(f"target {text!r}: {name} takes {arity} argument(s)")
        for arg in node.args:
            _check(arg, text)
        return
    raise UserError(f"target {text!r}: unsupported syntax")


MAX_TARGET_LENGTH = 500   # characters: far more than any formula a user types...
MAX_TARGET_DEPTH = 40     # ...and its nesting, which bounds the recursion of the parser and the checks


def _depth(node: ast.AST) -> int:
    depth, level = 0, [node]
    while level:
        depth += 1
        level = [child for n in level for child in ast.iter_child_nodes(n)]
    return depth


def parse_target(text: str) -> ast.Expression:
    if not isinstance(text, str) or not text.strip():
        raise UserError("a target must be a non-empty expression in x and y")
    if len(text) > MAX_TARGET_LENGTH:
        raise UserError(f"a target must be at most {MAX_TARGET_LENGTH} characters (got {len(text)})")
    shown = text if len(text) <= 60 else text[:57] + "..."
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError):  # ValueError: a NUL character
        raise UserError(f"target {shown!r} is not a valid expression") from None
    except (RecursionError, MemoryError):
        raise UserError(f"target {shown!r} is nested too deeply") from None
    if _depth(tree) > MAX_TARGET_DEPTH:
        raise UserError(f"target {shown!r} is nested more than {MAX_TARGET_DEPTH} levels deep")
    _check(tree, shown)
    return tree


def _to_slang(node: ast.AST) -> str:
    if isinstance(node, ast.Expression):
        return _to_slang(node.body)
    if isinstance(node, ast.Constant):
        return repr(float(node.value))
    if isinstance(node, ast.Name):
        return f"p.{node.id}"
    if isinstance(node, ast.BinOp):
        left, right = _to_slang(node.left), _to_slang(node.right)
        if isinstance(node.op, ast.Pow):
            return f"pow({left}, {right})"
        return f"({left} {_BINARY[type(node.op)]} {right})"
    if isinstance(node, ast.UnaryOp):
        return f"({'-' if isinstance(node.op, ast.USub) else '+'}{_to_slang(node.operand)})"
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    return f"{node.func.id}({', '.join(_to_slang(a) for a in node.args)})"


def target_to_slang(text: str) -> str:
    return _to_slang(parse_target(text))


def _to_numpy(node: ast.AST, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if isinstance(node, ast.Expression):
        return _to_numpy(node.body, x, y)
    if isinstance(node, ast.Constant):
        return np.full_like(x, float(node.value))
    if isinstance(node, ast.Name):
        return x if node.id == "x" else y
    if isinstance(node, ast.BinOp):
        a, b = _to_numpy(node.left, x, y), _to_numpy(node.right, x, y)
        if isinstance(node.op, ast.Pow):
            return np.power(a, b)
        return {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}[_BINARY[type(node.op)]](a, b)
    if isinstance(node, ast.UnaryOp):
        value = _to_numpy(node.operand, x, y)
        return -value if isinstance(node.op, ast.USub) else value
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    return _NUMPY[node.func.id](*(_to_numpy(a, x, y) for a in node.args))


def target_to_numpy(text: str, dtype=np.float64) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    tree = parse_target(text)

    def evaluate(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=dtype)
        y = np.asarray(y, dtype=dtype)
        with np.errstate(all="ignore"):
            return _to_numpy(tree, x, y)

    return evaluate


def grid_centres(domain, grid: int) -> tuple[np.ndarray, np.ndarray]:
    """x and y of the G x G cell centres of `domain`, each (G, G) indexed [j, i], j along y."""
    x0, x1, y0, y1 = domain
    xs = x0 + (np.arange(grid) + 0.5) / grid * (x1 - x0)
    ys = y0 + (np.arange(grid) + 0.5) / grid * (y1 - y0)
    return np.meshgrid(xs, ys)


def check_finite(targets, domain, grid: int) -> None:
    """Raises UserError naming the first target that is NaN or infinite somewhere on the grid's
    cell centres or the domain's corners, evaluated in float32 as the GPU does (so that a domain
    wide enough to overflow is caught too): such a truth can't be learned, and training on it
    would only report a non-finite loss."""
    x, y = grid_centres(domain, grid)
    x = np.concatenate([x.ravel(), [domain[0], domain[1], domain[0], domain[1]]])
    y = np.concatenate([y.ravel(), [domain[2], domain[2], domain[3], domain[3]]])
    for k, text in enumerate(targets):
        values = np.broadcast_to(target_to_numpy(text, np.float32)(x, y), x.shape)
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            i = bad[0]
            raise UserError(f"target f{k + 1} = {text!r} is {values[i]} at x = {x[i]:.4g}, y = {y[i]:.4g}: "
                            f"a target must be finite over the whole domain")
