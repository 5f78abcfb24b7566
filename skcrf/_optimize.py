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

__all__ = ["minimize_lbfgs", "OptimizeResult", "IterationRecord"]


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
    history = []
    t_start = time.perf_counter()
    last = {"g": None, "x": np.array(theta0, dtype=np.float64, copy=True)}
    n_evals = [0]
    stopped = [None]

    def f_and_g(theta):
        f, g = fun(theta)
        last["g"] = g
        n_evals[0] += 1
        return f, g

    def callback(intermediate_result):
        x = intermediate_result.x
        f = float(intermediate_result.fun)
        g = last["g"]
        gnorm = float(np.linalg.norm(g)) if g is not None else float("nan")
        rec = IterationRecord(
            iteration=len(history) + 1, objective=f, grad_norm=gnorm,
            x_norm=float(np.linalg.norm(x)),
            n_active=int(n_active(x) if n_active is not None else np.count_nonzero(x)),
            step=float(np.linalg.norm(x - last["x"])),
            seconds=time.perf_counter() - t_start, n_evals=n_evals[0])
        last["x"][:] = x
        history.append(rec)
        stop = bool(monitor(rec, x)) if monitor is not None else False
        if verbose:
            print(rec.line(), flush=True)
        if stop:
            stopped[0] = "monitor"
            raise StopIteration
        if epsilon is not None and gnorm / max(1.0, rec.x_norm) <= epsilon:
            stopped[0] = "converged"
            raise StopIteration
        if len(history) > period:
            old = history[-1 - period].objective
            if (old - f) / max(abs(f), 1.0) < tol:
                stopped[0] = "tol"
                raise StopIteration

    # scipy's L-BFGS-B does its vector algebra with (threaded) BLAS; its idle
    # threads spin and would steal the cores from the Numba kernels
    with threadpool_limits(limits=1, user_api="blas"):
        res = minimize(f_and_g, theta0, jac=True, method="L-BFGS-B", callback=callback,
                       bounds=bounds,
                       options=dict(maxiter=max_iter, maxfun=max_fun, ftol=1e-15,
                                    gtol=1e-10, maxcor=m))
    n_iter = int(res.nit)
    message = str(res.message)
    if stopped[0] is not None:
        reason = stopped[0]   # scipy reports our StopIteration as abnormal or max_iter
    elif res.status == 0:
        reason = "converged"
    elif res.status == 1:
        reason = "max_iter" if n_iter >= max_iter else "max_fun"
    else:
        reason = "line_search"
    if reason in _WARN:
        warnings.warn(
            _WARN[reason].format(max_iter=max_iter, n_evals=n_evals[0])
            + f" scipy: {message}", ConvergenceWarning, stacklevel=stacklevel)
    return OptimizeResult(x=res.x, fun=float(res.fun), n_iter=n_iter,
                          n_evals=n_evals[0], reason=reason, message=message,
                          history=history)
