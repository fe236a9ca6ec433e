"""The target grammar on valid, invalid and hostile input: what it accepts, where it says the
problem is, and that nothing but what it prints from the checked tree reaches Slang."""

from __future__ import annotations

import re

import numpy as np
import pytest
from reference import grid_centres

from app.config.config import Config, validate
from app.errors import UserError
from app.kernels.network_module import network_source
from app.kernels.planning import plan_for
from app.truth.finite import TRUTH_LIMIT, check_finite
from app.truth.targets import (
    MAX_TARGET_DEPTH,
    MAX_TARGET_LENGTH,
    TargetError,
    parse_target,
    target_presets,
    target_to_numpy,
    target_to_slang,
)
from app.views.evaluation import GridEvaluator

VALID = {
    "x": lambda x, y: x,
    "  2*x + y  ": lambda x, y: 2 * x + y,
    "sin(3*x) * cos(2*y)": lambda x, y: np.sin(3 * x) * np.cos(2 * y),
    "exp(-4*(x*x + y*y))": lambda x, y: np.exp(-4 * (x * x + y * y)),
    "abs(x) - min(x, y) + max(0.5, y)": lambda x, y: np.abs(x) - np.minimum(x, y) + np.maximum(0.5, y),
    "x**2 - y**3 + pow(x, 4) + (2 + y)**-1": lambda x, y: x**2 - y**3 + x**4 + 1 / (2 + y),
    "sqrt(x*x + y*y) + log(3 + x) + tan(0.5*y)": lambda x, y: np.hypot(x, y) + np.log(3 + x) + np.tan(0.5 * y),
    "pow(2 + x, 1.5) + 1e-3 + 0x10 * 1_000 * y": lambda x, y: (2 + x) ** 1.5 + 1e-3 + 16000 * y,
    "-(-x) + +y # a comment: } void f() {": lambda x, y: x + y,
    # ^ is a power, as ** (right-associative, above unary minus); pi and e are constants
    "-x^2 + (x + y)^3 - 2^y^2 + x^-1": lambda x, y: -(x**2) + (x + y) ** 3 - 2 ** (y**2) + 1 / x,
    "e^x * pi + 2e-1*e - pi^2": lambda x, y: np.e**x * np.pi + 0.2 * np.e - np.pi**2,
}

# (text, the column the error names or None, a word of the message)
INVALID = [
    ("", None, "non-empty"),
    ("   ", None, "non-empty"),
    ("z", 1, "unknown name 'z'"),
    ("x + t", 5, "unknown name 't'"),
    ("sin(x", 4, "never closed"),
    ("x +", 4, "invalid syntax"),
    ("x..y", 3, "invalid syntax"),
    ("sin(x, y)", 1, "sin takes 1 argument"),
    ("pow(x)", 1, "pow takes 2 arguments"),
    ("floor(x)", 1, "unknown function 'floor'"),
    ("x < y", 1, "a comparison"),
    ("x if y else 1", 1, "a conditional"),
    ("lambda: 1", 1, "a lambda"),
    ("'x'", 1, "this constant"),
    ("True + x", 1, "this constant"),
    ("1j * x", 1, "this constant"),
    ("x @ y", 1, "this operator"),
    ("x % 2", 1, "this operator"),
    ("(x, y)", 1, "a tuple"),
    ("1e39 * x", 1, "too large for a 32-bit float"),
    ("1" + "0" * 400 + " + x", 1, "too large"),
    # columns name the typed text, where each ^ is one character (Python parses it as **)
    ("x^2 + t", 7, "unknown name 't'"),
    ("  x^2^3 + sin(y)^2 @ x", 11, "this operator"),
    ("x^", 3, "invalid syntax"),
    ("x ^ ^ 2", 5, "invalid syntax"),
    ("x^2 < y", 1, "a comparison"),
]

HOSTILE = [
    ("__import__('os')", 1, "unknown function '__import__'"),
    ("__import__('os').system('ls')", 1, "an attribute"),
    ("os.system('ls')", 1, "an attribute"),
    ("sin(x) + eval('x')", 10, "unknown function 'eval'"),
    ("x.__class__", 1, "an attribute"),
    ("sin.__globals__", 1, "an attribute"),
    ("x[0]", 1, "a subscript"),
    ("(lambda: 1)()", 2, "a lambda"),
    ("sin(*[x])", 1, "sin takes 1 argument"),
    ("sin(x=1)", 1, "this call"),
    ("x; } void f() {", 4, "unmatched '}'"),
    ('x); } [shader("compute")] void f() { (x', 2, "unmatched ')'"),
    ("p.x", 1, "an attribute"),
    ("sin(x) /* */", 9, "invalid syntax"),
    ('#include "x"', 13, "invalid syntax"),
    ("x\ny", 3, "invalid syntax"),
    ("x\0", None, "NUL character"),
    ("f'{x}'", 1, "a string"),
]


@pytest.mark.parametrize("text", VALID)
def test_valid_targets_compile_to_matching_slang_and_numpy(text):
    x, y = np.array([0.3, -0.7, 0.9]), np.array([0.25, 0.4, -0.6])
    np.testing.assert_allclose(target_to_numpy(text)(x, y), VALID[text](x, y), rtol=1e-12)
    source = target_to_slang(text)
    # What reaches Slang is printed from the tree: p.x/p.y, numbers, operators, parentheses,
    # commas and the allowed function names, nothing else of the text (no comment, no brace).
    tokens = re.findall(r"[A-Za-z_][A-Za-z_0-9.]*|\d+(?:\.\d*)?(?:e[-+]?\d+)?|\S", source)
    allowed = {"p.x", "p.y", "sin", "cos", "tan", "exp", "log", "sqrt", "abs", "pow", "min", "max", "powInteger"}
    for token in tokens:
        assert token in allowed or re.fullmatch(r"[-+*/(),]|\d+(?:\.\d*)?(?:e[-+]?\d+)?", token), (text, token)
    assert "inf" not in source and "#" not in source and "}" not in source


@pytest.mark.parametrize(
    "text,column,words", INVALID + HOSTILE, ids=lambda v: repr(v)[:40] if isinstance(v, str) else None
)
def test_rejected_targets_name_the_problem_and_its_column(text, column, words):
    with pytest.raises(TargetError) as caught:
        parse_target(text)
    assert caught.value.column == column, str(caught.value)
    assert words in str(caught.value), str(caught.value)
    if column is not None:
        assert f"at column {column}" in str(caught.value)
    assert "\n" not in str(caught.value), "one line"
    with pytest.raises(UserError):
        validate(Config(targets=[text]))


def test_deep_nesting_is_refused_before_the_parser_at_the_first_bracket_too_deep():
    deep = "(" * 300 + "x" + ")" * 150  # 451 characters: within the length limit
    with pytest.raises(TargetError) as caught:
        parse_target(deep)
    assert caught.value.column == MAX_TARGET_DEPTH + 1 and "nested more than 40" in str(caught.value)
    parse_target("(" * MAX_TARGET_DEPTH + "x" + ")" * MAX_TARGET_DEPTH)  # the limit itself is fine
    with pytest.raises(TargetError, match="nested more than 40"):
        parse_target("-" * 60 + "x")  # deep without brackets: the tree's depth is checked too


def test_long_input_is_refused_by_length_before_parsing():
    with pytest.raises(TargetError, match=f"at most {MAX_TARGET_LENGTH} characters"):
        parse_target("x+" * 5000 + "x")  # 10,001 characters
    with pytest.raises(TargetError, match="at most"):
        parse_target("x" * 10_000)


def test_generated_module_holds_only_the_printed_expression():
    hostile_comment = "x + y # } void evil() {"
    source = network_source(plan_for(validate(Config(targets=[hostile_comment, "x**2"]))))
    assert "evil" not in source and "#" not in source.split("groundTruth")[1].split("}")[0]
    assert "(p.x + p.y)" in source and "powInteger(p.x, 2)" in source


def test_presets_are_the_issues_list_and_all_pass_the_grammar():
    presets = dict(target_presets())
    assert list(presets) == ["the tutorial's four", "ripples", "Gaussian bump", "product of sines", "ring"]
    assert presets["the tutorial's four"] == Config().targets
    for expressions in presets.values():
        for text in expressions:
            assert np.all(np.isfinite(target_to_numpy(text)(np.linspace(-1, 1, 9), np.linspace(-1, 1, 9))))


def test_a_caret_is_the_power_that_two_stars_are():
    for caret, stars in [("x^2", "x**2"), ("-x^2", "-(x**2)"), ("x^2^3", "x**(2**3)"), ("2^-y", "2**(-y)")]:
        assert target_to_slang(caret) == target_to_slang(stars), caret
    x = np.array([-1.5, 0.5, 2.0])
    np.testing.assert_array_equal(target_to_numpy("-x^2")(x, x), -(x**2))  # not (-x)**2
    assert target_to_numpy("2^3^2")(1.0, 1.0) == 512.0  # 2^(3^2), not (2^3)^2 = 64


def test_pi_and_e_do_not_clash_with_numbers():
    assert target_to_numpy("1e-1*e + 2E1 + e")(0.0, 0.0) == pytest.approx(0.1 * np.e + 20 + np.e)
    assert target_to_slang("e") == repr(np.e) and target_to_slang("pi") == repr(np.pi)
    with pytest.raises(TargetError, match="unknown name 'ex'"):
        parse_target("ex + 1")


def test_a_caret_target_on_the_gpu_matches_numpy_and_its_derivatives(make_trainer):
    """The Slang printed for ^ (truth and Slang's forward derivative) against the numpy twin and
    the closed-form derivatives."""
    text = "-x^2 + (x + y)^3 - 2^y^2 + e^x*pi"
    evaluation = GridEvaluator(make_trainer(targets=[text, "x"]), 20).evaluate()
    x, y = (a.astype(np.float64) for a in grid_centres([-1, 1, -1, 1], 20))
    np.testing.assert_allclose(evaluation.truths[..., 0], target_to_numpy(text)(x, y), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        evaluation.truths[..., 0], -(x**2) + (x + y) ** 3 - 2 ** (y**2) + np.exp(x) * np.pi, rtol=1e-5, atol=1e-5
    )
    d = evaluation.derivatives[..., 0, :].astype(np.float64)
    np.testing.assert_allclose(d[..., 2], -2 * x + 3 * (x + y) ** 2 + np.exp(x) * np.pi, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(d[..., 3], 3 * (x + y) ** 2 - 2 ** (y**2) * np.log(2) * 2 * y, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "text,words",
    [
        ("1/x", "is inf at x = 0"),  # no cell centre is on x = 0; the line x = 0 is checked
        ("x/(x*y)", "is nan at x = 0"),
        ("1/(x + 1e-9)", "is 1e+09 at x = 0"),  # finite, but a pole the points come close to
        ("exp(30*x)", "is 1.069e+13 at x = 1"),
    ],
)
def test_a_truth_infinite_or_beyond_the_limit_on_the_domain_is_refused(text, words):
    with pytest.raises(UserError) as error:
        check_finite([text], [-1, 1, -1, 1], 64)
    message = str(error.value)
    assert words in message and "must be finite over the whole domain, within ±1e+06" in message, message
    assert "\n" not in message


def test_a_large_truth_within_the_limit_is_accepted():
    check_finite(["1000*sin(x) + x^2", "1/x"], [0.5, 1, -1, 1], 64)  # 1/x: 0 is off the domain
    check_finite([f"{TRUTH_LIMIT} * x"], [-1, 1, -1, 1], 64)
    with pytest.raises(UserError):
        check_finite([f"{TRUTH_LIMIT * 1.01} * x"], [-1, 1, -1, 1], 64)
