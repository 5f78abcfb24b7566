"""The optimiser: scipy's L-BFGS-B, our stopping rule, and what its result means.

:func:`minimize_lbfgs` runs ``scipy.optimize.minimize(method="L-BFGS-B")``
on a function returning ``(value, gradient)`` and tells apart why it stopped
(:attr:`OptimizeResult.reason`):

``"tol"``
    our stopping rule (CRFsuite's): the objective improved by less than
    ``tol`` relative over the last ``period`` iterations;
``"monitor"``
    the caller's ``monitor`` asked to stop (early stopping);
``"converged"``
    scipy's own convergence test (projected gradient ~0);
``"max_iter"``, ``"max_fun"``
    the iteration / evaluation budget ran out;
``"line_search"``
    L-BFGS-B could not find a step that decreases the objective (scipy's
    "ABNORMAL" status): usually floating-point limits near the optimum
    when ``tol`` is very small.

The last three emit a ``ConvergenceWarning`` carrying scipy's message, as
scikit-learn's ``_check_optimize_result`` does. The result's ``fun`` is the
objective at ``x`` as the optimiser evaluated it: no extra evaluation.
"""

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

__all__ = ["minimize_lbfgs", "minimize_owlqn", "OptimizeResult", "IterationRecord"]


@dataclass
class IterationRecord:
    """One L-BFGS iteration, as ``verbose`` prints it and ``history_`` keeps it."""

    iteration: int
    objective: float
    grad_norm: float
    x_norm: float
    n_active: int
    step: float
    seconds: float
    n_evals: int
    extra: dict = field(default_factory=dict)

    def as_dict(self):
        out = {k: getattr(self, k) for k in ("iteration", "objective", "grad_norm",
                                             "x_norm", "n_active", "step", "seconds",
                                             "n_evals")}
        out.update(self.extra)
        return out

    def line(self):
        s = (f"iter {self.iteration:4d}  objective {self.objective:.6f}  "
             f"|grad| {self.grad_norm:.4e}  active {self.n_active:,}  "
             f"step {self.step:.3e}  {self.seconds:.2f}s")
        for k, v in self.extra.items():
            s += f"  {k} {v:.6f}" if isinstance(v, float) else f"  {k} {v}"
        return s


@dataclass
class OptimizeResult:
    x: np.ndarray
    fun: float
    n_iter: int
    n_evals: int
    reason: str
    message: str
    history: list

    @property
    def loss_curve(self):
        return [r.objective for r in self.history]


_WARN = {
    "max_iter": "L-BFGS did not converge within max_iter={max_iter} iterations; "
                "increase max_iter or loosen tol.",
    "max_fun": "L-BFGS stopped after {n_evals} evaluations of the objective "
               "(max_fun) before converging.",
    "line_search": "L-BFGS-B stopped: the line search found no step that decreases "
                   "the objective; the result may be short of the optimum (usually "
                   "within floating-point noise of it when tol is very small).",
}


class _Progress:
    """Records each iteration and applies the stopping rules shared by both
    optimisers: the caller's monitor, CRFsuite's gradient test (``epsilon``)
    and its objective rule (``tol`` over ``period`` iterations)."""

    def __init__(self, x0, tol, period, epsilon, verbose, monitor, n_active):
        self.history = []
        self.t_start = time.perf_counter()
        self.last_x = np.array(x0, dtype=np.float64, copy=True)
        self.tol, self.period, self.epsilon = tol, period, epsilon
        self.verbose, self.monitor = verbose, monitor
        self.n_active = n_active or np.count_nonzero

    def iteration(self, x, f, g, n_evals):
        """Record an iteration; returns the reason to stop, or None."""
        gnorm = float(np.linalg.norm(g)) if g is not None else float("nan")
        rec = IterationRecord(
            iteration=len(self.history) + 1, objective=float(f), grad_norm=gnorm,
            x_norm=float(np.linalg.norm(x)), n_active=int(self.n_active(x)),
            step=float(np.linalg.norm(x - self.last_x)),
            seconds=time.perf_counter() - self.t_start, n_evals=n_evals)
        self.last_x[:] = x
        self.history.append(rec)
        stop = bool(self.monitor(rec, x)) if self.monitor is not None else False
        if self.verbose:
            print(rec.line(), flush=True)
        if stop:
            return "monitor"
        if self.epsilon is not None and gnorm / max(1.0, rec.x_norm) <= self.epsilon:
            return "converged"
        if len(self.history) > self.period:
            old = self.history[-1 - self.period].objective
            if (old - f) / max(abs(f), 1.0) < self.tol:
                return "tol"
        return None


def _warn(reason, max_iter, n_evals, message, stacklevel):
    if reason in _WARN:
        warnings.warn(_WARN[reason].format(max_iter=max_iter, n_evals=n_evals)
                      + f" ({message})", ConvergenceWarning, stacklevel=stacklevel + 1)


def minimize_lbfgs(fun, theta0, *, max_iter, tol, period=10, max_fun=None, m=10,
                   epsilon=None, bounds=None, verbose=0, monitor=None, n_active=None,
                   stacklevel=3):
    """Minimise ``fun`` (returning value and gradient) with scipy's L-BFGS-B.

    Parameters
    ----------
    fun : callable
        ``fun(theta) -> (value, gradient)``.
    theta0 : ndarray
    max_iter : int
    tol : float
        Stop when ``(f[k - period] - f[k]) / max(|f[k]|, 1) < tol``.
    period : int, default=10
    max_fun : int, default=None
        Evaluation budget; default ``max(15000, 2 * max_iter)``.
    m : int, default=10
        L-BFGS memory (number of correction pairs).
    epsilon : float, default=None
        Also stop (as ``"converged"``) when ``|grad| / max(1, |x|) <= epsilon``
        (CRFsuite's gradient test).
    bounds : sequence of (low, high), default=None
    verbose : int, default=0
        Print a line per iteration.
    monitor : callable, default=None
        ``monitor(record, x) -> bool`` after each iteration; it may add
        entries to ``record.extra`` (printed and kept) and returns True to
        stop.
    n_active : callable, default=None
        ``n_active(x)``: the number of non-zero weights at ``x`` (default:
        non-zero entries of ``x``).

    Returns
    -------
    OptimizeResult
    """
    max_fun = max(15000, 2 * max_iter) if max_fun is None else int(max_fun)
    progress = _Progress(theta0, tol, period, epsilon, verbose, monitor, n_active)
    last = {"g": None}
    n_evals = [0]
    stopped = [None]

    def f_and_g(theta):
        f, g = fun(theta)
        last["g"] = g
        n_evals[0] += 1
        return f, g

    def callback(intermediate_result):
        stopped[0] = progress.iteration(intermediate_result.x, intermediate_result.fun,
                                        last["g"], n_evals[0])
        if stopped[0] is not None:
            raise StopIteration

    # scipy's L-BFGS-B does its vector algebra with (threaded) BLAS; its idle
    # threads spin and would steal the cores from the Numba kernels
    with threadpool_limits(limits=1, user_api="blas"):
        res = minimize(f_and_g, theta0, jac=True, method="L-BFGS-B", callback=callback,
                       bounds=bounds,
                       options=dict(maxiter=max_iter, maxfun=max_fun, ftol=1e-15,
                                    gtol=1e-10, maxcor=m))
    n_iter = int(res.nit)
    message = "scipy: " + str(res.message)
    if stopped[0] is not None:
        reason = stopped[0]   # scipy reports our StopIteration as abnormal or max_iter
    elif res.status == 0:
        reason = "converged"
    elif res.status == 1:
        reason = "max_iter" if n_iter >= max_iter else "max_fun"
    else:
        reason = "line_search"
    _warn(reason, max_iter, n_evals[0], message, stacklevel)
    return OptimizeResult(x=res.x, fun=float(res.fun), n_iter=n_iter,
                          n_evals=n_evals[0], reason=reason, message=message,
                          history=progress.history)


def _pseudo_gradient(x, g, c1):
    """The steepest-descent direction of ``f + c1 |x|_1``, negated (Andrew & Gao
    2007): at ``x_i != 0`` the gradient plus ``c1 sign(x_i)``; at 0, the one-sided
    derivative that decreases, or 0 when neither does."""
    pg = g + c1 * np.sign(x)
    zero = x == 0
    gz = g[zero]
    pg[zero] = np.where(gz + c1 < 0, gz + c1, np.where(gz - c1 > 0, gz - c1, 0.0))
    return pg


def minimize_owlqn(fun, theta0, *, c1, max_iter, tol, period=10, max_fun=None, m=10,
                   epsilon=None, verbose=0, monitor=None, max_linesearch=40,
                   stacklevel=3):
    """Minimise ``fun(theta) + c1 * |theta|_1`` with OWL-QN (Andrew & Gao 2007).

    ``fun`` returns the smooth part's value and gradient (data terms + L2).
    Orthant-wise limited-memory quasi-Newton, as CRFsuite's L1 training does:
    the L-BFGS direction of the pseudo-gradient, kept to the orthant the
    pseudo-gradient points into, and a backtracking line search that
    projects each trial point onto that orthant (so weights become exactly 0).
    Same stopping rules, records and warnings as :func:`minimize_lbfgs`
    (``epsilon`` tests the pseudo-gradient).
    """
    with threadpool_limits(limits=1, user_api="blas"):   # see minimize_lbfgs
        return _owlqn(fun, theta0, c1, max_iter, tol, period, max_fun, m, epsilon,
                      verbose, monitor, max_linesearch, stacklevel + 1)


def _owlqn(fun, theta0, c1, max_iter, tol, period, max_fun, m, epsilon, verbose, monitor,
           max_linesearch, stacklevel):
    max_fun = max(15000, 2 * max_iter) if max_fun is None else int(max_fun)
    x = np.array(theta0, dtype=np.float64, copy=True)
    n = x.size
    progress = _Progress(x, tol, period, epsilon, verbose, monitor, None)
    fs, g = fun(x)
    n_evals = 1
    f = fs + c1 * np.abs(x).sum()
    S = np.zeros((m, n))
    Y = np.zeros((m, n))
    rho = np.zeros(m)
    alpha = np.zeros(m)
    n_pairs = head = 0
    reason, message = None, ""
    for k in range(max_iter):
        pg = _pseudo_gradient(x, g, c1)
        # two-loop recursion: d = -H pg
        d = -pg
        order = [(head - 1 - j) % m for j in range(n_pairs)]
        for i in order:
            alpha[i] = rho[i] * S[i].dot(d)
            d -= alpha[i] * Y[i]
        if n_pairs:
            last = order[0]
            d *= 1.0 / (rho[last] * Y[last].dot(Y[last]))
        for i in reversed(order):
            d += S[i] * (alpha[i] - rho[i] * Y[i].dot(d))
        d[d * pg >= 0] = 0.0          # stay in the orthant-wise descent cone
        dg = pg.dot(d)
        if not dg < 0:
            reason, message = "converged", "pseudo-gradient is zero"
            break
        orthant = np.where(x != 0, np.sign(x), -np.sign(pg))
        step = 1.0 if n_pairs else 1.0 / np.linalg.norm(d)
        for _ in range(max_linesearch):
            x_new = x + step * d
            x_new[np.sign(x_new) != orthant] = 0.0
            fs_new, g_new = fun(x_new)
            n_evals += 1
            f_new = fs_new + c1 * np.abs(x_new).sum()
            if f_new <= f + 1e-4 * pg.dot(x_new - x):
                break
            step *= 0.5
        else:
            reason, message = "line_search", "no step decreased the objective"
            break
        s_vec = x_new - x
        y_vec = g_new - g
        sy = s_vec.dot(y_vec)
        if sy > 1e-12 * max(1.0, s_vec.dot(s_vec)):
            S[head], Y[head], rho[head] = s_vec, y_vec, 1.0 / sy
            head = (head + 1) % m
            n_pairs = min(n_pairs + 1, m)
        x, g, f = x_new, g_new, f_new
        reason = progress.iteration(x, f, _pseudo_gradient(x, g, c1), n_evals)
        if reason is not None:
            break
        if n_evals > max_fun:
            reason, message = "max_fun", f"{n_evals} evaluations"
            break
    else:
        reason, message = "max_iter", f"{max_iter} iterations"
    _warn(reason, max_iter, n_evals, "OWL-QN: " + message, stacklevel)
    return OptimizeResult(x=x, fun=float(f), n_iter=len(progress.history),
                          n_evals=n_evals, reason=reason, message=message,
                          history=progress.history)
