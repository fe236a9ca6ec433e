"""Files that appear whole or not at all: each is written to a temporary name beside its target,
then renamed over it (a rename within a folder is atomic). A crash or a full disk mid-way
leaves the previous file, if any, and no half-written one."""

from __future__ import annotations

import os
from pathlib import Path


def temporary_beside(path: Path) -> Path:
    """A hidden name in the target's folder (the rename must not cross file systems), with the
    target's extension: sgl picks the image format of a screenshot from it."""
    return path.with_name(f".{path.stem}.partial-{os.getpid()}{path.suffix}")


def write_staged(path: Path, data: bytes) -> Path:
    """Writes `data` under a temporary name beside `path` and returns that name; the caller
    renames it into place (os.replace) or removes it. On an OSError nothing is left."""
    temporary = temporary_beside(path)
    try:
        with open(temporary, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())  # the data is on disk before the rename makes it visible
    except OSError:
        temporary.unlink(missing_ok=True)
        raise
    return temporary


def write_atomic(path: str | Path, data: bytes) -> None:
    """Replaces `path` with `data` in one step (an OSError propagates, nothing is left)."""
    path = Path(path)
    temporary = write_staged(path, data)
    try:
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)
        raise


class Staging:
    """Several files written under temporary names, then all renamed into place together: the
    files of a headless run besides --out appear only once every one of them is written."""

    def __init__(self) -> None:
        self._files: list[tuple[Path, Path]] = []

    def add(self, path: str | Path, data: bytes) -> None:
        path = Path(path)
        self._files.append((write_staged(path, data), path))

    def add_written(self, temporary: Path, path: str | Path) -> None:
        """A file already written under `temporary` (a screenshot saved by the renderer)."""
        self._files.append((Path(temporary), Path(path)))

    def commit(self) -> None:
        for temporary, path in self._files:
            os.replace(temporary, path)
        self._files.clear()

    def discard(self) -> None:
        for temporary, _ in self._files:
            temporary.unlink(missing_ok=True)
        self._files.clear()
