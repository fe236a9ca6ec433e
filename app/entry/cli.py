"""Command line: `visual-trainer` opens the window; `--headless` trains a fixed number of steps;
`visual-trainer sweep ...` is a command of its own (app/sweep/command.py). Options are in
app/entry/cli_args.py, their checks in app/entry/cli_checks.py; every bad input ends here as one
line on stderr and exit code 2."""

from __future__ import annotations

import argparse
import datetime
import sys
from collections.abc import Sequence
from pathlib import Path

from ..config import config as cfg
from ..errors import EXIT_DIVERGED, EXIT_GRAD_CHECK, EXIT_INTERRUPTED, EXIT_USAGE, UserError
from ..files.mesh_export import DEFAULT_RESOLUTION
from ..files.tensorboard_events import TensorboardOptions
from .cli_args import build_parser, iterations_for, resolve_start, without_other_truths
from .cli_checks import check_export_image, check_export_mesh, check_headless, check_window, refuse_serve_options

OUTPUT_OPTIONS = {
    "--save-checkpoint": "checkpoint",
    "--export-slang": "slang",
    "--screenshot": "screenshot",
    "--export-image": "image",
    "--export-mesh": "mesh",
}


def _with_target_file(config: cfg.Config, args: argparse.Namespace, gpu) -> cfg.Config:
    """The config with --target-file's Slang file as its truth (read and compiled: a bad file is
    a UserError naming the compiler's first message and its line)."""
    if args.target_file is None:
        return config
    from ..gpu import target_probe

    return without_other_truths(config, "slang_target").replace(
        slang_target=target_probe.load(gpu, args.target_file, config.dims)
    )


def _with_image(config: cfg.Config, args: argparse.Namespace) -> cfg.Config:
    """The config with --image's file as its truth, over the domain that keeps its aspect ratio
    (a bad image is a UserError of one line)."""
    if args.image_file is None:
        return config
    from ..truth import image_truth

    info, _ = image_truth.load(args.image_file)
    domain = image_truth.aspect_domain(info["width"], info["height"])
    return without_other_truths(config, "image").replace(image=info, domain=domain)


def _report_grad_check(check) -> int:
    print(check.line())
    print(f"  {check.detail()}: {'passed' if check.passed else 'FAILED'}")
    return 0 if check.passed else EXIT_GRAD_CHECK


def _grad_check(args: argparse.Namespace) -> int:
    """--grad-check without --headless: the network the options start from (its initial weights,
    a --resume checkpoint or a --load-network file)."""
    from ..check import grad_check
    from ..gpu.gpu import create_gpu
    from ..loop.session import Session

    refuse_serve_options(args, "--grad-check")
    start = resolve_start(args)
    gpu = create_gpu(args.device, gpu=args.gpu)
    start.config = _with_image(_with_target_file(start.config, args, gpu), args)
    grad_check.check_checkable(start.config)
    session = Session(gpu, start.config)
    start.apply(session)
    return _report_grad_check(grad_check.run(session.trainer))


def _headless(args: argparse.Namespace) -> int:
    from ..gpu.gpu import create_gpu
    from ..run import headless

    check_headless(args)
    if args.variant:
        return _race(args)
    start = resolve_start(args)
    iterations = iterations_for(args, start)
    out = _out_folder(args)
    start.config = _with_image(start.config, args)
    check_export_image(args, start.config)
    check_export_mesh(args, start.config)
    if args.grad_check:  # refused before training, not after
        from ..check.grad_check import check_checkable

        check_checkable(start.config)
    _notes([start.config])
    gpu = create_gpu(args.device, gpu=args.gpu)
    options = headless.RunOptions(
        eval_every=args.eval_every,
        quiet=args.quiet,
        grad_check=args.grad_check,
        asked={option: getattr(args, option[2:].replace("-", "_")) for option in OUTPUT_OPTIONS},
        screen=(args.width or headless.WINDOW_DEFAULT[0], args.height or headless.WINDOW_DEFAULT[1]),
        image_scale=args.export_scale,
        mesh_resolution=args.mesh_resolution or DEFAULT_RESOLUTION,
        tensorboard=TensorboardOptions.of(args.tensorboard, args.tensorboard_images),
    )
    run = headless.run(
        gpu, start, iterations, out, options=options, prepare=lambda config: _with_target_file(config, args, gpu)
    )
    return _report_headless(run.session, run.result, run.written, out, run.check, start.step)


def _out_folder(args: argparse.Namespace) -> Path:
    return Path(args.out) if args.out else Path("runs") / datetime.datetime.now().strftime("%Y%m%d-%H%M%S")


def _race(args: argparse.Namespace) -> int:
    """--headless with --variant: a race of the variants of the options' setup (app/entry/race_run.py)."""
    from ..gpu.gpu import create_gpu
    from ..run import headless
    from . import race_run

    race_run.check_race_options(args)
    variants = race_run.variants_of(args.variant)
    start = resolve_start(args)
    iterations = iterations_for(args, start)
    out = _out_folder(args)
    start.config = _with_image(start.config, args)
    racers = race_run.check_variants(start.config, variants)
    _notes(racers)
    gpu = create_gpu(args.device, gpu=args.gpu)
    with headless.compile_notice(args.quiet, headless.built_marker(gpu, *racers)):
        start.config = _with_target_file(start.config, args, gpu)
        race = race_run.build_race(gpu, start.config, variants)
    tensorboard = TensorboardOptions.of(args.tensorboard, args.tensorboard_images)
    table, wall, interrupted = race_run.run_race(race, iterations, args.eval_every, args.quiet, tensorboard)
    written = race_run.write_race(race, table, out, iterations, wall, interrupted)
    return race_run.report(race, written, out, interrupted)


def _notes(configs: list[cfg.Config]) -> None:
    """Hints, not errors, about a setup that trains poorly, on stderr before the run: once each."""
    from ..model.derivative_loss import smooth_activation_hint

    hints = (smooth_activation_hint(config.loss_settings, config.activation) for config in configs)
    for hint in dict.fromkeys(filter(None, hints)):
        print(f"note: {hint}", file=sys.stderr)


def _report_headless(session, result, written, out: Path, check, first_step: int) -> int:
    """The run's last lines and its exit code: a failed write (2) before a divergence (3), an
    interruption (130) or a failed gradient check (4). `first_step`: where training started (a
    resumed run's checkpoint step)."""
    from ..files.run_summary import image_text, metrics_text
    from ..model.half_range import half_hint

    for what, where in written.files:
        if what in OUTPUT_OPTIONS:
            print(f"{OUTPUT_OPTIONS[what]}: {where}")
    failure = written.error_line()
    if failure is not None:
        print(f"error: {failure}", file=sys.stderr)
        return EXIT_USAGE
    if result.diverged_at is not None:
        config = session.config
        hint = half_hint(config.encoding_settings, config.domain, config.precision)
        print(
            f"error: loss became non-finite at step {result.diverged_at}; "
            f"network.json holds the last finite network (step {result.steps})" + (f"; {hint}" if hint else ""),
            file=sys.stderr,
        )
        return EXIT_DIVERGED
    if result.interrupted_at is not None:
        print(f"interrupted at step {result.interrupted_at:,}: the run so far is in {out}", file=sys.stderr)
        return EXIT_INTERRUPTED
    if session.image is not None:
        figures = image_text(session.image)
    elif session.metrics is None:
        figures = f"eval loss {result.eval_loss:.6g}, eval grad loss {result.eval_grad_loss:.6g}"
    else:
        figures = metrics_text(session.metrics)
    trained = result.steps - first_step
    if trained == 0:  # --iterations at the start: the network as it starts, evaluated and written
        print(f"done: no steps trained, the network as it starts at step {result.steps}: {figures} -> {out}")
    else:
        resumed = f" (resumed at step {first_step}: {result.steps} in all)" if first_step else ""
        print(
            f"done: {trained} steps in {result.wall_seconds:.2f} s{resumed}, train loss {result.train_loss:.6g}, "
            f"{figures} -> {out}"
        )
    return _report_grad_check(check) if check is not None else 0


def _window(args: argparse.Namespace) -> int:
    from ..files import autosave, saved
    from ..gpu.gpu import create_gpu
    from ..ui.opening import Launch
    from ..ui.window import WindowOptions, run_window

    check_window(args)
    fresh = args.fresh or args.open_sweep is not None  # a sweep's window: nothing of the last session
    settings = {} if fresh else saved.load()
    chosen_start = fresh or args.resume is not None or args.load_network is not None
    offer = None if chosen_start else autosave.find()
    if offer is not None:
        print(f"the last session was autosaved ({offer.describe()}): the window offers to restore it", file=sys.stderr)
    last = None if fresh else saved.saved_config(settings)
    start = resolve_start(args, last or cfg.Config())
    notice = _restored(last, args)
    if notice:
        print(f"note: {notice}", file=sys.stderr)
    launch = Launch(vsync=False if args.no_vsync else None, restore=offer, notice=notice, sweep=args.open_sweep)
    options = WindowOptions(
        width=args.width,
        height=args.height,
        screenshot=args.screenshot,
        screenshot_after=args.screenshot_after,
        launch=launch,
    )
    address = _serve_address(args)
    start.config = _with_image(start.config, args)
    _notes([start.config])
    gpu = create_gpu(args.device, gpu=args.gpu)
    start.config = _with_target_file(start.config, args, gpu)
    if address is not None:
        from ..serve.served_window import ServeOptions, run_served

        size = (args.width or 1280, args.height or 800)
        mine = args.open_sweep is None  # a sweep's window leaves the user's settings and sessions alone
        options = ServeOptions(address, size, launch, save_settings=mine, autosave_untrained=mine)
        return run_served(gpu, start, options, settings)
    return run_window(gpu, start, options, settings)


def _serve_address(args: argparse.Namespace):
    """--serve's address, token and TLS, checked before the GPU starts; None for the desktop window."""
    if args.serve is None:
        return None
    from ..serve.requirements import check_serve_packages

    check_serve_packages()
    from ..serve.address import serve_address

    return serve_address(args.serve, args.token_file, args.certfile, args.keyfile)


def _restored(last: cfg.Config | None, args: argparse.Namespace) -> str:
    """What the window takes from the last session's settings, said where it opens: the fields
    that differ from the defaults, unless a preset, a config file, a checkpoint or a network.json
    is the start (those are whole starts of their own); options given beat them all."""
    if last is None or args.preset or args.config or args.resume or args.load_network:
        return ""
    defaults = cfg.Config()
    changed = [name for name in cfg.FIELDS if getattr(last, name) != getattr(defaults, name)]
    if not changed:
        return ""
    shown = ", ".join(name.replace("_", " ") for name in changed[:6]) + (", ..." if len(changed) > 6 else "")
    return f"the last session's settings are restored ({shown}); --fresh starts from the defaults"


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["sweep"]:  # a command of its own, with its own options (app/sweep/command.py)
        from ..sweep.command import main as sweep_main

        return sweep_main(argv[1:])
    try:
        args = build_parser().parse_args(argv)
        if args.headless:
            return _headless(args)
        return _grad_check(args) if args.grad_check else _window(args)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
