"""A headless race (`--headless --variant ... --variant ...`): every variant of the options' setup
trains --iterations equal steps on one device (app/loop/race.py), and --out gets race.csv,
summary.json and each racer's own run folder (docs/guide/races.md, 'Headless races')."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from tqdm import tqdm

from ..config.config import Config
from ..config.variants import Variant, parse_variant, unique_names
from ..errors import EXIT_DIVERGED, EXIT_INTERRUPTED, EXIT_USAGE, UserError
from ..files.race_files import RaceTable, race_summary
from ..files.run_summary import HeadlessResult
from ..files.tensorboard_events import RunEvents, TensorboardOptions, status_of
from ..gpu.gpu import Gpu
from ..loop.headless_steps import CHUNK_SECONDS
from ..loop.race import MAX_RACERS, MIN_RACERS, Race
from ..run import output as run_output
from ..run.headless import Interrupt

# The options a race has no use for: each names one network's output, or a network to go on from.
SINGLE_RUN_OPTIONS = ("--resume", "--load-network", "--save-checkpoint", "--export-slang", "--export-image")
SINGLE_RUN_OPTIONS += ("--export-mesh", "--screenshot", "--grad-check")


def variants_of(texts: list[str]) -> list[Variant]:
    """The --variant texts, read and counted: MIN_RACERS to MAX_RACERS of them."""
    if not MIN_RACERS <= len(texts) <= MAX_RACERS:
        raise UserError(f"a race takes {MIN_RACERS} to {MAX_RACERS} --variant options (got {len(texts)})")
    return [parse_variant(text) for text in texts]


def check_race_options(args) -> None:
    if args.iterations == 0:  # no step: nothing to compare (a single run of 0 steps writes its start)
        raise UserError("--iterations 0 races no step: a race needs --iterations of at least 1")
    for option in SINGLE_RUN_OPTIONS:
        value = getattr(args, option[2:].replace("-", "_"))
        if value not in (None, False):
            raise UserError(f"{option} is for single runs: it cannot be combined with --variant")


def check_variants(base: Config, variants: list[Variant]) -> list[Config]:
    """Every variant's config checked, so that a bad one is refused before the device starts and
    any network is built (a UserError naming it); the racers' configs."""
    return [variant.apply(base) for variant in variants]


def build_race(gpu: Gpu, base: Config, variants: list[Variant]) -> Race:
    """The racers, of variants check_variants passed."""
    race = Race(gpu, base, heatmaps=True)
    for name, variant in zip(unique_names(variants), variants):
        race.add(name, variant)
    return race


def run_race(
    race: Race, iterations: int, eval_every: int, quiet: bool, tensorboard: TensorboardOptions | None = None
) -> tuple[RaceTable, float, int | None]:
    """Equal steps to `iterations`, a row of race.csv at each evaluation (every `eval_every`
    steps and the last), and with `tensorboard` each racer's event files. Returns the table, the
    wall seconds and the step Ctrl+C stopped at."""
    events = race_events(race, tensorboard)
    try:
        table, wall, interrupted = _run_race(race, iterations, eval_every, quiet, events)
    except BaseException:  # a second Ctrl+C, a failure: the events so far, and nothing more
        for written in events.values():
            written.abandon()
        raise
    for racer in race.racers:
        if racer.name in events:
            events[racer.name].close(racer.session, status_of(racer.diverged_at, interrupted))
    return table, wall, interrupted


def race_events(race: Race, options: TensorboardOptions | None) -> dict[str, RunEvents]:
    """Each racer's event files, in DIR/<racer>/, side by side: their hparams are the fields the
    variants set (every field where they set none), their metric the race's."""
    if options is None:
        return {}
    fields = tuple(dict.fromkeys(name for racer in race.racers for name in racer.variant.changes)) or None
    return {
        racer.name: RunEvents(options.within(racer.name, fields, race.metric.name), racer.session)
        for racer in race.racers
    }


def _write_events(race: Race, events: dict[str, RunEvents]) -> None:
    """Each racer's evaluation at the step it stands at, where it has one."""
    for racer in race.racers:
        if racer.name in events and racer.marked_now:
            events[racer.name].evaluation(racer.session, racer.samples_per_second)


def _run_race(
    race: Race, iterations: int, eval_every: int, quiet: bool, events: dict[str, RunEvents]
) -> tuple[RaceTable, float, int | None]:
    table = RaceTable([r.name for r in race.racers], race.metric.name)
    for racer in race.racers:
        racer.session.eval_every = eval_every
    step = min(r.step for r in race.racers)
    bar = tqdm(total=iterations, initial=step, unit="step", disable=quiet or None, file=sys.stderr, dynamic_ncols=True)
    start = time.perf_counter()
    with Interrupt() as interrupt:
        while step < iterations and race.active and not interrupt.requested:
            chunk = _chunk(race, step, iterations, eval_every)
            for racer in race.active:
                racer.train(chunk)
            step += chunk
            bar.update(chunk)
            if step % eval_every == 0 or step == iterations:
                _evaluate_all(race, step)
                table.take(race, step, time.perf_counter() - start)
                _write_events(race, events)
                if not quiet:
                    bar.write(_standing(race, step), file=sys.stderr)
    bar.close()
    if not table.rows or table.rows[-1][0] != step:
        _evaluate_all(race, step)
        table.take(race, step, time.perf_counter() - start)
    for racer in race.racers:  # a diverged racer's last finite network, as a headless run ends
        if not racer.marked_now:
            racer.evaluate()
    _write_events(race, events)
    interrupted = step if interrupt.requested and step < iterations else None
    return table, time.perf_counter() - start, interrupted


def _chunk(race: Race, step: int, iterations: int, eval_every: int) -> int:
    """Whole steps for each racer's next submit: about CHUNK_SECONDS of work for the slowest,
    ending at the next evaluation and at `iterations`."""
    costs = [r.ms_per_step / 1000 for r in race.active if r.ms_per_step == r.ms_per_step]
    by_time = int(CHUNK_SECONDS / max(costs)) if costs else 1
    return max(1, min(by_time, iterations - step, eval_every - step % eval_every))


def _evaluate_all(race: Race, step: int) -> None:
    """Every racer evaluated at `step` that was not (Session.advance evaluates at eval_every)."""
    for racer in race.racers:
        if racer.diverged_at is None and not racer.marked_now:
            racer.evaluate()


def _standing(race: Race, step: int) -> str:
    parts = []
    for racer in race.racers:
        value = racer.value_at(step=step)
        parts.append(f"{racer.name} diverged" if racer.diverged_at is not None else f"{racer.name} {value:.4g}")
    return f"step {step:>7}  {race.metric.name}: " + ", ".join(parts)


def write_race(race: Race, table: RaceTable, out: Path, iterations: int, wall: float, interrupted: int | None):
    """race.csv, summary.json and each racer's folder; the Written of every file (a failed write
    is reported, the rest are still tried)."""
    written = run_output.Written()
    for racer in race.racers:
        session = racer.session
        result = HeadlessResult(
            racer.step,
            session.train_loss,
            session.eval_loss,
            session.eval_grad_loss,
            racer.train_seconds,
            racer.diverged_at,
            racer.samples,
            interrupted_at=interrupted,
        )
        written.merge(run_output.write_run(session, result, out / "racers" / racer.name, {}))
    summary = json.dumps(race_summary(race, iterations, wall, interrupted), indent=2) + "\n"
    written.merge(run_output.write_files(out, {"race.csv": table.text(), "summary.json": summary.encode()}))
    return written


def report(race: Race, written, out: Path, interrupted: int | None) -> int:
    """The race's last lines (a line a racer, the leaders) and its exit code: a failed write (2),
    every racer diverged (3), an interruption (130), else 0."""

    metric = race.metric.name
    for racer in race.racers:
        if racer.diverged_at is not None:
            print(f"{racer.name}: diverged at step {racer.diverged_at}; stopped there", file=sys.stderr)
            continue
        print(
            f"{racer.name}: {racer.step} steps, {metric} {racer.value_at():.6g}, "
            f"{racer.ms_per_step:.3g} ms/step, {racer.samples_per_second:,.0f} samples/s"
        )
    by_steps, by_time = race.leader("steps"), race.leader("time")
    if by_steps is not None:
        print(f"leader: {by_steps.name} at equal steps, {by_time.name if by_time else '-'} at equal time -> {out}")
    failure = written.error_line()
    if failure is not None:
        print(f"error: {failure}", file=sys.stderr)
        return EXIT_USAGE
    if all(r.diverged_at is not None for r in race.racers):
        print("error: every racer diverged; each folder holds its last finite network", file=sys.stderr)
        return EXIT_DIVERGED
    if interrupted is not None:
        print(f"interrupted at step {interrupted:,}: the race so far is in {out}", file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0
