"""The evaluation grid's cell centres on the host (app/truth/eval_grid.py) against tests/reference.py's:
one cell (the heatmaps' hover) and the neuron views' coarser grid are cells of the same grid."""

from __future__ import annotations

import numpy as np
from reference import grid_centres as reference_centres

from app.truth.eval_grid import cell_centre, grid_centres
from app.views.neurons import neuron_points, neuron_stride

DOMAIN = [-0.5, 2.0, -3.0, 1.0]


def test_grid_centres_match_the_reference():
    x, y = grid_centres(DOMAIN, 10)
    rx, ry = reference_centres(DOMAIN, 10)
    np.testing.assert_allclose(x, rx, rtol=0, atol=1e-15)
    np.testing.assert_allclose(y, ry, rtol=0, atol=1e-15)
    assert x[0, 0] == -0.5 + 0.125 and y[0, 0] == -3.0 + 0.2 and x[0, -1] == 2.0 - 0.125


def test_one_cell_and_the_neuron_grid_are_cells_of_the_same_grid():
    x, y = grid_centres(DOMAIN, 100)
    assert cell_centre(DOMAIN, 100, 7, 3) == (x[3, 7], y[3, 7])
    nx, ny = neuron_points(DOMAIN, 100)
    picked = np.arange(0, 100, neuron_stride(100))
    assert neuron_stride(100) > 1 and nx.shape == (picked.size, picked.size)
    np.testing.assert_array_equal(nx, x[np.ix_(picked, picked)])
    np.testing.assert_array_equal(ny, y[np.ix_(picked, picked)])
