"""`visual-trainer-bench` (the installed command) and `python -m app.bench` (a checkout): the
training-speed benchmark (app/bench/speed.py), or, with a tool's name first (app/bench/tools.py),
that tool with the options after it. One command for all of them, because a pip-installed app has
no module named `app`: `python -m app.bench.photo` works in a checkout only, the command everywhere."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from .tools import TOOLS


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in TOOLS:
        module = importlib.import_module(f".{TOOLS[argv[0]][0]}", __package__)
        return module.main(argv[1:])
    from .speed import main as speed

    return speed(argv)
