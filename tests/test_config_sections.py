"""The Config's sections: each component below app/config takes its own frozen, typed section, built
from the table's fields (none kept in step by hand); a Config is frozen, and validation returns a new
one. No GPU."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from app.config.config import FIELDS, OWN_FIELDS, SECTIONS, Config, validate
from app.config.variants import SHARED_FIELDS
from app.datasets import DataSettings
from app.errors import UserError
from app.model.encodings import EncodingSettings
from app.model.hashgrid import GridSettings, GridSpec
from app.model.losses import LossSettings
from app.model.optimizers import OPTIMIZERS, OptimizerSettings
from app.truth.settings import TruthSettings

APP = Path(__file__).resolve().parent.parent / "app"
LOWER = ("model", "truth", "datasets")  # the packages below app/config


def test_every_field_is_in_one_section_or_the_configs_own():
    placed = [field for fields in SECTIONS.values() for field in fields] + list(OWN_FIELDS)
    assert sorted(placed) == sorted(FIELDS), "each field once: in one section, or the config's own"
    # A new field is placed on purpose: a section's, or one of these
    assert OWN_FIELDS == ("hidden", "activation", "output_activation", "precision", "matmul", "batch_size", "seed")


def test_each_section_lives_beside_what_it_configures():
    owners = {
        "optimizer_settings": (OptimizerSettings, "app.model.optimizers"),
        "encoding_settings": (EncodingSettings, "app.model.encodings"),
        "loss_settings": (LossSettings, "app.model.losses"),
        "truth_settings": (TruthSettings, "app.truth.settings"),
        "data_settings": (DataSettings, "app.datasets"),
    }
    assert set(SECTIONS) == set(owners)
    for name, (cls, module) in owners.items():
        assert type(getattr(Config(), name)) is cls and cls.__module__ == module
    assert GridSettings.__module__ == "app.model.hashgrid"


ONE_TRUTH = ("slang_target", "dataset", "image")  # a config learns one truth: its shape's here
TWO_DIMENSIONAL = ("dims",)  # ...of (x, y): a grid encoding and a shape are 2D (app/truth/space.py)


def _varied() -> Config:
    """A config whose every field differs from its default but those of the other truths."""
    return validate(
        Config(
            hidden=[8, 4], activation="tanh", encoding="hashgrid", frequencies=3, features=["xy", "x"],
            grid_levels=3, grid_features=4, grid_log2_size=9, grid_base_resolution=5, grid_level_scale=2,
            targets=["x", "y*y"], sdf="circle", points=77, noise=0.25, train_ratio=0.7, data_seed=9,
            regularization="l1", reg_rate=0.5, grad_weight=1.5, eikonal=2.5, normal_weight=3.5,
            domain=[-2, 2, -1, 3], optimizer="adamw", lr=0.5, beta1=0.5, beta2=0.75, epsilon=1e-5,
            weight_decay=0.25, batch_size=99, seed=4, eval_grid=17, z_range=[0, 2],
        )
    )  # fmt: skip


def _leaves(section, prefix: str = "") -> dict:
    leaves = {}
    for field in dataclasses.fields(section):
        value = getattr(section, field.name)
        if dataclasses.is_dataclass(value):
            leaves.update(_leaves(value, f"{prefix}{field.name}_"))
        else:
            leaves[prefix + field.name] = value
    return leaves


def test_a_section_holds_the_configs_own_values_and_is_frozen():
    config, default = _varied(), Config()
    for name, fields in SECTIONS.items():
        section = getattr(config, name)
        leaves = _leaves(section)
        assert tuple(leaves) == fields
        assert leaves == {field: getattr(config, field) for field in fields}
        assert all(
            getattr(config, field) != getattr(default, field)
            for field in fields
            if field not in ONE_TRUTH + TWO_DIMENSIONAL
        )
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(section, dataclasses.fields(section)[0].name, None)
    assert config.encoding_settings.grid == GridSettings(3, 4, 9, 5, 2.0)
    assert config.encoding_settings.setting == GridSpec(3, 4, 9, 5, 2.0, hashed=True)
    # The optimizer's hyper-parameters come from its section, in its order
    assert OPTIMIZERS["adamw"].hyper_values(config.optimizer_settings) == [0.5, 0.75, 1e-5, 0.25, 0.0, 0.0]
    assert config.structure().encoding_settings.setting == config.encoding_settings.setting


def test_the_truth_section_says_what_the_outputs_learn():
    config = validate(Config(targets=["x", "y", "x*y"]))
    assert config.truth_settings.outputs == config.output_dim == 3
    assert config.truth_settings.labels() == ["x", "y", "x*y"]
    shape = config.replace(sdf="circle")
    assert shape.output_dim == 1 and shape.target_labels() == ["signed distance to circle"]
    spiral = config.replace(dataset={"generator": "spiral"}, domain=[-6.0, 6.0, -6.0, 6.0])
    assert spiral.output_dim == 1 and spiral.target_labels() == ["logit of class 1"]


def test_a_racer_shares_the_truth_and_data_sections():
    assert SHARED_FIELDS == {
        "targets", "slang_target", "dataset", "sdf", "image", "points", "noise", "train_ratio", "data_seed",
        "domain", "eval_grid", "dims", "z_range",
    }  # fmt: skip


def test_a_config_is_frozen():
    config = validate(Config())
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.lr = 0.5  # type: ignore[misc]
    assert config.replace(lr=0.5).lr == 0.5 and config.lr == 0.01


def test_validation_returns_a_new_config_and_leaves_its_argument_alone():
    raw = Config(lr=1, features=["y", "x"], domain=[-2, 2, -1, 1])
    checked = validate(raw)
    assert checked is not raw
    assert type(checked.lr) is float and checked.features == ["x", "y"] and checked.domain == [-2.0, 2.0, -1.0, 1.0]
    assert type(raw.lr) is int and raw.features == ["y", "x"] and type(raw.domain[0]) is int, "the argument as it was"
    assert validate(checked) == checked


def test_a_failed_validation_leaves_its_argument_alone():
    raw = Config(lr=1, batch_size=0)  # lr comes first in the table: checked, then batch size refused
    with pytest.raises(UserError, match="batch size"):
        validate(raw)
    assert type(raw.lr) is int


def _config_parameters(path: Path, root: Path = APP) -> list[str]:
    """Each function of `path` that takes a parameter named config or typed Config."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for arg in node.args.args + node.args.kwonlyargs + node.args.posonlyargs:
                annotation = ast.unparse(arg.annotation) if arg.annotation is not None else ""
                if arg.arg in ("config", "cfg") or "Config" in annotation.replace("Settings", ""):
                    found.append(f"{path.relative_to(root)}:{node.lineno} {getattr(node, 'name', 'lambda')}({arg.arg})")
    return found


def test_the_packages_below_config_take_their_sections_not_a_config():
    found = [
        hit for package in LOWER for path in sorted((APP / package).rglob("*.py")) for hit in _config_parameters(path)
    ]
    assert not found, "functions below app/config that take the whole Config:\n" + "\n".join(found)


def test_the_check_finds_a_function_taking_the_config(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text("def a(config): ...\ndef b(x: Config): ...\ndef c(loss: LossSettings): ...\nd = lambda config: 1\n")
    assert [hit.split(" ")[1] for hit in _config_parameters(path, tmp_path)] == ["a(config)", "b(x)", "lambda(config)"]
