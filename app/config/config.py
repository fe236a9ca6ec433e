"""One typed configuration for a training run: the table of its fields, each carrying its Spec
(app/config/spec.py: kind, range or choices, option, widget), from which the parser, the --resume
overrides and validation follow; and the sections the components below take (sections.py). Hot
fields may change between any two steps; structural ones (kinds STRUCTURE, TRUTH) need a rebuild.
Adding a field: docs/extending.md, "A Config field"."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..datasets import DataSettings
from ..datasets.source import MAX_ROWS, check_dataset
from ..model import activations, derivative_loss, encodings, half_range, hashgrid, optimizers
from ..model.encodings import EncodingSettings
from ..model.losses import LossSettings
from ..model.optimizers import OptimizerSettings
from ..resources import asset
from ..truth import space
from ..truth.image_truth import check_image
from ..truth.sdf_truth import check_normal_weight, check_sdf
from ..truth.settings import TruthSettings
from ..truth.targets import TUTORIAL_TARGETS
from .checks import (
    MAX_FREQUENCIES,
    check_domain,
    check_hidden,
    check_slang_target,
    check_targets,
    check_z_range,
)
from .help_texts import (
    DATASET_HELP,
    DIMS_HELP,
    FEATURES_HELP,
    FREQUENCIES_HELP,
    HIDDEN_HELP,
    MATMUL_HELP,
    SDF_HELP,
    TARGET_FILE_HELP,
    TARGET_HELP,
)
from .sections import Section, field_names
from .spec import HOT, STRUCTURE, TRUTH, Between, Choice, Flag, Fraction, Positive, Subset, Whole, spec_field, spec_of

ACTIVATIONS = tuple(activations.ACTIVATIONS)
ENCODINGS = tuple(encodings.ENCODINGS)
FEATURES = tuple(encodings.FEATURES)
REGULARIZATIONS = ("none", "l1", "l2")
PRECISIONS = ("float", "half")
MATMULS = ("auto", "simt")  # auto: tensor cores where the device and the network allow
OPTIMIZERS = tuple(optimizers.OPTIMIZERS)
PRESET_DIR = asset("presets")  # the presets' JSON files (app/config/files.py reads them)


def _choice_flag(name: str) -> Flag:
    return Flag(name, "{label}: {choices} (default {default})")


def _grid_flag(name: str, what: str, metavar: str, parse: str | None = None) -> Flag:
    return Flag(name, f"hashgrid and densegrid encodings: {what} (default {{default}})", metavar, parse=parse)


def _read_by_encoding(field: str) -> Callable[[Any], bool]:
    """Whether a config's encoding reads `field` (the Network panel shows the field only then)."""
    return lambda config: field in encodings.ENCODINGS[config.encoding].fields


@dataclass(frozen=True)
class Config:
    """The table: each field's default, kind, label, check, command-line option and widget. Frozen:
    a change is a new Config (`replace`), checked whole."""

    # fmt: off
    hidden: list[int] = spec_field(
        [16], STRUCTURE, "hidden", check_hidden, Flag("--hidden", HIDDEN_HELP, "W,W", parse="widths"),
        in_network_file=True,
    )
    activation: str = spec_field(
        "leaky_relu", STRUCTURE, "activation", Choice(ACTIVATIONS), _choice_flag("--activation"),
        widget="combo", in_network_file=True,
    )
    output_activation: str = spec_field(
        "identity", STRUCTURE, "output activation", Choice(ACTIVATIONS), _choice_flag("--output-activation"),
        widget="combo", in_network_file=True,
    )
    encoding: str = spec_field(
        "poly2", STRUCTURE, "encoding", Choice(ENCODINGS), _choice_flag("--encoding"),
        widget="combo", in_network_file=True,
    )
    frequencies: int = spec_field(
        4, STRUCTURE, "frequencies", Whole(1, MAX_FREQUENCIES), Flag("--frequencies", FREQUENCIES_HELP, "K"),
        widget="slider", shown=_read_by_encoding("frequencies"), in_network_file=True,
    )
    features: list[str] = spec_field(
        ["x", "y"], STRUCTURE, "features", Subset(FEATURES),
        Flag("--features", FEATURES_HELP, "F,F", parse="names"),
        widget="checks", shown=_read_by_encoding("features"), in_network_file=True,
    )
    grid_levels: int = spec_field(
        16, STRUCTURE, "levels", Whole(1, 32), _grid_flag("--grid-levels", "resolution levels L, 1-32", "L"),
        widget="slider", shown=_read_by_encoding("grid_levels"), in_network_file=True,
    )
    grid_features: int = spec_field(
        2, STRUCTURE, "features", Whole(1, 8), _grid_flag("--grid-features", "features per level F, 1-8", "F"),
        widget="slider", shown=_read_by_encoding("grid_features"), in_network_file=True,
    )
    grid_log2_size: int = spec_field(
        15, STRUCTURE, "table size (log2)", Whole(8, 24),
        _grid_flag("--grid-table", "log2 of the entries of a hashed level's table, T, 8-24", "T"),
        widget="slider", shown=_read_by_encoding("grid_log2_size"), in_network_file=True,
    )
    grid_base_resolution: int = spec_field(
        16, STRUCTURE, "base resolution", Whole(1, 4096),
        _grid_flag("--grid-base-resolution", "cells across the domain at the coarsest level", "N"),
        in_network_file=True,
    )
    grid_level_scale: float = spec_field(
        1.5, STRUCTURE, "per-level scale", hashgrid.check_level_scale,
        _grid_flag("--grid-level-scale", "each level's resolution over the one before, 1-4", "B", parse="real"),
        in_network_file=True,
    )
    precision: str = spec_field(
        "float", STRUCTURE, "precision", Choice(PRECISIONS), _choice_flag("--precision"), widget="combo"
    )
    matmul: str = spec_field("auto", STRUCTURE, "matmul", Choice(MATMULS), Flag("--matmul", MATMUL_HELP))
    targets: list[str] = spec_field(
        list(TUTORIAL_TARGETS), TRUTH, "targets", check_targets,
        Flag("--target", TARGET_HELP, "EXPR", parse="text", repeat=True), in_network_file=True,
    )
    # The ground truth from a user's Slang file instead of `targets` (kept for going back):
    # {"file": path, "source": its text, "count": its TARGET_COUNT}, read and compiled by
    # app/gpu/target_probe.py. The text itself is kept, so a summary.json reproduces the run.
    # --target-file names the file; app/entry/cli.py compiles it into this field.
    slang_target: dict | None = spec_field(
        None, TRUTH, "slang_target", check_slang_target,
        Flag("--target-file", TARGET_FILE_HELP, "FILE.slang", parse="text", dest="target_file"),
        in_network_file=True,
    )
    # Points instead of formulas: a generator or a CSV (app/datasets/source.py says what the entry
    # holds); --dataset names one, and app/entry/cli.py reads a CSV into this field.
    dataset: dict | None = spec_field(
        None, TRUTH, "dataset", check_dataset,
        Flag("--dataset", DATASET_HELP, "NAME|PATH.csv", parse="text", dest="dataset_source"),
        in_network_file=True,
    )
    # A signed distance field instead (app/truth/sdf_truth.py): the shape's spec, a built-in's name or
    # a file's path; one output, the distance, negative inside.
    sdf: str | None = spec_field(
        None, TRUTH, "sdf", check_sdf,
        Flag("--sdf", SDF_HELP, "SHAPE", parse="text"),
        in_network_file=True,
    )
    # How a generator makes its points and how they split; live changes (app/train/point_data.py)
    points: int = spec_field(
        500, HOT, "points", Whole(2, MAX_ROWS),
        Flag("--points", f"points a generator makes, 2-{MAX_ROWS:,} (default {{default}})", "N"),
    )
    noise: float = spec_field(
        0.0, HOT, "noise", Between(0.0, 0.5), Flag("--noise", "a generator's noise, 0-0.5 (default {default})", "F")
    )
    train_ratio: float = spec_field(
        0.5, HOT, "train ratio", Between(0.1, 0.9),
        Flag("--train-ratio", "the share of the points that trains, 0.1-0.9 (default {default})", "F"),
    )
    data_seed: int = spec_field(
        0, HOT, "data seed", Whole(0, 2**32 - 1),
        Flag("--data-seed", "the seed of a generator's points and of the split (default {default})", "S"),
    )
    regularization: str = spec_field(
        "none", HOT, "regularization", Choice(REGULARIZATIONS),
        Flag("--regularization", "{label} of the weights, in the loss: {choices} (default {default})"),
        widget="combo",
    )
    reg_rate: float = spec_field(
        0.0, HOT, "regularization rate", Between(0.0, 10.0),
        Flag("--reg-rate", "regularization rate, 0-10 (default {default})", "R"),
    )
    # Training on derivatives (app/model/derivative_loss.py): the weight of the Sobolev term on the
    # input gradient's error, and of the eikonal term (|grad f| - 1)^2. Either above 0 trains on a
    # kernel that differentiates the network's input gradient by its parameters.
    grad_weight: float = spec_field(
        0.0, HOT, "gradient weight", Between(0.0, 100.0),
        Flag("--grad-weight", "Sobolev training: weight of the input gradient's squared error against the "
             "truth's, 0-100 (default {default})", "W"),
    )
    eikonal: float = spec_field(
        0.0, HOT, "eikonal weight", Between(0.0, 100.0),
        Flag("--eikonal", "weight of the eikonal term (|grad f| - 1)^2, for distance fields, 0-100 "
             "(default {default})", "W"),
    )
    normal_weight: float = spec_field(
        0.0, HOT, "normal weight", Between(0.0, 100.0),
        Flag("--normal-weight", "weight of the normal alignment |grad f - n|^2 at the boundary points of an --sdf "
             "shape with normals (a built-in, an SVG, a CSV), 0-100 (default {default})", "W"),
    )
    # An image as the ground truth instead (app/truth/image_truth.py): {"file", "width", "height",
    # "channels", "sha256"}, its pixels read from the file. --image names the file; app/entry/cli.py
    # reads it into this field (and the domain that keeps its aspect ratio).
    image: dict | None = spec_field(
        None, TRUTH, "image", check_image,
        Flag("--image", "an image as the ground truth: a PNG or JPEG file, one output per channel", "PATH",
             parse="text", dest="image_file"),
        in_network_file=True,
    )
    domain: list[float] = spec_field(  # x0, x1, y0, y1
        [-1.0, 1.0, -1.0, 1.0], HOT, "domain", check_domain, in_network_file=True
    )
    # Functions of (x, y, z) instead (app/truth/space.py says what they take): z spans z_range.
    dims: int = spec_field(
        2, TRUTH, "dimensions", Whole(2, 3), Flag("--dims", DIMS_HELP, "D"), in_network_file=True
    )
    z_range: list[float] = spec_field([-1.0, 1.0], HOT, "z range", check_z_range, in_network_file=True)
    optimizer: str = spec_field(
        "adam", HOT, "optimizer", Choice(OPTIMIZERS), _choice_flag("--optimizer"), widget="combo"
    )
    lr: float = spec_field(0.01, HOT, "learning rate", Positive(), Flag("--lr", "learning rate (default {default})"))
    # The optimizers' hyper-parameters; which optimizer uses which is app/model/optimizers.py's to say.
    beta1: float = spec_field(
        0.9, HOT, "beta1", Fraction(),
        Flag("--beta1", "first-moment decay, or momentum; used by {used_by} (default {default})", "B1"),
    )
    beta2: float = spec_field(
        0.999, HOT, "beta2", Positive(below=1.0),
        Flag("--beta2", "second-moment decay; used by {used_by} (default {default})", "B2"),
    )
    epsilon: float = spec_field(
        1e-7, HOT, "epsilon", Positive(),
        Flag("--epsilon", "added to the second moment's root; used by {used_by} (default {default})", "EPS"),
    )
    weight_decay: float = spec_field(
        0.01, HOT, "weight decay", Fraction(),
        Flag("--weight-decay", "decoupled: each step shrinks the weights by lr x this; used by {used_by} "
             "(default {default})", "WD"),
    )
    batch_size: int = spec_field(
        4096, HOT, "batch size", Whole(1, 1 << 26), Flag("--batch-size", "samples a step (default {default})", "B")
    )
    seed: int = spec_field(
        0, HOT, "seed", Whole(0, 2**32 - 1), Flag("--seed", "random seed: initial weights and samples (default {default})")
    )
    eval_grid: int = spec_field(
        64, HOT, "eval grid", Whole(2, 1024), Flag("--eval-grid", "evaluation grid side (default {default})", "G")
    )
    # fmt: on

    # The sections the components take, each built from the fields above of its names; the fields
    # in none (hidden, activations, precision, matmul, batch size, seed) are the config's own.
    optimizer_settings = Section(OptimizerSettings)  # app/model/optimizers.py
    encoding_settings = Section(EncodingSettings)  # app/model/encodings.py; its grid, app/model/hashgrid.py
    loss_settings = Section(LossSettings)  # app/model/losses.py
    truth_settings = Section(TruthSettings)  # app/truth/settings.py
    data_settings = Section(DataSettings)  # app/datasets

    # Shapes and the parameter layout are derived once, in app.kernels.planning.plan_for(config).
    @property
    def output_dim(self) -> int:
        return self.truth_settings.outputs

    def target_labels(self) -> list[str]:
        """What each output learns, as the UI and reports name it."""
        return self.truth_settings.labels()

    def structure(self) -> Structure:
        """The structural fields, frozen: what picks the compiled network (hashable)."""
        return Structure(**{name: _freeze(getattr(self, name)) for name in STRUCTURAL_FIELDS})

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def replace(self, **changes: Any) -> Config:
        return validate(dataclasses.replace(self, **changes))


FIELDS = {field.name: spec_of(field) for field in dataclasses.fields(Config)}
# Each section's fields, by the Config attribute that gives the section
SECTIONS = {
    name: field_names(attribute.cls) for name, attribute in vars(Config).items() if isinstance(attribute, Section)
}
_IN_SECTIONS = [field for fields in SECTIONS.values() for field in fields]
if not set(_IN_SECTIONS) <= set(FIELDS) or len(set(_IN_SECTIONS)) != len(_IN_SECTIONS):
    raise TypeError("each field of a Config section must be a field of the table, in one section alone")
OWN_FIELDS = tuple(name for name in FIELDS if name not in _IN_SECTIONS)  # in no section: the config's own


def fields_of(*kinds: str) -> tuple[str, ...]:
    """The names of the fields of these kinds, in the table's order."""
    return tuple(name for name, spec in FIELDS.items() if spec.kind in kinds)


STRUCTURAL_FIELDS = fields_of(STRUCTURE, TRUTH)
HOT_FIELDS = fields_of(HOT)
# The structural fields as a frozen record, e.g. Structure(hidden=(16,), activation="leaky_relu", ...),
# with the one section they hold whole, the encoding's.
Structure = dataclasses.make_dataclass(
    "Structure",
    [(name, Any) for name in STRUCTURAL_FIELDS],
    frozen=True,
    namespace={"encoding_settings": Section(EncodingSettings)},
)
for _optimizer in optimizers.OPTIMIZERS.values():
    for _hyper in _optimizer.hypers:
        if _hyper.field not in HOT_FIELDS:
            raise TypeError(f"optimizer {_optimizer.name}'s {_hyper.field} must be a hot Config field")


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((key, _freeze(item)) for key, item in value.items()))
    return tuple(_freeze(item) for item in value) if isinstance(value, list) else value


def validate(config: Config) -> Config:
    """`config` checked: a new Config of every field as its check keeps it (a float for a whole
    number, the features in their order), then the checks across fields; a UserError names the
    first problem, in the table's order. `config` itself is left as it was."""
    checked = dataclasses.replace(
        config, **{name: spec.check(spec.label, getattr(config, name)) for name, spec in FIELDS.items()}
    )
    encodings.check_size(checked.encoding_settings, checked.dims)
    half_range.check_half_range(checked.encoding_settings, checked.domain, checked.precision)
    derivative_loss.check_derivative_loss(checked.loss_settings, checked.dataset)
    check_normal_weight(checked.normal_weight, checked.sdf)
    space.check_space(checked.truth_settings, checked.encoding, checked.loss_settings)
    return checked
