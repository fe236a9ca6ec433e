"""The activations one by one: the app's numpy twins against closed forms, far out where a naive
exponential overflows too, and each Slang struct of shaders/model/activations.slang on the GPU (its
value, hand-written derivative, derivative from its output, and Slang's forward and backward
derivatives of `apply`) against tests/reference.py's own numpy."""

from __future__ import annotations

import numpy as np
import pytest
import slangpy as spy
from reference import activate, activation_derivative

from app.config.config import Config, validate
from app.kernels.planning import plan_for
from app.model.activations import ACTIVATIONS, slang_constants

MODERATE = np.linspace(-8.0, 8.0, 161) + 0.03125  # off the ReLU kink at 0, exact in float32
# Pre-activations where e^|z| overflows float32 (past 88.7) and float64 (past 709.8).
FAR = np.array([-1000.0, -100.0, -90.0, -30.0, 30.0, 90.0, 100.0, 1000.0])
SMOOTH = ["softplus", "silu"]  # the activations trained on derivatives: checked far out too


def _closed_form(name: str, z: np.ndarray) -> np.ndarray:
    """From the definitions, in float64 at moderate z."""
    return {"softplus": lambda: np.log(1.0 + np.exp(z)), "silu": lambda: z / (1.0 + np.exp(-z))}[name]()


@pytest.mark.parametrize("name", SMOOTH)
def test_numpy_twins_match_their_closed_forms(name):
    np.testing.assert_allclose(ACTIVATIONS[name].numpy(MODERATE), _closed_form(name, MODERATE), rtol=1e-12)


def test_softplus_twin_does_not_overflow_far_out():
    softplus = ACTIVATIONS["softplus"].numpy
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        far = softplus(FAR)
        far32 = softplus(FAR.astype(np.float32))
    # log(1 + e^z) is z + log(1 + e^-z) = z + e^-z (1 + O(e^-z)) for large z, and e^z (1 + O(e^z))
    # for very negative z.
    expected = np.where(FAR > 0, FAR + np.exp(-np.abs(FAR)), np.exp(-np.abs(FAR)))
    np.testing.assert_allclose(far, expected, rtol=1e-12, atol=0.0)
    assert softplus(np.float64(100.0)) == 100.0 and softplus(np.float64(-100.0)) == pytest.approx(3.720076e-44)
    assert far32.dtype == np.float32 and np.all(np.isfinite(far32))
    assert far32[FAR == 100.0] == np.float32(100.0) and 0.0 <= far32[FAR == -100.0] <= 4e-44  # or flushed to 0


def test_silu_twin_does_not_overflow_far_out():
    silu = ACTIVATIONS["silu"].numpy
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        far = silu(FAR)
        far32 = silu(FAR.astype(np.float32))
    # z / (1 + e^-z) is z (1 - e^-z) for large z, and z e^z for very negative z, to O(e^-2|z|).
    expected = np.where(FAR > 0, FAR * (1.0 - np.exp(-np.abs(FAR))), FAR * np.exp(-np.abs(FAR)))
    np.testing.assert_allclose(far, expected, rtol=1e-12, atol=0.0)
    assert silu(np.float64(100.0)) == 100.0 and silu(np.float64(-100.0)) == pytest.approx(-3.720076e-42)
    assert far32.dtype == np.float32 and np.all(np.isfinite(far32))
    assert far32[FAR == 100.0] == np.float32(100.0) and -4e-42 <= far32[FAR == -100.0] <= 0.0  # or flushed to 0


def test_tiled_paths_decline_silu_as_they_decline_sin():
    """SiLU is not one-to-one (silu(-3) = -0.142 = silu(-0.343)), so its derivative does not follow
    from its output: a network too wide for thread accumulators takes group tiles, on tensor cores too,
    hidden or at the output; softplus, one-to-one, keeps the tiled paths."""
    assert not ACTIVATIONS["silu"].derivative_from_output and ACTIVATIONS["softplus"].derivative_from_output
    silu = ACTIVATIONS["silu"].numpy
    other = _other_z_of(silu, -3.0)
    assert other == pytest.approx(-0.343, abs=1e-3) and silu(np.float64(other)) == pytest.approx(silu(-3.0), abs=1e-12)
    wide = dict(hidden=[64, 64], precision="half")
    for fields in (dict(activation="sin"), dict(activation="silu"), dict(output_activation="silu")):
        for tensor_cores, cpu in ((True, False), (False, False), (False, True)):
            plan = plan_for(validate(Config(**wide, **fields)), tensor_cores=tensor_cores, cpu=cpu)
            assert plan.gradient_path == "group", (fields, tensor_cores, cpu, plan.gradient_path)
    softplus = plan_for(validate(Config(**wide, activation="softplus")), tensor_cores=True)
    assert softplus.gradient_path == "fused"


def _other_z_of(f, z: float) -> float:
    """The z' on the other side of SiLU's minimum (-1.278) with f(z') = f(z), by bisection."""
    low, high = -1.2784645, 0.0  # f rises from its minimum to f(0) = 0 here
    for _ in range(200):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if f(np.float64(middle)) < f(np.float64(z)) else (low, middle)
    return 0.5 * (low + high)


@pytest.fixture(scope="module")
def structs(device):
    """Every activation's struct, called through small wrappers compiled with the app's library."""
    wrappers = []
    for a in ACTIVATIONS.values():
        s = a.slang
        wrappers.append(f"""
float apply_{s}(float z) {{ return {s}.apply(z); }}
float derivative_{s}(float z) {{ return {s}.derivative(z); }}
float fromOutput_{s}(float z) {{ return {s}.derivativeFromOutput({s}.apply(z)); }}
float fwd_{s}(float z) {{ return fwd_diff({s}.apply)(diffPair(z, 1.0)).d; }}
float bwd_{s}(float z) {{ var p = diffPair(z); bwd_diff({s}.apply)(p, 1.0); return p.d; }}""")
    source = slang_constants() + '\n#include "model/activations.slang"\n' + "".join(wrappers)
    return spy.Module.load_from_source(device, "test_activation_structs", source)


def _call(structs, function: str, z: np.ndarray) -> np.ndarray:
    return getattr(structs, function)(z.astype(np.float32), _result="numpy").astype(np.float64)


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_slang_structs_match_numpy(structs, name):
    """apply, the training kernels' derivative, and Slang's fwd_diff (the derivative views') and
    bwd_diff of apply, within float32 rounding of the reference at moderate z."""
    s, z = ACTIVATIONS[name].slang, MODERATE.astype(np.float32).astype(np.float64)
    value, slope = activate(name, z), activation_derivative(name, z)
    np.testing.assert_allclose(_call(structs, f"apply_{s}", z), value, rtol=2e-6, atol=2e-6)
    for function in ("derivative", "fwd", "bwd"):
        np.testing.assert_allclose(_call(structs, f"{function}_{s}", z), slope, rtol=2e-6, atol=2e-6, err_msg=function)


@pytest.mark.parametrize("name", [name for name, a in ACTIVATIONS.items() if a.derivative_from_output])
def test_derivative_from_output_matches_the_derivative(structs, name):
    """The tiled kernels' derivative, from h = apply(z), where the activation says it can."""
    s, z = ACTIVATIONS[name].slang, MODERATE.astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(_call(structs, f"fromOutput_{s}", z), activation_derivative(name, z), atol=2e-6)


@pytest.mark.parametrize("name", SMOOTH)
def test_slang_structs_stay_finite_and_right_far_out(structs, name):
    """Where e^|z| overflows float32: values and every derivative finite and near the reference.
    The derivatives keep their relative accuracy (float32 flushes e^-100 to zero or keeps it as a
    denormal: within 1e-37 either way); a value such as log(1 + e^-30) is 0 in float32 (1 + e^-30
    rounds to 1), within 6e-8, half an ulp of 1."""
    s, z = ACTIVATIONS[name].slang, FAR
    with np.errstate(over="ignore"):
        value, slope = activate(name, z), activation_derivative(name, z)
    for function, expected, atol in (("apply", value, 6e-8), ("derivative", slope, 1e-37), ("fwd", slope, 1e-37),
                                     ("bwd", slope, 1e-37)):  # fmt: skip
        got = _call(structs, f"{function}_{s}", z)
        assert np.all(np.isfinite(got)), (function, got)
        np.testing.assert_allclose(got, expected, rtol=2e-6, atol=atol, err_msg=function)
