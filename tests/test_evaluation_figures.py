"""A headless evaluation (Session.evaluate, and Session.advance's at eval_every: headless runs, races,
sweep trials) brings back its figures alone, in the submit and wait of the steps before it: they
match numpy's forward pass, and are bit for bit those of the whole maps read back (what
summary.json held before)."""

from __future__ import annotations

import numpy as np
from reference import forward_with_input_gradients, grid_centres, kernel_parameters, truth_gradient, truth_values

from app.config.config import Config, validate
from app.gpu.gpu import Gpu, HostCopy
from app.loop.headless_steps import SUBMIT_STEPS, submit_sizes
from app.loop.session import Session

GRID = 24


def _session(gpu) -> Session:
    session = Session(gpu, validate(Config(hidden=[12], activation="tanh", seed=3)), grid=GRID)
    session.trainer.train(20)
    return session


def test_figures_match_numpy_and_the_whole_maps(gpu):
    session = _session(gpu)
    loss = session.evaluate()
    c = session.config
    x, y = (v.ravel() for v in grid_centres(c.domain, GRID))
    out, gradient, _ = forward_with_input_gradients(c, kernel_parameters(c, session.trainer.parameters()), x, y)
    truth = truth_values(c, x, y)
    expected_loss = np.mean(np.sum((out - truth) ** 2, axis=1))
    expected_grad_loss = np.mean(np.sum((gradient - truth_gradient(c, x, y)) ** 2, axis=(1, 2)))
    assert expected_loss > 1e-3 and expected_grad_loss > 1e-3  # a kernel writing zeros fails below
    assert loss == session.eval_loss
    np.testing.assert_allclose(session.eval_loss, expected_loss, rtol=1e-4)
    np.testing.assert_allclose(session.eval_grad_loss, expected_grad_loss, rtol=1e-3)
    np.testing.assert_allclose(session.error_max[0], np.abs(out - truth).max(axis=0), rtol=1e-4)
    assert session.history.current.eval.last_x == 20
    whole = session.evaluator.read()  # the same pass's maps, reduced as before
    assert whole.step == 20
    assert (session.eval_loss, session.eval_grad_loss) == (whole.loss, whole.grad_loss)
    np.testing.assert_array_equal(session.error_max, whole.error_max)
    np.testing.assert_array_equal(session.invalid_cells, whole.invalid)


def test_an_evaluation_is_one_submit_with_no_staging_buffer(gpu, monkeypatch):
    session = _session(gpu)
    submits, staging = [], []
    submit_buffer, host_copy = gpu.submit_buffer, HostCopy.__init__
    monkeypatch.setattr(gpu, "submit_buffer", lambda buffer: submits.append(1) or submit_buffer(buffer))
    monkeypatch.setattr(HostCopy, "__init__", lambda *args: staging.append(1) or host_copy(*args))
    session.evaluate()
    assert len(submits) == 1, "the pass and its figures' copy go in one submit, with one wait"
    assert not staging, "the figures come back through the evaluator's own host copy"


def test_a_chunk_and_its_evaluation_share_one_wait(gpu, monkeypatch):
    session = _session(gpu)
    session.eval_every = 50
    waits, submit = [], Gpu.submit
    monkeypatch.setattr(gpu, "submit", lambda wait=True: waits.append(wait) or submit(gpu, wait))
    session.advance(30)
    assert waits.count(True) == 1, "the evaluation runs behind the steps, under their wait"
    assert session.history.current.eval.last_x == 50
    assert session.evaluator.complete.step == 50


def test_a_dropped_pass_leaves_the_one_before(gpu):
    session = _session(gpu)
    session.evaluate()
    before = session.evaluator.read()
    session.trainer.train(5)
    with gpu.submit() as encoder:
        session.record_evaluation(encoder)
    assert session.evaluator.read().step == 25
    session.drop_recorded_evaluation()
    after = session.evaluator.read()
    assert after.step == 20
    np.testing.assert_array_equal(after.predictions, before.predictions)
    np.testing.assert_array_equal(after.cell_loss, before.cell_loss)


def test_submit_sizes_start_small_and_double():
    assert submit_sizes(200) == [4, 8, 16, 32, 64, 64, 12]
    assert submit_sizes(3) == [3]
    assert sum(submit_sizes(SUBMIT_STEPS * 5 + 1)) == SUBMIT_STEPS * 5 + 1
