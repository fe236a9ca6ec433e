"""Races (app/loop/race.py, app/entry/race_run.py): variants read as the config's fields, a racer
that trains in a race to the same bytes as alone, a diverged racer that stops alone, race.csv
and summary.json that agree with the racers' own files, and bad --variant strings refused in
one line before anything is built or written."""

from __future__ import annotations

import csv
import json

import pytest

from app.config.config import Config
from app.config.files import load_file
from app.config.variants import parse_variant, unique_names
from app.entry.cli import main
from app.errors import UserError
from app.loop.race import Mark, Metric, Race, Racer
from tests.helpers import run_headless_here
from tests.tensorboard_reader import read_events

ITERATIONS = 60
TINY = ("--hidden", "8", "--batch-size", "256", "--eval-grid", "16", "--eval-every", "20")
VARIANTS = ("", "hidden=16,16 lr=0.003", "lr=80 optimizer=sgd", "seed=7 batch_size=128")


def test_a_variant_reads_its_fields_as_their_options_do():
    variant = parse_variant("hidden=64,64 lr=0.003 activation=tanh optimizer=sgd")
    assert variant.changes == {"hidden": [64, 64], "lr": 0.003, "activation": "tanh", "optimizer": "sgd"}
    config = variant.apply(Config())
    assert (config.hidden, config.lr, config.activation, config.optimizer) == ([64, 64], 0.003, "tanh", "sgd")
    assert parse_variant("hidden=64,64 lr=0.003 activation=tanh").name == "hidden-64-64_lr-0.003_activation-tanh"
    assert len(variant.name) == 48  # a folder's name: cut short
    assert parse_variant("").name == "base" and parse_variant("").apply(Config()) == Config()
    assert unique_names([parse_variant("lr=0.1"), parse_variant("lr=0.1"), parse_variant("")]) == [
        "lr-0.1",
        "lr-0.1-2",
        "base",
    ]


@pytest.mark.parametrize(
    "text, says",
    [
        ("foo=1", "unknown field 'foo'"),
        ("targets=x", "targets is the data's"),
        ("lr", "is not field=value"),
        ("lr=0.1 lr=0.2", "lr is given twice"),
        ("lr=abc", "lr=abc is not a value"),
        ("hidden=16,,16", "is not a value of hidden"),
        ("hidden=9999", "between 1 and 256"),
        ("activation=nope", "activation"),
        ('lr="0.1', "No closing quotation"),
    ],
)
def test_a_bad_variant_is_one_line_naming_it(text, says):
    with pytest.raises(UserError) as error:
        parse_variant(text).apply(Config())
    message = str(error.value)
    assert message.startswith(f"variant {text!r}") and says in message and "\n" not in message


@pytest.mark.parametrize(
    "variants, says",
    [
        (["lr=0.01"], "2 to 8 --variant"),
        (["lr=0.01", "foo=2"], "unknown field 'foo'"),
        (["lr=0.01", "hidden=0"], "variant 'hidden=0'"),
        (["lr=0.01", "dataset=spiral"], "dataset is the data's"),
    ],
)
def test_bad_variants_exit_2_with_one_line_and_write_nothing(tmp_path, capsys, variants, says):
    """The command line's own main, in this process: each is refused before any device is made."""
    out = tmp_path / "race"
    code = main(
        ["--headless", "--quiet", "--iterations", "10", "--out", str(out), *(f"--variant={v}" for v in variants)]
    )
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], err
    assert not out.exists()


def test_a_variant_is_refused_beside_an_option_of_single_runs(tmp_path, capsys):
    code = main(["--headless", "--variant", "lr=0.1", "--variant", "", "--export-slang", str(tmp_path / "n.slang")])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        "error: --export-slang is for single runs: it cannot be combined with --variant"
    )


@pytest.fixture(scope="module")
def race(gpu, tmp_path_factory):
    """One headless race of four: the setup, a wider Adam, an SGD at a rate that diverges, and the
    setup with a seed and a batch size of its own."""
    root = tmp_path_factory.mktemp("race")
    out = root / "out"
    variants = [f"--variant={text}" for text in VARIANTS]
    tensorboard = ("--tensorboard", str(root / "tensorboard"))
    result = run_headless_here(
        gpu, root, "--iterations", str(ITERATIONS), *TINY, "--out", str(out), *variants, *tensorboard
    )
    return root, out, result


def test_each_racer_trains_to_the_bytes_it_trains_to_alone(gpu, race):
    root, out, result = race
    assert result.returncode == 0, result.stderr
    for name in ("base", "hidden-16-16_lr-0.003"):
        folder = out / "racers" / name
        alone = root / f"alone-{name}"
        again = run_headless_here(
            gpu, root, "--iterations", str(ITERATIONS), "--config", str(folder / "summary.json"), "--out", str(alone)
        )
        assert again.returncode == 0, again.stderr
        assert (folder / "network.json").read_bytes() == (alone / "network.json").read_bytes(), name
        ours, theirs = (json.loads((f / "summary.json").read_text()) for f in (folder, alone))
        assert ours["eval_loss"] == theirs["eval_loss"] and ours["steps"] == theirs["steps"] == ITERATIONS
    base, wider = (
        json.loads((out / "racers" / n / "network.json").read_text()) for n in ("base", "hidden-16-16_lr-0.003")
    )
    assert base != wider  # the racers are different networks, not one network written twice


def test_each_racers_config_is_its_variant_laid_over_the_base(gpu, race):
    """Seed and batch size included: a racer given seed=7 trains with seed 7, to the bytes of a
    single run with --seed 7, not with the first racer's seed."""
    root, out, _ = race
    base = load_file(out / "summary.json")  # the race's base config (the "" racer's)
    for text in VARIANTS:
        variant = parse_variant(text)
        name = "base" if text == "" else variant.name
        own = json.loads((out / "racers" / name / "summary.json").read_text())["config"]
        assert own == variant.apply(base).to_dict(), name
    seeded = out / "racers" / "seed-7_batch_size-128"
    assert json.loads((seeded / "summary.json").read_text())["config"]["seed"] == 7
    alone = root / "alone-seed-7"
    options = [*TINY, "--seed", "7", "--batch-size", "128"]  # the later --batch-size wins, as on any command line
    result = run_headless_here(gpu, root, "--iterations", str(ITERATIONS), *options, "--out", str(alone))
    assert result.returncode == 0, result.stderr
    assert (seeded / "network.json").read_bytes() == (alone / "network.json").read_bytes()
    base_network = (out / "racers" / "base" / "network.json").read_bytes()
    assert (seeded / "network.json").read_bytes() != base_network


def test_a_diverged_racer_stops_and_the_others_go_on(race):
    _, out, result = race
    summary = json.loads((out / "summary.json").read_text())
    racers = {r["name"]: r for r in summary["racers"]}
    diverged = racers["lr-80_optimizer-sgd"]
    assert diverged["diverged_at_step"] is not None and diverged["steps"] < ITERATIONS
    assert "lr-80_optimizer-sgd: diverged at step" in result.stderr
    assert (out / "racers" / "lr-80_optimizer-sgd" / "network.json").exists()  # its last finite network
    for name in ("base", "hidden-16-16_lr-0.003"):
        assert racers[name]["steps"] == ITERATIONS and racers[name]["diverged_at_step"] is None
    finished = [r for r in summary["racers"] if r["diverged_at_step"] is None]
    assert len(finished) == 3
    assert summary["race"]["leader"]["equal_steps"] == min(finished, key=lambda r: r["eval_loss"])["name"]


def test_race_csv_agrees_with_the_racers_own_summaries(race):
    _, out, _ = race
    summary = json.loads((out / "summary.json").read_text())
    with open(out / "race.csv") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["step"]) for r in rows] == [20, 40, 60]
    walls = [float(r["wall_s"]) for r in rows]
    assert walls == sorted(walls) and walls[0] > 0
    for racer in summary["racers"]:
        own = json.loads((out / racer["folder"] / "summary.json").read_text())
        if racer["diverged_at_step"] is None:
            assert float(rows[-1][f"{racer['name']}:eval_loss"]) == pytest.approx(own["eval_loss"], rel=1e-5)
            assert racer["eval_loss"] == own["eval_loss"]
        else:
            assert rows[-1][f"{racer['name']}:eval_loss"] == ""
        assert racer["config"] == own["config"]


def test_config_of_a_race_summary_is_the_setup_its_variants_vary(race):
    """--config reads a race's summary.json as its base config, the "" racer's."""
    _, out, _ = race
    base = json.loads((out / "racers" / "base" / "summary.json").read_text())["config"]
    assert load_file(out / "summary.json").to_dict() == base


def test_tensorboard_shows_the_racers_side_by_side_with_the_fields_their_variants_set(race):
    """Each racer's event files in DIR/<racer>/, as TensorBoard reads them: its eval loss at each
    evaluation as race.csv has it, its last figures as its own summary.json, the fields any variant
    sets as hparams with the race's metric, and a diverged racer's status a failure."""
    root, out, _ = race
    summary = json.loads((out / "summary.json").read_text())
    with open(out / "race.csv") as f:
        rows = list(csv.DictReader(f))
    assert sorted(p.name for p in (root / "tensorboard").iterdir()) == sorted(r["name"] for r in summary["racers"])
    for racer in summary["racers"]:
        events = read_events(root / "tensorboard" / racer["name"])
        own = json.loads((out / racer["folder"] / "summary.json").read_text())
        config = own["config"]
        fields = {"hidden": json.dumps(config["hidden"]), "lr": config["lr"], "optimizer": config["optimizer"]}
        fields |= {"seed": config["seed"], "batch_size": config["batch_size"]}
        assert events.hparams == fields  # the fields any variant sets, each racer's own values
        assert events.metrics == ["eval_loss"]
        assert events.last("eval_loss") == pytest.approx(own["eval_loss"], rel=1e-6)
        assert events.last("samples_per_second") == pytest.approx(racer["samples_per_second"], rel=1e-6)
        assert events.scalars["eval_loss"][-1][0] == own["steps"]
        assert len(events.images["heatmaps/values"]) >= 1
        if racer["diverged_at_step"] is None:
            assert events.status == "STATUS_SUCCESS"
            assert [step for step, _ in events.scalars["eval_loss"]] == [20, 40, 60]
            for (step, value), row in zip(events.scalars["eval_loss"], rows):
                assert step == int(row["step"]) and value == pytest.approx(
                    float(row[f"{racer['name']}:eval_loss"]), rel=1e-5
                )
        else:
            assert events.status == "STATUS_FAILURE"


def _racer(name: str, marks: list[tuple[int, float, float]], diverged: bool = False) -> Racer:
    class _Session:
        divergence = type("D", (), {"step": 5})() if diverged else None

    racer = Racer(name, parse_variant(""), _Session())
    racer.marks = [Mark(*m) for m in marks]
    return racer


def test_the_leader_at_equal_steps_and_at_equal_time():
    race = Race.__new__(Race)
    race.metric, race.racers = Metric("eval_loss"), []
    # slow: better per step; fast: more steps in the same time
    race.racers.append(_racer("slow", [(100, 1.0, 0.5), (200, 2.0, 0.1)]))
    race.racers.append(_racer("fast", [(100, 0.2, 0.6), (200, 0.4, 0.3), (1000, 2.0, 0.05)]))
    race.racers.append(_racer("gone", [(100, 0.1, 0.01)], diverged=True))
    assert race.leader("steps").name == "slow"  # at step 200: 0.1 against 0.3
    assert race.leader("time").name == "fast"  # at 2.0 s: 0.05 against 0.1
    race.metric = Metric("psnr", higher_is_better=True)
    assert race.leader("steps").name == "fast"
    race.racers = race.racers[:1] + race.racers[2:]  # one beside a diverged one still leads
    assert race.leader("steps").name == "slow"
    race.racers = race.racers[:1]  # a race of one leads nothing
    assert race.leader("steps") is None and race.leader("time") is None
