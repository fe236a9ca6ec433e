"""The built-in shapes (app/truth/shapes): exact signed distances against brute force over densely
sampled boundaries, |grad| = 1 off the medial axis, the smooth union's formula, the grid's layout
and the boundary samples. numpy only, no GPU."""

import numpy as np
import pytest
from shape_reference import REFERENCES, SPACING, brute_signed_distance, nearest_sample

from app.truth.shapes import BUILTINS, load_shape, shape_distance

RNG = np.random.default_rng(7)
POINTS = RNG.uniform(-1, 1, (1000, 2))


@pytest.mark.parametrize("name", BUILTINS)
def test_builtin_distance_matches_brute_force(name):
    """Within 1e-3 everywhere in [-1, 1]^2 (the reference's own error is below SPACING / 2), the
    sign from a closed-form or crossing-number inside test."""
    assert set(REFERENCES) == set(BUILTINS)
    error = np.abs(shape_distance(name, POINTS) - brute_signed_distance(name, POINTS))
    assert error.max() < 1e-3


@pytest.mark.parametrize("name", BUILTINS)
def test_builtin_gradient_has_unit_length_off_the_medial_axis(name):
    """Central differences of step h give |grad| = 1 to 1e-6 wherever the four stencil points'
    nearest boundary samples are in one place (a stencil across the medial axis has them jump to
    another part of the boundary); nine in ten of 400 points qualify."""
    h = 1e-5
    steps = np.array([[h, 0], [-h, 0], [0, h], [0, -h]])
    stencil = (POINTS[:400, None, :] + steps[None]).reshape(-1, 2)
    _, feet = nearest_sample(stencil, REFERENCES[name][0]())
    feet = feet.reshape(-1, 4, 2)
    spread = np.hypot(*(feet.max(axis=1) - feet.min(axis=1)).T)
    away = spread < 3 * SPACING
    assert away.mean() > 0.9
    d = shape_distance(name, stencil).reshape(-1, 4)
    gradient = np.stack([d[:, 0] - d[:, 1], d[:, 2] - d[:, 3]], axis=1) / (2 * h)
    assert np.abs(np.hypot(*gradient[away].T) - 1).max() < 1e-6


def test_closed_forms_at_known_points():
    at = np.array([[0.0, 0.0], [1.0, 0.0], [0.5 + 0.3, 0.35 + 0.4], [0.0, 0.45], [0.0, 0.6]])
    np.testing.assert_allclose(shape_distance("circle", at[:2]), [-0.5, 0.5], atol=1e-15)
    np.testing.assert_allclose(shape_distance("box", at[:3]), [-0.35, 0.5, 0.5], atol=1e-15)
    # the rounded box's corner circle is centred at (0.35, 0.2), radius 0.15
    assert shape_distance("rounded-box", np.array([[0.35 + 0.3, 0.2 + 0.4]]))[0] == pytest.approx(0.5 - 0.15)
    np.testing.assert_allclose(shape_distance("ring", at[3:4]), [-0.15], atol=1e-15)
    np.testing.assert_allclose(shape_distance("star", at[4:5]), [0.0], atol=1e-15)  # its top point


def test_smooth_union_is_the_polynomial_smooth_minimum():
    """min(a, b) - k/4 max(0, 1 - |a - b|/k)^2 with k = 0.1, against the two shapes' distances;
    equal to the plain min where |a - b| >= k."""
    a, b = shape_distance("circle", POINTS), shape_distance("star", POINTS)  # as tested above
    expected = np.minimum(a, b) - 0.1 / 4 * np.maximum(0, 1 - np.abs(a - b) / 0.1) ** 2
    union = shape_distance("circle+star", POINTS)
    np.testing.assert_allclose(union, expected, atol=1e-12)
    assert (union < np.minimum(a, b)).sum() > 50  # the blend is there
    apart = np.abs(a - b) >= 0.1 + 1e-3
    assert apart.sum() > 250
    np.testing.assert_array_equal(union[apart], np.minimum(a, b)[apart])


@pytest.mark.parametrize("spec", [*BUILTINS, "circle+box", "ring+star"])
def test_boundary_samples_lie_on_the_zero_level_with_outward_normals(spec):
    field = load_shape(spec, (-1, 1, -1, 1), resolution=32)
    points = field.points.astype(np.float64)
    assert field.kind == "builtin" and len(points) > 300
    assert np.abs(shape_distance(spec, points)).max() < 1e-6
    normals = field.normals.astype(np.float64)
    np.testing.assert_allclose(np.hypot(*normals.T), 1, atol=1e-6)
    step = 1e-3  # a step along the outward normal goes out by as much (a blend's |grad| < 1: less)
    out = shape_distance(spec, points + step * normals)
    if "+" in spec:
        assert out.min() > 0.5 * step and out.max() < step * (1 + 1e-4)
    else:
        np.testing.assert_allclose(out, step, atol=2e-5)
    gaps, _ = nearest_sample(points, np.concatenate([points[1:], points[:1]]))
    assert np.median(gaps) < 0.01  # dense enough to draw the outline


def test_grid_layout_matches_the_image_truth():
    """Pixel (c, r) at x = x0 + (c + 0.5)/W (x1 - x0), y = y1 - (r + 0.5)/H (y1 - y0): row 0 on top."""
    domain = (-1.2, 0.8, -0.6, 1.0)
    field = load_shape("star", domain, resolution=40)
    assert field.distance.shape == (40, 40) and field.distance.dtype == np.float32
    assert field.name == "star" and field.domain == domain
    rows, cols = np.mgrid[:40, :40]
    x = -1.2 + (cols + 0.5) / 40 * 2.0
    y = 1.0 - (rows + 0.5) / 40 * 1.6
    expected = shape_distance("star", np.stack([x.ravel(), y.ravel()], axis=1)).reshape(40, 40)
    np.testing.assert_allclose(field.distance, expected, atol=1e-6)
    assert field.distance[0, 20] > field.distance[39, 20] - 0.9  # the top point is near the top rows


def test_a_union_is_named_by_its_parts():
    field = load_shape(" circle + box ", (-1, 1, -1, 1), resolution=16)
    assert field.name == "circle+box" and field.kind == "builtin"
    np.testing.assert_array_equal(shape_distance(field, POINTS), shape_distance("circle+box", POINTS))
