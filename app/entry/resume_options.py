"""The network options given beside --resume, which continues the checkpoint's network and
config: one that describes what the checkpoint already has (`--hidden 32` for a checkpoint of
width 32, its own dataset or image) is accepted and changes nothing; one that would change the
network or its truth is refused in one line naming the checkpoint's value."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from ..config import config as cfg
from ..config.truths import REPLACING_TRUTHS
from ..datasets import describe
from ..errors import UserError
from ..truth import image_truth
from ..truth.slang_file import read_source
from .cli_fields import FLAGGED, NETWORK_OPTIONS, option_dest

TRUTH_FIELDS = ("targets", *REPLACING_TRUTHS)
# What each option sets besides its own field: --features picks the feature encoding.
ALSO_SETS = {"features": ("encoding",)}


def refuse_disagreeing(
    args: argparse.Namespace,
    checkpoint: cfg.Config,
    describe_config: Callable[[argparse.Namespace, cfg.Config], cfg.Config],
) -> None:
    """A UserError for the first network option given that does not agree with `checkpoint`.
    `describe_config(args, base)` is the config options describe on a base (cli_args'), so an
    option is read here exactly as a fresh run reads it."""
    given = [name for name in NETWORK_OPTIONS if getattr(args, option_dest(name)) is not None]
    if not given:
        return
    mine = argparse.Namespace(**vars(args))  # the network options alone, on the checkpoint's config
    for name in cfg.FIELDS:
        if name in FLAGGED and name not in NETWORK_OPTIONS:
            setattr(mine, option_dest(name), None)
    mine.preset = mine.config = mine.target_file = mine.image_file = None
    described = describe_config(mine, checkpoint)
    for name in given:
        if name == "slang_target":
            agrees = _same_slang_file(args.target_file, checkpoint)
        elif name == "image":
            agrees = _same_image(args.image_file, checkpoint)
        else:
            fields = TRUTH_FIELDS if name in TRUTH_FIELDS else (name, *ALSO_SETS.get(name, ()))
            agrees = all(getattr(described, field) == getattr(checkpoint, field) for field in fields)
        if not agrees:
            flag = FLAGGED[name].flag.name
            raise UserError(
                f"{flag} {_text(getattr(args, option_dest(name)))} cannot be combined with --resume: "
                f"{_has(checkpoint, name)}, and --resume continues its network and config"
            )


def _truth_is(checkpoint: cfg.Config, field: str) -> bool:
    return all(not getattr(checkpoint, other) for other in REPLACING_TRUTHS if other != field)


def _same_slang_file(path: str, checkpoint: cfg.Config) -> bool:
    """The checkpoint learns a Slang file of this very text."""
    target = checkpoint.slang_target
    return target is not None and _truth_is(checkpoint, "slang_target") and read_source(path) == target["source"]


def _same_image(path: str, checkpoint: cfg.Config) -> bool:
    """The checkpoint learns this very image file (its path and its contents)."""
    if checkpoint.image is None or not _truth_is(checkpoint, "image"):
        return False
    info, _ = image_truth.load(path)
    return info == checkpoint.image


def _text(value) -> str:
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def _has(checkpoint: cfg.Config, name: str) -> str:
    """What the checkpoint has of `name`, as its option would say it; its truth in words."""
    if name in TRUTH_FIELDS:
        if checkpoint.dataset:
            return f"the checkpoint learns the dataset {describe(checkpoint.dataset)}"
        if checkpoint.image:
            return f"the checkpoint learns the image {checkpoint.image['file']} (its contents then)"
        if checkpoint.sdf:
            return f"the checkpoint learns the shape {checkpoint.sdf}"
        if checkpoint.slang_target:
            return f"the checkpoint learns the Slang file {checkpoint.slang_target['file']} (its text then)"
        return "the checkpoint learns the targets " + "; ".join(checkpoint.targets)
    if name == "features" and checkpoint.encoding != "features":
        return f"the checkpoint has --encoding {checkpoint.encoding}"
    return f"the checkpoint has {FLAGGED[name].flag.name} {_text(getattr(checkpoint, name))}"
