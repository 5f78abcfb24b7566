"""The optimisers (L-BFGS; OWL-QN for an L1 term), our stopping rule, and what
their result means.

:func:`minimize_lbfgs` minimises a function returning ``(value, gradient)``
with L-BFGS as L-BFGS-B runs it without bounds (same directions, same
Moré–Thuente line search and constants: on the same problem its iterates are
scipy's ``minimize(method="L-BFGS-B")``'s, tested), with the vector algebra
compiled, threaded and its history in ``float32`` (:mod:`skcrf._training.lbfgs`).
It tells apart why it stopped (:attr:`OptimizeResult.reason`):

``"tol"``
    our stopping rule (CRFsuite's): the objective improved by less than
    ``tol`` relative over the last ``period`` iterations; or the line search
    found no step along a direction whose slope could not meet that rule
    anyway (``period * |slope|`` below ``tol`` relative): the search then
    failed on the objective's rounding, near the optimum, not on the
    direction;
``"monitor"``
    the caller's ``monitor`` asked to stop (early stopping);
``"converged"``
    the gradient is ~0 (every entry <= 1e-10), or an iteration decreased the
    objective by less than 1e-15 relative (L-BFGS-B's tests, as skcrf used
    to pass them to scipy), or CRFsuite's gradient test (``epsilon``);
``"max_iter"``, ``"max_fun"``
    the iteration / evaluation budget ran out;
``"line_search"``
    no step satisfied the line search, even along the gradient after
    dropping the history: usually floating-point limits near the optimum
    when ``tol`` is very small, or a gradient that does not match the
    function.

The last three emit a ``ConvergenceWarning`` with the details, as
scikit-learn's ``_check_optimize_result`` does. The result's ``fun`` is the
objective at ``x`` as the optimiser evaluated it: no extra evaluation.
"""

import os
import sys
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from .._kernels.parallel import element_bounds, run_chunks
from .._kernels.vector import _step_chunk, _step_parallel
from .lbfgs import History
from .line_search import more_thuente

__all__ = ["minimize_lbfgs", "minimize_owlqn", "minimize_scipy", "OptimizeResult",
           "IterationRecord"]


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
    "line_search": "L-BFGS stopped: the line search found no step that decreases "
                   "the objective; the result may be short of the optimum (usually "
                   "within floating-point noise of it when tol is very small).",
}


class _Progress:
    """Records each iteration and applies the stopping rules shared by both
    optimisers: the caller's monitor, CRFsuite's gradient test (``epsilon``)
    and its objective rule (``tol`` over ``period`` iterations)."""

    def __init__(self, tol, period, epsilon, verbose, monitor, n_active):
        self.history = []
        self.t_start = time.perf_counter()
        self.tol, self.period, self.epsilon = tol, period, epsilon
        self.verbose, self.monitor = verbose, monitor
        self.n_active = n_active or np.count_nonzero

    def iteration(self, x, f, grad_norm, step, n_evals):
        """Record an iteration (``step``: the norm of the step just taken);
        returns the reason to stop, or None."""
        rec = IterationRecord(
            iteration=len(self.history) + 1, objective=float(f), grad_norm=float(grad_norm),
            x_norm=float(np.linalg.norm(x)), n_active=int(self.n_active(x)),
            step=float(step), seconds=time.perf_counter() - self.t_start, n_evals=n_evals)
        self.history.append(rec)
        stop = bool(self.monitor(rec, x)) if self.monitor is not None else False
        if self.verbose:
            print(rec.line(), flush=True)
        if stop:
            return "monitor"
        if self.epsilon is not None and rec.grad_norm / max(1.0, rec.x_norm) <= self.epsilon:
            return "converged"
        if len(self.history) > self.period:
            old = self.history[-1 - self.period].objective
            if (old - f) / max(abs(f), 1.0) < self.tol:
                return "tol"
        return None


def _warn(reason, max_iter, n_evals, message, stacklevel):
    if reason in _WARN:
        warnings.warn(_WARN[reason].format(max_iter=max_iter, n_evals=n_evals)
                      + f" ({message})", ConvergenceWarning,
                      stacklevel=max(stacklevel + 1, _user_stacklevel()))


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# fit wrappers, pipelines and searches call fit from inside these libraries
_LIBRARY_PARTS = tuple(os.sep + name + os.sep for name in ("sklearn", "joblib"))


def _user_stacklevel():
    """The stacklevel of the first frame outside skcrf, scikit-learn and
    joblib: a warning should point at the user's ``fit`` (or pipeline, or
    search) call, not at a line inside a library."""
    frame, level = sys._getframe(1), 1
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        inside = path.startswith(_PACKAGE_DIR + os.sep) or any(
            part in path for part in _LIBRARY_PARTS)
        if not inside:
            return level
        frame, level = frame.f_back, level + 1
    return 1


def minimize_lbfgs(fun, theta0, *, max_iter, tol, period=10, max_fun=None, m=10,
                   epsilon=None, verbose=0, monitor=None, n_active=None, n_threads=1,
                   history_dtype=np.float32, stacklevel=3):
    """Minimise ``fun`` (returning value and gradient) with L-BFGS.

    The iterations are those of L-BFGS-B without bounds (scipy's
    ``minimize(method="L-BFGS-B")``, and in substance CRFsuite's): the
    direction from the last ``m`` correction pairs, skipped when their
    curvature is not positive; the Moré–Thuente line search
    (:mod:`skcrf._training.line_search`) from step ``1 / |g|`` on the first iteration
    and 1 after, with L-BFGS-B's constants; after a failed line search the
    memory is dropped and the iteration restarts along ``-g``. The vector
    algebra is compiled and threaded and the pairs are kept in ``float32``
    (:class:`skcrf._training.lbfgs.History`): about 8 m + 40 bytes per parameter, where
    scipy's L-BFGS-B needs about 16 m + 40 and one thread.

    Parameters
    ----------
    fun : callable
        ``fun(theta) -> (value, gradient)``; the gradient must be a new array
        (it is kept).
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
    verbose : int, default=0
        Print a line per iteration.
    monitor : callable, default=None
        ``monitor(record, x) -> bool`` after each iteration; it may add
        entries to ``record.extra`` (printed and kept) and returns True to
        stop.
    n_active : callable, default=None
        ``n_active(x)``: the number of non-zero weights at ``x`` (default:
        non-zero entries of ``x``).
    n_threads : int, default=1
        Threads of the vector algebra (the fit's ``n_jobs``).
    history_dtype : dtype, default=np.float32
        Storage of the correction pairs.

    Returns
    -------
    OptimizeResult
    """
    # the few BLAS calls (1-D dot products) must not start a thread pool that
    # spins while the Numba kernels run
    with threadpool_limits(limits=1, user_api="blas"):
        return _lbfgs(fun, theta0, max_iter, tol, period, max_fun, m, epsilon, verbose,
                      monitor, n_active, n_threads, history_dtype, stacklevel + 1)


def _lbfgs(fun, theta0, max_iter, tol, period, max_fun, m, epsilon, verbose, monitor,
           n_active, n_threads, history_dtype, stacklevel):
    max_fun = max(15000, 2 * max_iter) if max_fun is None else int(max_fun)
    # x is never written in place (each step makes a new vector), so a
    # float64 theta0 is used as it is, not copied
    x = np.ascontiguousarray(theta0, dtype=np.float64)
    progress = _Progress(tol, period, epsilon, verbose, monitor, n_active)
    f, g = fun(x)
    n_evals = 1
    history = History(x.size, m, n_threads=n_threads, dtype=history_dtype)
    bounds = element_bounds(x.size, n_threads)
    history.refresh(g)
    _require_finite(f, history.vv, "at the initial weights")
    d = np.empty_like(x)
    reason = message = None
    while reason is None:
        if len(progress.history) >= max_iter:
            reason, message = "max_iter", f"{max_iter} iterations"
            break
        gd, d_norm = history.direction(g, d)
        if not gd < 0 and history.n_pairs:
            history.reset()          # not a descent direction: start afresh
            gd, d_norm = history.direction(g, d)
        if not gd < 0:
            reason, message = "converged", "the gradient is zero"
            break
        # L-BFGS-B's first step is 1 / |d|; afterwards the quasi-Newton step
        stp = 1.0 if history.n_pairs else 1.0 / np.sqrt(history.vv)
        trial = {}

        def phi(a):
            # the search continues from this step: the previous trial's point
            # and gradient are not needed any more (two vectors less at peak)
            trial.clear()
            xa = np.empty_like(x)
            run_chunks(_step_chunk, _step_parallel, bounds, n_threads, x, d, a, xa)
            fa, ga = fun(xa)
            trial.update(x=xa, f=fa, g=ga)
            slope = float(np.dot(ga, d))
            if np.isfinite(fa) and not np.isfinite(slope):
                _require_finite(fa, slope, f"at a trial step of iteration "
                                           f"{len(progress.history) + 1}")
            return fa, slope

        search = more_thuente(phi, f, gd, stp, **_LINE_SEARCH)
        n_evals += search.n_evals
        # MINPACK's warnings (the interval cannot shrink) end the search at its
        # last step, as in L-BFGS-B; but a step that increases the objective
        # is never taken
        if search.status == "max_evals" or not search.f <= f:
            if tol > 0 and period * -gd <= tol * max(abs(f), 1.0):
                # a unit step could gain about |gd| at most: less, over the
                # rule's period, than the stopping rule asks for
                reason = "tol"
                message = "no measurable decrease is left along the search direction"
                break
            if history.n_pairs:
                history.reset()      # retry along the gradient, as L-BFGS-B does
                continue
            reason = "line_search"
            message = (f"line search: no step satisfying the Wolfe conditions "
                       f"within {search.n_evals} evaluations")
            break
        x_new, f_new, g_new = trial["x"], trial["f"], trial["g"]
        sy = search.stp * (search.g - gd)
        history.update(x_new, x, g_new, g, g_new, store=sy > _EPS * -gd * search.stp)
        _require_finite(f_new, history.vv, f"after iteration {len(progress.history) + 1}")
        f_old = f
        x, f, g = x_new, f_new, g_new
        # |g| and |d| from the history's dot products: no pass over the vectors
        reason = progress.iteration(x, f, np.sqrt(history.vv), search.stp * d_norm, n_evals)
        if reason is not None:
            break
        if np.sqrt(history.vv) <= _PGTOL * np.sqrt(x.size) and \
                max(g.max(), -g.min()) <= _PGTOL:
            reason, message = "converged", "the gradient is ~0"
        elif (f_old - f) <= _FTOL * max(abs(f_old), abs(f), 1.0):
            reason, message = "converged", "the objective stopped decreasing"
        elif n_evals > max_fun:
            reason, message = "max_fun", f"{n_evals} evaluations"
    message = "L-BFGS: " + (message or reason)
    _warn(reason, max_iter, n_evals, message, stacklevel)
    return OptimizeResult(x=x, fun=float(f), n_iter=len(progress.history),
                          n_evals=n_evals, reason=reason, message=message,
                          history=progress.history)


def minimize_scipy(fun, theta0, *, max_iter, tol, period=10, m=10, epsilon=None, verbose=0,
                   monitor=None, n_active=None, stacklevel=3, **unused):
    """Minimise ``fun`` with scipy's ``minimize(method="L-BFGS-B")`` (no bounds).

    The reference solver (``LinearChainCRF(solver="scipy")``): the same
    iterations as :func:`minimize_lbfgs`, run by scipy on one thread with
    its history in float64 (about 16 m + 40 bytes per parameter). The same
    stopping rule (``tol`` over ``period`` iterations, applied after every
    iteration through scipy's callback), the same records and the same
    reasons; scipy's own tests are its defaults (``gtol=1e-5`` on the
    projected gradient, ``ftol`` from ``tol``'s order) and end as
    ``"converged"``.
    """
    from scipy.optimize import minimize

    progress = _Progress(tol, period, epsilon, verbose, monitor, n_active)
    evals = [0]
    stopped = [None]

    def counted(x):
        evals[0] += 1
        f, g = fun(x)
        _require_finite(f, float(np.dot(g, g)), "in scipy's L-BFGS-B")
        return f, g

    def callback(intermediate_result):
        res = intermediate_result
        g = counted_grad.get("g")
        grad_norm = float(np.linalg.norm(g)) if g is not None else float("nan")
        reason = progress.iteration(res.x, res.fun, grad_norm, float("nan"), evals[0])
        if reason is not None:
            stopped[0] = reason
            raise StopIteration

    counted_grad = {}

    def fun_and_grad(x):
        f, g = counted(x)
        counted_grad["g"] = g
        return f, g

    with threadpool_limits(limits=1, user_api="blas"):
        res = minimize(fun_and_grad, np.ascontiguousarray(theta0, dtype=np.float64),
                       jac=True, method="L-BFGS-B", callback=callback,
                       options=dict(maxiter=max_iter, maxcor=m, maxfun=max(15000, 2 * max_iter)))
    reason = stopped[0]
    message = "scipy L-BFGS-B: " + str(res.message)
    if reason is None:
        if res.status == 0:
            reason = "converged"
        elif res.status == 1:
            reason = "max_iter" if res.nit >= max_iter else "max_fun"
        else:
            reason = "line_search"
    _warn(reason, max_iter, evals[0], message, stacklevel)
    x = np.asarray(res.x, dtype=np.float64)
    f = float(res.fun)
    if progress.history:
        f = progress.history[-1].objective if reason in ("tol", "monitor") else f
    return OptimizeResult(x=x, fun=f, n_iter=len(progress.history), n_evals=evals[0],
                          reason=reason, message=message, history=progress.history)


def _require_finite(f, g_sq, where):
    """Raise when the objective or its gradient (given as |g|^2, which the
    history computes anyway, or any product with it) is not finite: the
    optimiser would otherwise read a NaN direction as a zero gradient and
    stop, returning wrong weights without a word."""
    if not (np.isfinite(f) and np.isfinite(g_sq)):
        raise FloatingPointError(
            f"The training objective or its gradient is not finite {where} "
            f"(objective {f!r}, a product of the gradient: {g_sq!r}). This is a bug "
            f"in skcrf unless the features hold values so large that the scores overflow: "
            f"please report it with the data's shape and value range.")


# L-BFGS-B's line search constants (lbfgsb.f, lnsrlb) and scipy's defaults
# for its own stopping tests as skcrf passes them (gtol, ftol)
_LINE_SEARCH = dict(ftol=1e-3, gtol=0.9, xtol=0.1, stpmin=0.0, stpmax=1e10, max_evals=20)
_EPS = np.finfo(np.float64).eps
_PGTOL = 1e-10
_FTOL = 1e-15


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
                   n_threads=1, stacklevel=3):
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
                      verbose, monitor, max_linesearch, n_threads, stacklevel + 1)


def _owlqn(fun, theta0, c1, max_iter, tol, period, max_fun, m, epsilon, verbose, monitor,
           max_linesearch, n_threads, stacklevel):
    max_fun = max(15000, 2 * max_iter) if max_fun is None else int(max_fun)
    x = np.array(theta0, dtype=np.float64, copy=True)
    progress = _Progress(tol, period, epsilon, verbose, monitor, None)
    fs, g = fun(x)
    n_evals = 1
    f = fs + c1 * np.abs(x).sum()
    pg = _pseudo_gradient(x, g, c1)
    history = History(x.size, m, n_threads=n_threads)
    history.refresh(pg)
    _require_finite(f, np.dot(g, g), "at the initial weights")   # (pg hides NaN at 0)
    d = np.empty_like(x)
    reason, message = None, ""
    for k in range(max_iter):
        history.direction(pg, d)     # d = -H pg
        d[d * pg >= 0] = 0.0          # stay in the orthant-wise descent cone
        dg = pg.dot(d)
        if not dg < 0:
            reason, message = "converged", "pseudo-gradient is zero"
            break
        orthant = np.where(x != 0, np.sign(x), -np.sign(pg))
        step = 1.0 if history.n_pairs else 1.0 / np.linalg.norm(d)
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
        sy = s_vec.dot(g_new - g)
        ss = s_vec.dot(s_vec)
        del s_vec
        pg = _pseudo_gradient(x_new, g_new, c1)
        history.update(x_new, x, g_new, g, pg, store=sy > 1e-12 * max(1.0, ss))
        _require_finite(f_new, np.dot(g_new, g_new), f"after iteration {k + 1}")
        x, g, f = x_new, g_new, f_new
        reason = progress.iteration(x, f, np.sqrt(history.vv), np.sqrt(ss), n_evals)
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
