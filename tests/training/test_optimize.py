"""The optimiser's result: our stopping rule, convergence, budgets, line-search failure."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from skcrf._training.optimize import minimize_lbfgs


class Counted:
    """A smooth convex function that counts its evaluations."""

    def __init__(self, scale=None):
        self.calls = 0
        self.scale = np.linspace(1.0, 50.0, 20) if scale is None else scale

    def __call__(self, x):
        self.calls += 1
        d = x - 1.0
        return float(np.sum(self.scale * d ** 2 + 0.1 * d ** 4)), \
            2 * self.scale * d + 0.4 * d ** 3


def run(fun, **kw):
    kw = dict(dict(max_iter=1000, tol=1e-5), **kw)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = minimize_lbfgs(fun, np.zeros(20), **kw)
    return res, [w for w in caught if issubclass(w.category, ConvergenceWarning)]


def test_stopping_rule_is_told_apart_and_does_not_warn():
    fun = Counted()
    res, warned = run(fun, tol=1e-3)
    assert res.reason == "tol" and not warned
    # the rule compares with the objective 10 iterations earlier
    f = res.loss_curve
    assert (f[-11] - f[-1]) / max(abs(f[-1]), 1) < 1e-3
    assert res.n_iter == len(res.history) == len(f)


def test_stopping_rule_firing_exactly_at_max_iter_does_not_warn():
    res, _ = run(Counted(), tol=1e-3)
    res2, warned = run(Counted(), tol=1e-3, max_iter=res.n_iter)
    assert res2.n_iter == res.n_iter
    assert res2.reason == "tol" and not warned


def test_max_iter_warns():
    res, warned = run(Counted(), tol=0.0, max_iter=3)
    assert res.reason == "max_iter" and res.n_iter == 3
    assert len(warned) == 1 and "max_iter=3" in str(warned[0].message)


def test_max_fun_warns_with_the_count():
    res, warned = run(Counted(), tol=0.0, max_fun=4)
    assert res.reason == "max_fun" and res.n_evals > 4
    assert len(warned) == 1 and f"{res.n_evals} evaluations" in str(warned[0].message)


def test_convergence_is_reported_without_warning():
    res, warned = run(Counted(), tol=0.0)
    assert res.reason == "converged" and not warned
    np.testing.assert_allclose(res.x, 1.0, atol=1e-6)


def test_line_search_failure_warns_instead_of_passing_as_convergence():
    def wrong_gradient(x):   # the gradient points uphill: no step can decrease f
        return float(np.sum((x - 1.0) ** 2)), -2 * (x - 1.0)

    res, warned = run(wrong_gradient, tol=0.0)
    assert res.reason == "line_search"
    assert len(warned) == 1 and "line search" in str(warned[0].message)
    np.testing.assert_array_equal(res.x, np.zeros(20))   # no step uphill taken


class Rounded(Counted):
    """Counted, its value rounded to a grid of 1e-9: near the optimum no
    step decreases it measurably, as rounding does to a large sum."""

    def __call__(self, x):
        f, g = super().__call__(x)
        return float(np.round(f * 1e9) / 1e9), g


def test_line_search_failure_within_tol_is_the_stopping_rule():
    """A search that fails where the slope cannot meet the stopping rule
    stops as the rule does, without a warning; with tol=0 it still warns."""
    res, warned = run(Rounded(), tol=1e-5, period=10)
    assert res.reason == "tol" and not warned
    np.testing.assert_allclose(res.x, 1.0, atol=1e-4)
    res, warned = run(Rounded(), tol=0.0)
    assert res.reason in ("line_search", "converged")
    assert bool(warned) == (res.reason == "line_search")


def test_no_extra_evaluation_and_fun_is_at_x():
    fun = Counted()
    res, _ = run(fun, tol=1e-4)
    assert fun.calls == res.n_evals
    assert res.fun == pytest.approx(fun(res.x)[0], rel=1e-15)
    assert res.fun == res.loss_curve[-1]


def test_monitor_can_stop_and_annotate():
    seen = []

    def monitor(record, x):
        record.extra["held_out"] = 0.5
        seen.append(record.iteration)
        return record.iteration == 4

    res, warned = run(Counted(), tol=0.0, monitor=monitor)
    assert res.reason == "monitor" and res.n_iter == 4 and not warned
    assert seen == [1, 2, 3, 4] and res.history[-1].extra == {"held_out": 0.5}


def test_owlqn_solves_the_lasso_with_exact_zeros():
    from sklearn.linear_model import Lasso

    from skcrf._training.optimize import minimize_owlqn

    rng = np.random.default_rng(0)
    A = rng.normal(size=(80, 30))
    b = A[:, :5] @ rng.normal(size=5) + 0.1 * rng.normal(size=80)
    alpha = 0.05

    def smooth(x):
        r = A @ x - b
        return 0.5 * float(r @ r), A.T @ r

    res = minimize_owlqn(smooth, np.zeros(30), c1=alpha * 80, max_iter=2000, tol=1e-12)
    ref = Lasso(alpha=alpha, fit_intercept=False, tol=1e-12, max_iter=100_000).fit(A, b)
    np.testing.assert_allclose(res.x, ref.coef_, atol=1e-6)
    np.testing.assert_array_equal(res.x == 0, ref.coef_ == 0)
    assert res.fun == pytest.approx(smooth(res.x)[0] + alpha * 80 * np.abs(res.x).sum())
    assert res.history[-1].n_active == np.count_nonzero(res.x)


def test_owlqn_max_iter_warns():
    from skcrf._training.optimize import minimize_owlqn

    with pytest.warns(ConvergenceWarning, match="OWL-QN"):
        res = minimize_owlqn(Counted(), np.zeros(20), c1=0.1, max_iter=2, tol=0.0)
    assert res.reason == "max_iter" and res.n_iter == 2


@pytest.mark.parametrize("bad_at", [0, 3])
@pytest.mark.parametrize("owlqn", [False, True])
def test_a_non_finite_gradient_raises_instead_of_passing_for_convergence(bad_at, owlqn):
    """A NaN in the gradient made the direction's slope NaN, which the loop
    read as "the gradient is zero": fit returned the initial weights without
    a warning. It must raise."""
    from skcrf._training.optimize import minimize_owlqn

    calls = {"n": 0}
    c = np.array([1.0, 30.0, 900.0])          # takes a few iterations

    def fun(x):
        calls["n"] += 1
        g = 2.0 * c * (x - 1.0)
        if calls["n"] > bad_at:
            g[1] = np.nan
        return float(np.sum(c * (x - 1.0) ** 2)), g

    with pytest.raises(FloatingPointError, match="not finite"):
        if owlqn:
            minimize_owlqn(fun, np.zeros(3), c1=0.1, max_iter=50, tol=0.0)
        else:
            minimize_lbfgs(fun, np.zeros(3), max_iter=50, tol=0.0)


# --------------------------------------------------------- solver="scipy"
def test_scipy_solver_reaches_the_same_optimum_as_ours():
    from skcrf import LinearChainCRF, SequenceFeaturizer
    from skcrf.datasets import load_sample_cws
    from skcrf.segmentation import words_to_tags

    sents = load_sample_cws()[:120]
    X = SequenceFeaturizer().fit_transform(["".join(s) for s in sents])
    y = [words_to_tags(s) for s in sents]
    ours = LinearChainCRF(c2=0.5, tol=1e-9, max_iter=2000).fit(X, y)
    ref = LinearChainCRF(c2=0.5, tol=1e-9, max_iter=2000, solver="scipy").fit(X, y)
    assert ref.stop_reason_ in ("tol", "converged")
    assert ref.objective_ == pytest.approx(ours.objective_, rel=1e-7)
    assert ref.predict(X) == ours.predict(X)
    np.testing.assert_allclose(ref.coef_, ours.coef_, atol=2e-3)
    # the first iterations are L-BFGS-B's either way (ours keeps its history in
    # float32, so they drift apart slowly)
    np.testing.assert_allclose(ref.loss_curve_[:5], ours.loss_curve_[:5], rtol=1e-6)


def test_scipy_solver_budget_stopping_rule_and_l1():
    from skcrf import LinearChainCRF

    X = [np.eye(3)[[0, 1, 2, 1]], np.eye(3)[[2, 1, 0]]]
    y = [["a", "b", "a", "b"], ["b", "b", "a"]]
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        crf = LinearChainCRF(solver="scipy", max_iter=2).fit(X, y)
    assert crf.n_iter_ == 2 and crf.stop_reason_ == "max_iter" and len(crf.history_) == 2
    crf = LinearChainCRF(solver="scipy", tol=1e-2).fit(X, y)
    f = crf.loss_curve_
    assert crf.stop_reason_ in ("tol", "converged")
    if crf.stop_reason_ == "tol":
        assert (f[-11] - f[-1]) / max(abs(f[-1]), 1) < 1e-2
    with pytest.raises(ValueError, match="c1 > 0 needs solver='lbfgs'"):
        LinearChainCRF(solver="scipy", c1=0.1).fit(X, y)


def test_convergence_warning_points_at_the_callers_line():
    # not at a line inside skcrf: the user must see which of their fits it was
    import numpy as np
    import pytest
    from sklearn.exceptions import ConvergenceWarning

    from skcrf import LinearChainCRF

    X = [np.eye(3), np.eye(3)[:2]]
    y = [["a", "b", "a"], ["b", "a"]]
    with pytest.warns(ConvergenceWarning) as record:
        LinearChainCRF(max_iter=2).fit(X, y)
    assert record[0].filename == __file__


def test_convergence_warning_of_a_pipeline_points_at_the_callers_line():
    import numpy as np
    import pytest
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    from skcrf import LinearChainCRF

    X = [np.eye(3), np.eye(3)[:2]]
    y = [["a", "b", "a"], ["b", "a"]]
    pipe = make_pipeline(FunctionTransformer(lambda X: X), LinearChainCRF(max_iter=2))
    with pytest.warns(ConvergenceWarning) as record:
        pipe.fit(X, y)
    assert record[0].filename == __file__
