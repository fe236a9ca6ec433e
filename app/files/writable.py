"""Whether an output folder can be written, checked before any training: a run, a race, a sweep
and their TensorBoard folder fail at once on one that can't, in one line."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import UserError


def check_output_dir(path: Path, option: str = "--out", named: str | None = None) -> None:
    """Fails early, before any training, on a folder that can't be written: the nearest folder
    that exists must take a file (one is made there and removed at once: permissions alone miss
    a read-only file system, or /proc, where root may write nothing). `named`: what the message
    calls the output (a file in `path`), else the folder itself."""
    named = str(path) if named is None else named
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        raise UserError(f"cannot write {option} {named!r}: {str(probe)!r} is not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise UserError(f"cannot write {option} {named!r}: no write permission in {str(probe)!r}")
    try:
        with tempfile.NamedTemporaryFile(dir=probe, prefix=".visual-trainer-probe-"):
            pass
    except OSError as error:
        raise UserError(f"cannot write {option} {named!r}: {error.strerror or error} in {str(probe)!r}") from None
