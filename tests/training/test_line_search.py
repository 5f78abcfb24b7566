"""The Moré–Thuente line search: the strong Wolfe conditions on the test
functions of Moré and Thuente (1994), from steps far too small and far too
large; and its failure modes."""

import math

import numpy as np
import pytest

from skcrf._training.line_search import more_thuente


def _phi1(beta=2.0):        # minimum at sqrt(beta)
    return lambda a: (-a / (a * a + beta), (a * a - beta) / (a * a + beta) ** 2)


def _phi2(beta=0.004):      # minimum at 1.6
    return lambda a: ((a + beta) ** 5 - 2 * (a + beta) ** 4,
                      5 * (a + beta) ** 4 - 8 * (a + beta) ** 3)


def _phi3(beta=0.01, ell=39):   # wiggly, minimum at 1
    def phi(a):
        if a <= 1 - beta:
            psi, dpsi = 1 - a, -1.0
        elif a >= 1 + beta:
            psi, dpsi = a - 1, 1.0
        else:
            psi, dpsi = (a - 1) ** 2 / (2 * beta) + beta / 2, (a - 1) / beta
        w = 2 * (1 - beta) / (ell * math.pi)
        return (psi + w * math.sin(ell * math.pi * a / 2),
                dpsi + (1 - beta) * math.cos(ell * math.pi * a / 2))
    return phi


def _gamma(b):
    return math.sqrt(1 + b * b) - b


def _phi456(b1, b2):        # the paper's functions 4-6
    def phi(a):
        u1 = math.sqrt((1 - a) ** 2 + b2 * b2)
        u2 = math.sqrt(a * a + b1 * b1)
        f = _gamma(b1) * u1 + _gamma(b2) * u2
        g = _gamma(b1) * (a - 1) / u1 + _gamma(b2) * a / u2
        return f, g
    return phi


CASES = [
    ("phi1", _phi1(), 1e-3, 0.1),
    ("phi2", _phi2(), 0.1, 0.1),
    ("phi3", _phi3(), 0.1, 0.1),
    ("phi4", _phi456(1e-3, 1e-3), 1e-3, 1e-3),
    ("phi5", _phi456(1e-2, 1e-3), 1e-3, 1e-3),
    ("phi6", _phi456(1e-3, 1e-2), 1e-3, 1e-3),
]


@pytest.mark.parametrize("name, phi, ftol, gtol", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("stp0", [1e-3, 1e-1, 1e1, 1e3])
def test_strong_wolfe_conditions_hold(name, phi, ftol, gtol, stp0):
    f0, g0 = phi(0.0)
    res = more_thuente(phi, f0, g0, stp0, ftol=ftol, gtol=gtol, xtol=1e-10,
                       max_evals=50)
    assert res.status == "converged", res
    f, g = phi(res.stp)
    assert (f, g) == (res.f, res.g)
    assert f <= f0 + ftol * res.stp * g0
    assert abs(g) <= gtol * abs(g0)
    # a handful of evaluations, as in the paper's tables (at most 16 there)
    assert res.n_evals <= 20


def test_first_step_accepted_when_it_satisfies_the_conditions():
    phi = _phi1()
    f0, g0 = phi(0.0)
    calls = []

    def counted(a):
        calls.append(a)
        return phi(a)

    res = more_thuente(counted, f0, g0, math.sqrt(2.0))
    assert res.status == "converged" and calls == [math.sqrt(2.0)] and res.n_evals == 1


def test_returns_the_last_step_evaluated_with_its_values():
    phi = _phi2()
    f0, g0 = phi(0.0)
    seen = []

    def recorded(a):
        seen.append((a, *phi(a)))
        return phi(a)

    res = more_thuente(recorded, f0, g0, 1e-3)
    assert (res.stp, res.f, res.g) == seen[-1] and res.n_evals == len(seen)


def test_budget_is_reported_not_passed_as_success():
    # the derivative points down but the function goes up: no step satisfies
    # sufficient decrease
    res = more_thuente(lambda a: (a, -1.0), 0.0, -1.0, 1.0, max_evals=7)
    assert res.status != "converged"
    assert res.n_evals <= 7


def test_rejects_an_ascent_direction_and_a_non_positive_step():
    with pytest.raises(ValueError, match="descent"):
        more_thuente(_phi1(), 0.0, 0.5, 1.0)
    with pytest.raises(ValueError, match="positive"):
        more_thuente(_phi1(), 0.0, -0.5, 0.0)


def test_quadratic_exact_step_in_one_or_two_evaluations():
    rng = np.random.default_rng(0)
    for _ in range(20):
        c = rng.uniform(0.1, 10)
        phi = lambda a, c=c: (c * (a - 1) ** 2, 2 * c * (a - 1))   # noqa: E731
        res = more_thuente(phi, c, -2 * c, rng.uniform(0.01, 100), gtol=0.1)
        assert res.status == "converged" and abs(res.stp - 1) <= 0.1 and res.n_evals <= 4
