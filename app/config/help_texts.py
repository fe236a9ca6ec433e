"""The command-line help of the Config table's options (app/config/config.py): the longer texts,
each with the limits and choices it names taken from where they are defined."""

from __future__ import annotations

from ..datasets.generators import GENERATORS
from ..model import encodings
from ..truth.shapes import BUILTINS
from .checks import MAX_FREQUENCIES, MAX_HIDDEN_LAYERS, MAX_TARGETS, MAX_WIDTH

FEATURES = tuple(encodings.FEATURES)

HIDDEN_HELP = f"hidden layer widths, 1-{MAX_HIDDEN_LAYERS} layers of 1-{MAX_WIDTH} (default {{default}})"
MATMUL_HELP = (
    "auto: half-precision layers multiply on tensor cores where the device has them (Vulkan); simt: always on "
    "the shader cores (default {default})"
)
TARGET_HELP = (
    f"a target function of x and y; repeat for more outputs (1-{MAX_TARGETS}), replacing the default set. "
    "Numbers, x, y, + - * / **, parentheses, sin cos tan exp log sqrt abs pow min max"
)
DIMS_HELP = (
    "3: learn functions of x, y and z (targets may use z; z spans the config's z_range, default -1 to 1; "
    "the raw, poly2 and fourier encodings); 2: of x and y (default {default})"
)
TARGET_FILE_HELP = (
    "ground truth from your own Slang file: "
    "[Differentiable] float target(float2 p, int k) and static const int TARGET_COUNT"
)
FREQUENCIES_HELP = f"Fourier encoding frequencies, 1-{MAX_FREQUENCIES} (default {{default}})"
_FIXED_FEATURES = [
    f"{e.name} is {','.join(e.fixed)}"
    for e in encodings.ENCODINGS.values()
    if isinstance(e, encodings.FeatureEncoding) and e.fixed
]
FEATURES_HELP = (
    f"the Playground's input features, comma-separated: {','.join(FEATURES)} (implies --encoding features; "
    f"{' and '.join(_FIXED_FEATURES)})"
)
SDF_HELP = (
    f"learn a shape's signed distance field (negative inside): {', '.join(BUILTINS)}, A+B (a smooth union), "
    "or an .svg (filled paths), .png/.jpg silhouette (dark is inside) or .csv of boundary points x,y,nx,ny"
)
_CLASSES = ", ".join(name for name, g in GENERATORS.items() if g.classify)
_VALUES = ", ".join(name for name, g in GENERATORS.items() if not g.classify)
DATASET_HELP = (
    f"train on points: {_CLASSES} (two classes), {_VALUES} (regression), or a CSV file "
    "(x, y, then a label column or value columns)"
)
