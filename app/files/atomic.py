"""Files that appear whole or not at all: each is written to a temporary name beside its target,
then renamed over it (a rename within a folder is atomic). A crash or a full disk mid-way
leaves the previous file, if any, and no half-written one. A folder of files is staged the same
way, as a temporary folder beside it."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path


def temporary_beside(path: Path) -> Path:
    """A hidden name in the target's folder (the rename must not cross file systems), with the
    target's extension: sgl picks the image format of a screenshot from it."""
    return path.with_name(f".{path.stem}.partial-{os.getpid()}{path.suffix}")


def write_synced(path: Path, data: bytes) -> None:
    """Writes `data` to `path` and waits until it is on disk, so that a rename that makes it
    visible never shows an empty or partial file after a crash."""
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def write_staged(path: Path, data: bytes) -> Path:
    """Writes `data` under a temporary name beside `path` and returns that name; the caller
    renames it into place (os.replace) or removes it. On an OSError nothing is left."""
    temporary = temporary_beside(path)
    try:
        write_synced(temporary, data)
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


def made_whole(path: str | Path, make) -> None:
    """`make(temporary)` writes the file under a temporary name beside `path` (with its
    extension), which is then renamed into place: whoever watches for `path` never reads half of
    it. On any error nothing is left, and the error propagates."""
    path = Path(path)
    temporary = temporary_beside(path)
    try:
        make(temporary)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


@contextlib.contextmanager
def staged_folder(folder: Path) -> Iterator[Path]:
    """A temporary folder for `folder`'s files: when the block ends without an error they are
    moved into `folder` (made, with its parents, where missing); otherwise nothing is left."""
    home = folder
    while not home.is_dir() and home.parent != home:  # the nearest folder that exists
        home = home.parent
    staging = home / temporary_beside(folder).name  # on the same file system as `folder`
    staging.mkdir()
    try:
        yield staging
        if folder.is_dir():
            for item in staging.iterdir():
                os.replace(item, folder / item.name)
        else:
            folder.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging, folder)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
