"""The gradient paths: each way learnGradient may sum a network's gradients is one folder here,
paths/<name>/: its object (path.py), its layout, its generator and its .slang files, with a
README.md (base.py says what a path declares). PATHS lists them in the order they are tried: the
first that fits a network takes it, so group tiles, which fit every network, come last."""

from __future__ import annotations

from ..plan import NetworkPlan
from .base import GradientPath, PathRequest
from .fused.path import FUSED
from .group.path import GROUP
from .lanes.path import LANES
from .pairs.path import PAIRS
from .thread.path import THREAD
from .tiles.path import TILES

PATHS: tuple[GradientPath, ...] = (PAIRS, THREAD, FUSED, LANES, TILES, GROUP)
_BY_NAME = {path.name: path for path in PATHS}


def choose_path(request: PathRequest) -> tuple[GradientPath, dict]:
    """The first path that fits (of those that train on derivatives, where the loss has derivative
    terms), and the plan's fields it sets."""
    for path in PATHS:
        if (request.derivatives and not path.derivatives) or (request.point_dim == 3 and not path.points_3d):
            continue
        fields = path.fits(request)
        if fields is not None:
            return path, fields
    raise ValueError(f"no gradient path fits a {request.sizes} network")  # GROUP fits every one


def path_named(name: str) -> GradientPath:
    return _BY_NAME[name]


def path_of(plan: NetworkPlan) -> GradientPath:
    """The path a plan trains on."""
    return _BY_NAME[plan.gradient_path]
