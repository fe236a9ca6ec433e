"""What the benchmarks share: their common options (--json, --device) and how they write their
figures to JSON (atomically, so a run cut short never leaves half a file)."""

from __future__ import annotations

import argparse
import json
import sys

from ..files.atomic import write_atomic
from . import tools

DEVICES = ("auto", "vulkan", "cuda", "d3d12", "metal")


def parser(module: str, doc: str, epilog: str | None = None) -> argparse.ArgumentParser:
    """A parser for the benchmark module `app.<module>`, named by the command that runs it
    (visual-trainer-bench and its tool's name: app/bench/tools.py), with the shared options,
    described by the first paragraph of the benchmark's docstring `doc` that is not its usage."""
    paragraphs = (" ".join(part.split()) for part in doc.split("\n\n"))
    description = next((text for text in paragraphs if text and not text.startswith("python -m")), None)
    result = argparse.ArgumentParser(
        prog=tools.prog(module),
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter if epilog else argparse.HelpFormatter,
    )
    result.add_argument("--json", metavar="PATH", help="also write the figures to this file")
    result.add_argument("--device", default="auto", choices=DEVICES)
    return result


def write_json(path: str | None, figures: dict) -> None:
    """Writes `figures` to `path` (nothing when None); a path that cannot be written is one line
    on stderr and exit code 2 (the figures were printed already)."""
    if not path:
        return
    try:
        write_atomic(path, (json.dumps(figures, indent=2) + "\n").encode("utf-8"))
    except OSError as error:
        print(f"error: could not write {path}: {error.strerror or error}", file=sys.stderr)
        raise SystemExit(2) from None
