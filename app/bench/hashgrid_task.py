"""The hash-grid benchmark's task, shared by the app's row and PyTorch's (torch_hashgrid.py): the
procedural photo at PHOTO_SIZE as an image target, a hash grid of 16 levels of 2 features with
2^19-entry tables (tiny-cuda-nn's image-fitting settings otherwise) and a 64-64 ReLU MLP; the
`hashgrid-tcnn` rows take tiny-cuda-nn's own mlp_learning_an_image config (2^15, batch 2^18)."""

from __future__ import annotations

import dataclasses
import functools
import tempfile
from pathlib import Path

import numpy as np

from ..model.hashgrid import GridSpec
from ..truth import image_truth
from .photo import landscape

PHOTO_SIZE = 1024
PHOTO_SEED = 1
HIDDEN = [64, 64]
GRID_FIELDS = dict(
    encoding="hashgrid",
    grid_levels=16,
    grid_features=2,
    grid_log2_size=19,
    grid_base_resolution=16,
    grid_level_scale=1.5,
)
GRID = GridSpec(levels=16, features=2, log2_size=19, base_resolution=16, per_level_scale=1.5, hashed=True)
TCNN_LOG2_SIZE = 15  # tiny-cuda-nn's samples/mlp_learning_an_image config: 2^15-entry tables


def grid(log2_size: int = GRID.log2_size) -> GridSpec:
    """The task's grid with 2^log2_size-entry tables."""
    return dataclasses.replace(GRID, log2_size=log2_size)


@functools.lru_cache(maxsize=2)
def photo_path(size: int = PHOTO_SIZE) -> Path:
    """The photo as a PNG in a temporary folder of this process (written once)."""
    import slangpy as spy

    path = Path(tempfile.mkdtemp(prefix="visual-trainer-photo-")) / f"landscape-{size}.png"
    spy.Bitmap(landscape(size, PHOTO_SEED)).write(str(path))
    return path


@functools.lru_cache(maxsize=2)
def _loaded(size: int) -> tuple[dict, np.ndarray]:
    return image_truth.load(photo_path(size))


def photo_pixels(size: int = PHOTO_SIZE) -> np.ndarray:
    """(H, W, 3) float32 in [0, 1]."""
    return _loaded(size)[1]


def app_fields(size: int = PHOTO_SIZE, log2_size: int = GRID.log2_size) -> dict:
    """The app's Config fields for the task (the photo as its image target)."""
    info = _loaded(size)[0]
    domain = image_truth.aspect_domain(info["width"], info["height"])
    fields = dict(GRID_FIELDS, grid_log2_size=log2_size)
    return dict(fields, hidden=list(HIDDEN), activation="relu", image=info, domain=domain)
