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


def parse_target(text: str) -> ast.Expression:
    if not isinstance(text, str) or not text.strip():
        raise UserError("a target must be a non-empty expression in x and y")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        raise UserError(f"target {text!r} is not a valid expression") from None
    _check(tree, text)
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


def target_to_numpy(text: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    tree = parse_target(text)

    def evaluate(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        with np.errstate(all="ignore"):
            return _to_numpy(tree, x, y)

    return evaluate
