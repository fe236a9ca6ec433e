"""python -m app.entry.shadergen [network options] [--tensor-cores] [--cpu]: prints the Slang module the
app generates for a config. It takes the app's own options (--hidden 64,64 --precision half
--activation tanh, --preset, --config, --target, --target-file, ...); those that don't shape a
config are refused. --tensor-cores prints the plan a device with cooperative matrices gets, --cpu
the plan of a CPU driver (lane tiles for wide float networks)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence

from .fast_start import skip_torch

# Options besides the config's own fields that decide the module: where the config comes from,
# and the device that reads a --target-file's TARGET_COUNT.
SOURCE_OPTIONS = ("preset", "config", "target_file", "dataset_source", "image_file", "device", "tensor_cores", "cpu")


def _accepted() -> set[str]:
    from ..config.config import Config

    return {field.name for field in dataclasses.fields(Config)} | set(SOURCE_OPTIONS)


def _parser() -> argparse.ArgumentParser:
    """The app's parser, its other options left out of --help, and --tensor-cores."""
    from .cli_args import build_parser

    parser = build_parser()
    parser.prog = "python -m app.entry.shadergen"
    parser.description = __doc__.split("\n\n")[0]
    accepted = _accepted()
    for action in parser._actions:  # argparse has no public way to hide an option added before
        if action.dest not in accepted and action.dest != "help":
            action.help = argparse.SUPPRESS
    parser.add_argument(
        "--tensor-cores",
        action="store_true",
        help="print the plan of a device with cooperative matrices (half-precision tiles multiply on tensor cores)",
    )
    parser.add_argument("--cpu", action="store_true", help="print the plan of a CPU driver such as lavapipe")
    return parser


def _refuse_other_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The app's window, headless and checkpoint options mean nothing here: refused, not ignored."""
    from ..errors import UserError

    accepted, defaults = _accepted(), vars(parser.parse_args([]))
    for name, value in vars(args).items():
        if name not in accepted and value != defaults[name]:
            raise UserError(f"--{name.replace('_', '-')} does not apply to the generated module")


def source_for(argv: Sequence[str] | None = None) -> str:
    """The generated module for the options in `argv`; a UserError for bad ones."""
    from ..kernels.network_module import network_source
    from ..kernels.planning import plan_for
    from .cli_args import config_from_args

    parser = _parser()
    args = parser.parse_args(argv)
    _refuse_other_options(parser, args)
    config = config_from_args(args)
    if args.target_file is not None:
        from ..gpu.gpu import create_gpu
        from ..gpu.target_probe import load

        config = config.replace(slang_target=load(create_gpu(args.device), args.target_file, config.dims))
    if args.image_file is not None:
        from ..truth.image_truth import load as load_image

        config = config.replace(image=load_image(args.image_file)[0])
    return network_source(plan_for(config, tensor_cores=args.tensor_cores, cpu=args.cpu))


def main(argv: Sequence[str] | None = None) -> int:
    skip_torch()  # before anything imports slangpy
    from ..errors import UserError

    try:
        source = source_for(argv)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(source)
    return 0


if __name__ == "__main__":
    sys.exit(main())
