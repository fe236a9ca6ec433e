"""Command line: `visual-trainer` opens the window; `--headless` trains a fixed number of steps."""

from __future__ import annotations

import argparse
import datetime
import os
import sys
from pathlib import Path
from typing import Sequence

from app import config as cfg
from app.errors import UserError

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        raise UserError(message)


def _hidden(text: str) -> list[int]:
    try:
        widths = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--hidden takes comma-separated widths like 16,16 (got {text!r})")
    return widths


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="visual-trainer", description="Train a small MLP with Slang autodiff and watch it fit.")
    mode = p.add_argument_group("mode")
    mode.add_argument("--headless", action="store_true", help="train without a window and write results")
    mode.add_argument("--iterations", type=int, default=1000, help="optimizer steps in headless mode (default 1000)")
    mode.add_argument("--out", help="headless output folder (default runs/<timestamp>/)")
    mode.add_argument("--eval-every", type=int, default=100, help="evaluate every K steps (default 100)")
    mode.add_argument("--screenshot", help="headless: also render the full UI after training to this PNG")
    mode.add_argument("--quiet", action="store_true", help="no progress bar or periodic loss lines")
    mode.add_argument("--device", default="auto", choices=("auto", "vulkan", "cuda", "d3d12", "metal"))
    net = p.add_argument_group("network and training (override --preset and --config)")
    net.add_argument("--config", help="JSON config file (or a summary.json from an earlier run)")
    net.add_argument("--preset", help=f"start from a preset: {', '.join(cfg.preset_names())}")
    net.add_argument("--hidden", type=_hidden, help="hidden layer widths, e.g. 16,16 (1-8 layers of 1-256)")
    net.add_argument("--activation", choices=cfg.ACTIVATIONS)
    net.add_argument("--output-activation", choices=cfg.ACTIVATIONS)
    net.add_argument("--encoding", choices=cfg.ENCODINGS)
    net.add_argument("--frequencies", type=int, help="Fourier encoding frequencies K (1-16)")
    net.add_argument("--precision", choices=cfg.PRECISIONS)
    net.add_argument("--optimizer", choices=cfg.OPTIMIZERS)
    net.add_argument("--lr", type=float, help="learning rate")
    net.add_argument("--batch-size", type=int)
    net.add_argument("--seed", type=int)
    net.add_argument("--eval-grid", type=int, help="evaluation grid side G (default 64)")
    win = p.add_argument_group("window")
    win.add_argument("--width", type=int, default=1280)
    win.add_argument("--height", type=int, default=800)
    win.add_argument("--no-vsync", action="store_true")
    win.add_argument("--fresh", action="store_true", help="ignore the config and layout saved by the last session")
    # For tests and scripted screenshots of the real window: after N frames, save the window's
    # frame to --screenshot (or the F12 folder) and keep running.
    win.add_argument("--screenshot-after", type=int, metavar="N", help=argparse.SUPPRESS)
    return p


def config_from_args(args: argparse.Namespace, base: cfg.Config | None = None) -> cfg.Config:
    config = base or cfg.Config()
    if args.preset:
        config = cfg.load_preset(args.preset, config)
    if args.config:
        config = cfg.load_file(args.config, config)
    overrides = {name: getattr(args, name) for name in (
        "hidden", "activation", "output_activation", "encoding", "frequencies", "precision",
        "optimizer", "lr", "batch_size", "seed", "eval_grid") if getattr(args, name) is not None}
    return cfg.from_dict(overrides, config, source="options") if overrides else cfg.validate(config)


def check_output_dir(path: Path, option: str = "--out") -> None:
    """Fails early on a folder that can't be written, without creating anything."""
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        raise UserError(f"cannot write {option} {str(path)!r}: {str(probe)!r} is not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise UserError(f"cannot write {option} {str(path)!r}: no write permission in {str(probe)!r}")


def _headless(args: argparse.Namespace, config: cfg.Config) -> int:
    from app import headless
    from app.gpu import create_gpu
    from app.session import Session

    if args.iterations < 0:
        raise UserError(f"--iterations must be 0 or more (got {args.iterations})")
    if args.eval_every < 1:
        raise UserError(f"--eval-every must be at least 1 (got {args.eval_every})")
    out = Path(args.out) if args.out else Path("runs") / datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    check_output_dir(out)
    if args.screenshot:
        check_output_dir(Path(args.screenshot).parent, "--screenshot")
    session = Session(create_gpu(args.device), config, heatmaps=True)
    session.eval_every = args.eval_every
    result = headless.train(session, args.iterations, args.quiet)

    def heatmaps_png(folder: Path) -> None:
        from app.ui.report import write_run_heatmaps  # imgui only when a picture is wanted

        write_run_heatmaps(session, folder)

    headless.write_outputs(session, result, out, heatmaps_png)
    if args.screenshot:
        from app.ui.offscreen import render_screenshot

        render_screenshot(session, args.screenshot, args.width, args.height)
        print(f"screenshot: {args.screenshot}")
    if result.diverged_at is not None:
        print(f"error: loss became non-finite at step {result.diverged_at}; "
              f"network.json holds the last finite network (step {result.steps})", file=sys.stderr)
        return headless.EXIT_DIVERGED
    print(f"done: {result.steps} steps in {result.wall_seconds:.2f} s, train loss {result.train_loss:.6g}, "
          f"eval loss {result.eval_loss:.6g} -> {out}")
    return 0


def _window(args: argparse.Namespace) -> int:
    from app import saved
    from app.gpu import create_gpu
    from app.ui.window import WindowOptions, run_window

    settings = {} if args.fresh else saved.load()
    config = config_from_args(args, (None if args.fresh else saved.saved_config(settings)) or cfg.Config())
    options = WindowOptions(width=args.width, height=args.height, vsync=False if args.no_vsync else None,
                            screenshot=args.screenshot, screenshot_after=args.screenshot_after)
    return run_window(create_gpu(args.device), config, options, settings)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.headless:
            return _headless(args, config_from_args(args))
        return _window(args)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
