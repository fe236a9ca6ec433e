"""Ctrl+C held while native code runs: a KeyboardInterrupt inside a native module's set-up aborted
the process (SlangPy's nanobind), was lost or made it exit by SIGINT after all (Ray's Cython), and
one inside ray.init crashed its exit. Held, it is raised as soon as that code returns."""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import signal
import sys
import threading
from collections.abc import Iterator

NATIVE_PACKAGES = ("numpy", "slangpy", "imgui_bundle", "ray", "optuna", "tensorboardX")


@contextlib.contextmanager
def ctrl_c_deferred() -> Iterator[None]:
    """Ctrl+C pressed inside the block is raised as the block ends (outside the main thread, where
    no handler can be set, the block runs as it is)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed = []
    previous = signal.signal(signal.SIGINT, lambda *_: pressed.append(True))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if pressed:
        raise KeyboardInterrupt


class _HeldImports(importlib.abc.MetaPathFinder):
    """Imports `packages` (with everything their own import pulls in) under ctrl_c_deferred."""

    def __init__(self, packages: tuple[str, ...]):
        self.packages = packages

    def find_spec(self, name, path=None, target=None):
        if name not in self.packages:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            with ctrl_c_deferred():
                run(module)

        spec.loader.exec_module = exec_module
        return spec


def hold_ctrl_c_while_importing(packages: tuple[str, ...] = NATIVE_PACKAGES) -> None:
    """From now on, the first import of each of `packages` holds Ctrl+C until it is done."""
    if not any(isinstance(finder, _HeldImports) for finder in sys.meta_path):
        sys.meta_path.insert(0, _HeldImports(packages))
