"""Inputs for tests/test_fuzz.py: valid files to start from, mutations of bytes and of JSON
values, and random command lines over every option, with good, bad and odd values."""

from __future__ import annotations

import copy
import hashlib
import json
import random
import struct
from pathlib import Path

from app.config import config as cfg
from app.config import files as config_files
from app.files import checkpoint as ckpt
from app.files.network_io import export_network
from app.kernels.planning import plan_for
from app.loop.session import Session

ODD_VALUES = [
    None,
    True,
    False,
    0,
    -1,
    1,
    2.5,
    -1e308,
    1e308,
    float("nan"),
    float("inf"),
    10**30,
    "",
    "x",
    "\u00e9\u4e2d",
    [],
    [1, 2],
    {},
    {"a": 1},
    [[[]]],
]


def _odd(rng: random.Random):
    return copy.deepcopy(rng.choice(ODD_VALUES))  # a fresh one: mutations work in place


def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    """One to three byte-level mutations: truncation, flips, insertions, deletions, splices."""
    data = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(5)
        at = rng.randrange(len(data) + 1)
        if kind == 0:
            data = data[:at]
        elif kind == 1 and data:
            data[min(at, len(data) - 1)] ^= 1 << rng.randrange(8)
        elif kind == 2:
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif kind == 3:
            del data[at : at + rng.randint(1, 16)]
        else:
            data[at : at + 4] = rng.choice([b"\xff\xff\xff\xff", b"\0\0\0\0", b"\x7f\x7f\x7f\x7f", b"{", b"]"])
    return bytes(data)


def _mutate_value(rng: random.Random, value):
    if isinstance(value, dict) and value and rng.random() < 0.7:
        key = rng.choice(list(value))
        choice = rng.randrange(4)
        if choice == 0:
            del value[key]
        elif choice == 1:
            value[key] = _mutate_value(rng, value[key])
        elif choice == 2:
            value[key + rng.choice(["_", "x", ""])] = _odd(rng)
        else:
            value[key] = _odd(rng)
        return value
    if isinstance(value, list) and value and rng.random() < 0.7:
        at = rng.randrange(len(value))
        choice = rng.randrange(3)
        if choice == 0:
            value[at] = _mutate_value(rng, value[at])
        elif choice == 1:
            del value[at]
        else:
            value.append(_odd(rng))
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool) and rng.random() < 0.5:
        return value * rng.choice([-1, 0, 2, 1e6, 1e-6, 1e300])
    return _odd(rng)


def mutate_json(rng: random.Random, document):
    """One to three value-level mutations of a parsed JSON document."""
    for _ in range(rng.randint(1, 3)):
        document = _mutate_value(rng, document)
    return document


class InputFiles:
    """Valid configs, checkpoints and networks, and files of them (valid and mutated) for
    command lines."""

    def __init__(self, folder: Path, gpu):
        self.folder = folder
        rng = random.Random(7)
        self.configs = [json.dumps(cfg.Config().to_dict())]
        self.configs += [p.read_text() for p in sorted(cfg.PRESET_DIR.glob("*.json"))]
        self.configs.append(json.dumps({"steps": 10, "config": cfg.Config(hidden=[8, 8]).to_dict()}))
        self.checkpoints, self.networks = [], []
        for fields in (dict(hidden=[8]), dict(hidden=[6, 5], precision="half", optimizer="sgd")):
            session = Session(gpu, cfg.validate(cfg.Config(batch_size=256, **fields)))
            session.advance(3)
            self.checkpoints.append(ckpt.encode(ckpt.capture(session)))
            plan = plan_for(session.config)
            self.networks.append(json.dumps(export_network(plan, session.config, session.trainer.parameters())))
        self.config_paths = self._files("config", ".json", [c.encode() for c in self.configs], rng)
        self.checkpoint_paths = self._files("run", ".ckpt", self.checkpoints, rng)
        self.network_paths = self._files("network", ".json", [n.encode() for n in self.networks], rng)
        self.missing = str(folder / "missing" / "file")

    def _files(self, stem: str, suffix: str, good: list[bytes], rng: random.Random) -> list[str]:
        paths = []
        for k, data in enumerate(good + [mutate_bytes(rng, rng.choice(good)) for _ in range(4)]):
            path = self.folder / f"{stem}{k}{suffix}"
            path.write_bytes(data)
            paths.append(str(path))
        return paths

    def reheader(self, rng: random.Random, data: bytes) -> bytes:
        """`data` with a mutated JSON header and a checksum that matches: the checks behind the
        checksum have to refuse it (or it is still a valid checkpoint)."""
        _, version, size, payload_size, _ = struct.unpack_from("<8sIIQ32s", data)
        header = mutate_json(rng, json.loads(data[56 : 56 + size]))
        new = json.dumps(header).encode()
        body = new + data[56 + size :]
        return (
            struct.pack("<8sIIQ32s", ckpt.MAGIC, version, len(new), payload_size, hashlib.sha256(body).digest()) + body
        )


def _pools(inputs: InputFiles, safe: bool) -> dict[str, list[str]]:
    """Values per option. `safe` keeps valid runs short enough for a subprocess (small batches,
    grids and networks, few steps); the bad values stay."""
    folder = str(inputs.folder)
    return {
        "--iterations": ["0", "1", "3", "10", "-1", "x", "2.5"] + ([] if safe else ["100000000"]),
        "--eval-every": ["1", "4", "0", "-3", "a"],
        "--seed": ["0", "7", str(2**32), "-1", "s"],
        "--lr": ["0.01", "0.5", "1e6", "0", "-1", "nan", "inf", "1e-400", "abc"],
        "--batch-size": ["16", "256", "0", "-5", "99999999999", "x"] + ([] if safe else ["67108864"]),
        "--hidden": ["16", "8,8", "6,5", "0", "300", "a,b", "16,", "", "1,2,3,4,5,6,7,8,9"]
        + ([] if safe else ["256"] * 2),
        "--activation": list(cfg.ACTIVATIONS) + ["swish", ""],
        "--output-activation": list(cfg.ACTIVATIONS) + ["gelu"],
        "--encoding": list(cfg.ENCODINGS) + ["hash"],
        "--frequencies": ["1", "2", "0", "17", "x"],
        "--precision": ["float", "half", "double"],
        "--optimizer": ["sgd", "adam", "lbfgs"],
        "--eval-grid": ["2", "16", "1", "2000", "x"] + ([] if safe else ["1024"]),
        "--preset": config_files.preset_names() + ["nope", ""],
        "--config": inputs.config_paths + [inputs.missing, folder, ""],
        "--resume": inputs.checkpoint_paths + [inputs.missing, folder, inputs.config_paths[0]],
        "--load-network": inputs.network_paths + [inputs.missing, inputs.checkpoint_paths[0]],
        "--screenshot": [f"{folder}/shot.jpg", folder] + ([] if safe else [f"{folder}/shot.png"]),
        "--device": ["auto", "metal", "bogus"],
        "--width": ["1280", "0", "100000", "x"],
        "--export-slang": [] if safe else [f"{folder}/a.slang", f"{folder}/a.txt", folder],
        "--save-checkpoint": [] if safe else [f"{folder}/a.ckpt", folder, inputs.missing],
    }


def command_line(rng: random.Random, inputs: InputFiles, subprocess_safe: bool) -> list[str]:
    """A random command line: a few options with values from the pools, sometimes mangled (a
    typo, a missing value, a stray word). In-process lines are headless nine times in ten."""
    pools = {k: v for k, v in _pools(inputs, subprocess_safe).items() if v}
    argv = [] if subprocess_safe else (["--headless"] if rng.random() < 0.9 else [])
    if subprocess_safe:
        argv += ["--iterations", rng.choice(["0", "2", "5"])]  # later options may override it
    for _ in range(rng.randint(0, 5)):
        option = rng.choice(list(pools) + ["--quiet", "--fresh", "--no-vsync"])
        argv += (
            [option]
            if option.startswith("--q") or option in ("--fresh", "--no-vsync")
            else [option, rng.choice(pools[option])]
        )
    if argv and rng.random() < 0.15:
        kind, at = rng.randrange(4), rng.randrange(len(argv))
        if kind == 0:
            argv[at] = argv[at][:-1] or "-"
        elif kind == 1:
            argv = argv[:at]
        elif kind == 2:
            argv.insert(at, rng.choice(["stray", "--bogus", "-x", "--h\u00efdden", "--"]))
        else:
            argv.append(rng.choice(list(pools)))  # an option without its value
    return argv
