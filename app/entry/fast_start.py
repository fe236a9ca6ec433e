"""For the app's own processes only (the window, headless runs, the start-up benchmark's
children); library modules never import this."""

from __future__ import annotations

import sys


def skip_torch() -> None:
    """SlangPy's native module imports PyTorch at load when it is installed: 2.6 s of the 3.9 s
    from process start to a first trained step on the H200 machine. The app never hands SlangPy
    a torch tensor, so its processes tell Python that torch is absent before SlangPy loads (a
    None entry in sys.modules makes `import torch` raise ImportError, as if not installed)."""
    if "slangpy" not in sys.modules:
        sys.modules.setdefault("torch", None)
