"""Config and target expressions: what is accepted, what each compiles to."""

import numpy as np
import pytest

from app.config import Config, from_dict, load_preset, preset_names, validate
from app.errors import UserError
from app.plan import plan_for
from app.shadergen import network_source
from app.targets import target_to_numpy, target_to_slang


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
    assert base.replace(lr=0.5).structure_key() == base.structure_key()
    assert base.replace(hidden=[16, 8]).structure_key() != base.structure_key()
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
    app.components; no shader file defines them itself."""
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
    shaders = "".join(p.read_text() for p in (Path(__file__).parent.parent / "shaders").glob("*.slang"))
    assert "static const uint OPTIMIZER_" not in shaders and "static const float slope" not in shaders
