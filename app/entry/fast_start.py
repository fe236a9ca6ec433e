"""For the app's own processes only (the window, headless runs, the start-up benchmark's
children); library modules never import this."""

from __future__ import annotations

import sys


def skip_torch() -> None:
    """SlangPy's native module imports PyTorch at load when it is installed, most of a warm start
    (docs/benchmarks.md, 'Start-up and a new architecture'). The app never hands SlangPy a torch
    tensor, so its processes tell Python that torch is absent before SlangPy loads (a None entry
    in sys.modules makes `import torch` raise ImportError, as if not installed)."""
    if "slangpy" not in sys.modules:
        sys.modules.setdefault("torch", None)
