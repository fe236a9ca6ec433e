"""Config and target expressions: what is accepted, what each compiles to."""

import re

import numpy as np
import pytest

from app.config.config import Config, validate
from app.config.files import load_preset, preset_names
from app.config.records import from_dict
from app.errors import UserError
from app.kernels.network_module import network_source
from app.kernels.planning import plan_for
from app.truth.targets import target_to_numpy, target_to_slang


def test_shapes_follow_encoding_and_targets():
    plan = plan_for(Config())
    assert plan.sizes == (4, 16, 4) and plan.param_count == 148  # the tutorial's network
    assert [(layer.offset, layer.bias_offset, layer.end) for layer in plan.layers] == [(0, 64, 80), (80, 144, 148)]
    fourier = plan_for(validate(Config(encoding="fourier", frequencies=3, targets=["x"], hidden=[8, 8])))
    assert fourier.sizes == (14, 8, 8, 1)


def test_targets_compile_to_matching_slang_and_numpy():
    text = "sin(3*x) * pow(y, 2) - max(x, -0.5) / (1 + abs(y)) + x**2"
    assert target_to_slang(text) == (
        "(((sin((3.0 * p.x)) * powInteger(p.y, 2)) - (max(p.x, (-0.5)) / (1.0 + abs(p.y)))) + powInteger(p.x, 2))"
    )
    assert target_to_slang("pow(x + 2, 0.5) * y ** -1") == "(pow((p.x + 2.0), 0.5) * powInteger(p.y, -1))"
    x, y = np.array([0.3, -0.7]), np.array([1.2, 0.4])
    expected = np.sin(3 * x) * y**2 - np.maximum(x, -0.5) / (1 + np.abs(y)) + x**2
    np.testing.assert_allclose(target_to_numpy(text)(x, y), expected)


@pytest.mark.parametrize(
    "text", ["x +", "z", "os.system('ls')", "x if y else 1", "sin(x, y)", "lambda: 1", "x < y", ""]
)
def test_bad_targets_are_rejected(text):
    with pytest.raises(UserError):
        validate(Config(targets=[text]))


def test_structural_and_hot_fields():
    base = Config()
    assert base.replace(lr=0.5).structure() == base.structure()
    assert base.replace(hidden=[16, 8]).structure() != base.structure()
    with pytest.raises(UserError):
        base.replace(batch_size=0)


def test_presets_load_and_generate_source():
    assert {"default", "tutorial"} <= set(preset_names())
    for name in preset_names():
        plan = plan_for(load_preset(name))
        source = network_source(plan)
        assert f"static const uint PARAM_COUNT = {plan.param_count};" in source
    assert load_preset("tutorial").precision == "half"


def test_from_dict_rejects_wrong_types():
    with pytest.raises(UserError):
        from_dict({"batch_size": "many"})
    with pytest.raises(UserError):
        from_dict({"hidden": 16})


def test_constants_are_defined_once_in_python_and_emitted():
    """The LeakyReLU slope, optimizer ids and heatmap panel ids reach the Slang module from
    app.model and app.kernels.view_constants; no shader file defines them itself."""
    from pathlib import Path

    source = network_source(plan_for(Config()))
    for line in (
        "static const float LEAKY_RELU_SLOPE = 0.01;",
        "static const uint OPTIMIZER_SGD = 0;",
        "static const uint OPTIMIZER_ADAM = 1;",
        "static const uint PANEL_TRUTH = 0;",
        "static const uint PANEL_ERROR = 2;",
    ):
        assert line in source
    root = Path(__file__).parent.parent  # shaders/ and each gradient path's Slang under app/
    shaders = "".join(p.read_text() for folder in ("shaders", "app") for p in (root / folder).rglob("*.slang"))
    assert "static const uint OPTIMIZER_" not in shaders and "static const float slope" not in shaders


def test_the_config_table_derives_the_lists():
    """The structural and hot fields, the parser's options, the --resume overrides and the
    options refused beside --resume and --load-network all come from the fields' Specs."""
    import dataclasses

    from app.config.config import FIELDS, HOT_FIELDS, STRUCTURAL_FIELDS, Structure
    from app.config.spec import HOT, STRUCTURE, TRUTH
    from app.entry import cli_args, cli_checks, cli_fields
    from app.kernels.planning import _plan

    # What the table should hold, spelled out here: a field added, dropped or given another kind
    # shows as a difference from these lists.
    structural = ("hidden", "activation", "output_activation", "encoding", "frequencies", "features")
    structural += ("grid_levels", "grid_features", "grid_log2_size", "grid_base_resolution", "grid_level_scale")
    structural += ("precision", "matmul")
    truth = ("targets", "slang_target", "dataset", "sdf", "image", "dims")
    data = ("points", "noise", "train_ratio", "data_seed", "regularization", "reg_rate", "grad_weight", "eikonal")
    data += ("normal_weight",)
    hot = (*data, "optimizer", "lr", "beta1", "beta2", "epsilon", "weight_decay", "batch_size", "seed", "eval_grid")
    assert STRUCTURAL_FIELDS == (*structural, *truth)
    assert HOT_FIELDS == (*hot[:9], "domain", "z_range", *hot[9:])
    assert [name for name in FIELDS if FIELDS[name].kind == TRUTH] == list(truth)
    assert {FIELDS[name].kind for name in structural} == {STRUCTURE} and FIELDS["lr"].kind == HOT
    assert [f.name for f in dataclasses.fields(Structure)] == [*structural, *truth]
    assert cli_fields.HOT_OPTIONS == hot
    args = cli_args.build_parser().parse_args(["--beta2", "0.9", "--matmul", "simt", "--target", "x"])
    config = cli_args.config_from_args(args)
    assert (config.beta2, config.matmul, config.targets) == (0.9, "simt", ["x"])
    # the structure is hashable and names its fields; configs that differ in hot fields share a plan
    _plan.cache_clear()
    plan_for(Config(lr=0.5, beta1=0.2))
    plan_for(Config(batch_size=64))
    assert _plan.cache_info().hits == 1 and Config().structure().hidden == (16,)

    def refused(*argv: str) -> str:
        with pytest.raises(UserError) as caught:
            cli_checks._check_start(cli_args.build_parser().parse_args(list(argv)))
        return str(caught.value)

    assert refused("--resume", "a.ckpt", "--preset", "wide").startswith("--preset cannot be combined with --resume")
    assert refused("--load-network", "n.json", "--frequencies", "3").startswith("--frequencies cannot")
    cli_checks._check_start(cli_args.build_parser().parse_args(["--load-network", "n.json", "--precision", "half"]))
    cli_checks._check_start(cli_args.build_parser().parse_args(["--resume", "a.ckpt", "--beta1", "0.5"]))
    # network options beside --resume wait for the checkpoint: those that agree with it are taken
    cli_checks._check_start(cli_args.build_parser().parse_args(["--resume", "a.ckpt", "--matmul", "simt"]))


def test_ranges_and_choices_come_from_the_table():
    for fields, words in (
        (dict(beta1=1.0), "beta1 must be in [0, 1) (got 1.0)"),
        (dict(beta2=1.0), "beta2 must be below 1.0"),
        (dict(epsilon=0), "epsilon must be a finite number above 0"),
        (dict(eval_grid=1), "eval grid must be between 2 and 1024 (got 1)"),
        (dict(optimizer="lbfgs"), "optimizer must be one of sgd, adam"),
        (dict(output_activation="gelu"), "output activation must be one of"),
    ):
        with pytest.raises(UserError, match=re.escape(words)):
            validate(Config(**fields))
