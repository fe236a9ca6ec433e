"""Config and target expressions: what is accepted, what each compiles to."""

import numpy as np
import pytest

from app.config import Config, from_dict, load_preset, preset_names, validate
from app.errors import UserError
from app.shadergen import network_source
from app.targets import target_to_numpy, target_to_slang


def test_shapes_follow_encoding_and_targets():
    assert Config().layer_sizes == [4, 16, 4] and Config().param_count == 148  # the tutorial's network
    fourier = validate(Config(encoding="fourier", frequencies=3, targets=["x"], hidden=[8, 8]))
    assert fourier.layer_sizes == [14, 8, 8, 1]


def test_targets_compile_to_matching_slang_and_numpy():
    text = "sin(3*x) * pow(y, 2) - max(x, -0.5) / (1 + abs(y)) + x**2"
    assert target_to_slang(text) == ("(((sin((3.0 * p.x)) * pow(p.y, 2.0)) - (max(p.x, (-0.5)) / (1.0 + abs(p.y))))"
                                     " + pow(p.x, 2.0))")
    x, y = np.array([0.3, -0.7]), np.array([1.2, 0.4])
    expected = np.sin(3 * x) * y**2 - np.maximum(x, -0.5) / (1 + np.abs(y)) + x**2
    np.testing.assert_allclose(target_to_numpy(text)(x, y), expected)


@pytest.mark.parametrize("text", ["x +", "z", "os.system('ls')", "x if y else 1", "sin(x, y)", "lambda: 1", "x < y", ""])
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
        config = load_preset(name)
        source = network_source(config)
        assert f"static const uint PARAM_COUNT = {config.param_count};" in source
    assert load_preset("tutorial").precision == "half"


def test_from_dict_rejects_wrong_types():
    with pytest.raises(UserError):
        from_dict({"batch_size": "many"})
    with pytest.raises(UserError):
        from_dict({"hidden": 16})
