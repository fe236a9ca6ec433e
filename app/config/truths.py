"""Which ground truth a config learns, one at a time: the targets (always there, kept for going
back), or instead a Slang file, an image, a dataset or a shape's signed distance. Setting one
clears the others, and the domain that came with them (an image's, a dataset's, a shape's). Here,
below app/entry and app/ui, so that the command line and the window share the rule."""

from __future__ import annotations

from pathlib import Path

from ..datasets import domain_of
from ..truth.mesh_truth import is_mesh_spec
from ..truth.sdf_truth import sdf_domain
from ..truth.shapes import SILHOUETTE_SUFFIXES
from ..truth.targets import TUTORIAL_TARGETS
from .config import Config

REPLACING_TRUTHS = ("slang_target", "image", "dataset", "sdf")  # the fields that replace the targets
OWN_DOMAIN = {"image", "dataset", "sdf"}  # those that bring a domain of their own
FORMULAS_SHOWN = 40  # characters of edited formulas in a truth's name


def truth_name(config: Config) -> str:
    """What `config` learns, in a few words that tell two truths apart (the loss plot's runs):
    "image grey.png", "shape star", "spiral", "points.csv", "targets.slang", "formulas" (the
    tutorial's) or the edited formulas themselves."""
    if config.dataset:
        return config.dataset.get("generator") or Path(config.dataset["csv"]).name
    if config.image:
        return f"image {Path(config.image['file']).name}"
    if config.sdf:
        return f"shape {Path(config.sdf).name}"
    if config.slang_target:
        return Path(config.slang_target["file"]).name
    if config.targets == TUTORIAL_TARGETS:
        return "formulas"
    text = "; ".join(config.targets)
    return text if len(text) <= FORMULAS_SHOWN else text[: FORMULAS_SHOWN - 3] + "..."


def without_other_truths(config: Config, keep: str) -> Config:
    """`config` with only the truth field `keep` ("targets" or one of REPLACING_TRUTHS): the
    others cleared, and the domain they came with back to the default."""
    others = [name for name in REPLACING_TRUTHS if name != keep and getattr(config, name)]
    if not others:
        return config
    changes = {name: None for name in others}
    if OWN_DOMAIN & set(others):  # their domain was theirs (a silhouette's, say)
        changes["domain"] = list(Config().domain)
    return config.replace(**changes)


def with_dataset(config: Config, source: dict | None) -> Config:
    """`config` with `source` as its dataset and the domain that shows its points; None goes back
    to the formulas (on the domain it had)."""
    if source is None:
        return config.replace(dataset=None)
    return config.replace(dataset=source, domain=domain_of(source))


def with_shape(config: Config, spec: str) -> Config:
    """`config` learning the signed distance to `spec` (a built-in's name or a file's path) alone.
    A silhouette takes its aspect ratio's domain; another shape the formulas' or the shape's before
    it, except a silhouette's, which was its own (the default then)."""
    config = without_other_truths(config, "sdf")
    after_silhouette = config.sdf is not None and Path(config.sdf).suffix.lower() in SILHOUETTE_SUFFIXES
    domain = list(Config().domain) if after_silhouette else config.domain
    dims = 3 if is_mesh_spec(spec) else 2  # a mesh is a shape in 3D, the others in 2D
    return config.replace(sdf=spec, domain=sdf_domain(spec, domain), dims=dims)
