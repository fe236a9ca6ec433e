"""What Help > About says: the version, from the installed package's metadata, and where the README
is. A checkout (or an editable install of one) has README.md beside app/; a wheel holds no docs,
but its metadata keeps the README's text as the package's description, which is written into the
cache folder to be opened."""

from __future__ import annotations

import functools
import importlib
from importlib import metadata
from pathlib import Path

from ..gpu.device import cache_dir
from ..resources import ROOT_PACKAGE, import_root
from .atomic import write_atomic

DISTRIBUTION = "slang-visual-trainer"  # pyproject.toml's project name
README = "README.md"
TITLE = "# Slang Visual Trainer"  # the README's first line: a README.md beside the package is ours


@functools.cache
def version() -> str:
    """The installed package's version; the source's where the app runs uninstalled."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return importlib.import_module(ROOT_PACKAGE).__version__


@functools.cache
def summary() -> str:
    """The package's one-line description (pyproject.toml's)."""
    try:
        return metadata.metadata(DISTRIBUTION)["Summary"] or ""
    except metadata.PackageNotFoundError:
        return ""


def _checkout_readme() -> Path | None:
    path = import_root() / README
    try:
        with path.open(encoding="utf-8") as file:
            return path if file.readline().strip() == TITLE else None
    except OSError:  # no README there: an installed wheel
        return None


def readme() -> Path:
    """The README to open: the checkout's, else the metadata's text written to the cache folder
    (an OSError where neither can be had: no metadata, or a cache folder that refuses it)."""
    found = _checkout_readme()
    if found is not None:
        return found
    try:
        text = metadata.metadata(DISTRIBUTION).get_payload()
    except metadata.PackageNotFoundError:
        raise OSError("the README is neither beside the app nor in an installed package's metadata") from None
    path = cache_dir() / README
    data = text.encode("utf-8")
    if not path.is_file() or path.read_bytes() != data:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, data)
    return path


def readme_shown() -> str:
    """Where the About box says the README is, without writing anything."""
    found = _checkout_readme()
    return str(found) if found is not None else str(cache_dir() / README) + " (from the package's description)"
