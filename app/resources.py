"""Where the app's data lives: the Slang shaders and the assets (presets, target presets, images).
In an installed wheel shaders/ and assets/ travel inside the package (pyproject.toml); in a
checkout they are the repository's, beside app/. Both are found from the package itself, so the
app runs from any folder; each gradient path's own Slang is in app/kernels/paths/<name>/."""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

# "slang_visual_trainer" when installed, "app" when run from a checkout (`python -m app`).
ROOT_PACKAGE = __name__.rpartition(".")[0]
DATA_DIRS = ("shaders", "assets")


@functools.cache
def data_dir(name: str) -> Path:
    """The folder `name` ("shaders" or "assets") as a real path (Slang's include paths and the
    image readers need one: a wheel is installed unzipped, so it always is)."""
    if name not in DATA_DIRS:
        raise ValueError(f"unknown data folder {name!r}")
    package = Path(str(resources.files(ROOT_PACKAGE)))
    for folder in (package / name, package.parent / name):  # installed, then a checkout
        if folder.is_dir():
            return folder
    raise FileNotFoundError(f"the app's {name}/ folder is missing: looked in {package} and beside it")


def shader_dir() -> Path:
    return data_dir("shaders")


def slang_include_paths() -> list[Path]:
    """The roots every `#include "folder/file.slang"` starts from: shaders/ (what the gradient
    paths share, a folder a role: common/, model/, truth/, views/, ...) and the package's kernels/
    (each path's own, paths/<name>/). A file includes those of its own folder by name."""
    return [shader_dir(), Path(str(resources.files(ROOT_PACKAGE))) / "kernels"]


def asset(*parts: str) -> Path:
    """A file or folder under assets/."""
    return data_dir("assets").joinpath(*parts)


def module_command(module: str) -> list[str]:
    """`python -m` arguments that run one of the app's own modules ("rebuild", "bench.startup",
    or "" for the app itself) in a child process, under whichever name the package has."""
    return ["-m", f"{ROOT_PACKAGE}.{module}" if module else ROOT_PACKAGE]


def import_root() -> Path:
    """A folder that makes ROOT_PACKAGE importable as a child's working directory: the
    checkout for `app`, anywhere for the installed package (site-packages is on every path)."""
    return Path(str(resources.files(ROOT_PACKAGE))).parent
