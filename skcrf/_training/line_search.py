"""The line search of L-BFGS: Moré and Thuente's, as MINPACK-2's ``dcsrch`` runs it.

:func:`more_thuente` finds a step ``stp > 0`` along a descent direction that
satisfies the strong Wolfe conditions

    phi(stp) <= phi(0) + ftol * stp * phi'(0)   and   |phi'(stp)| <= gtol * |phi'(0)|

by safeguarded cubic and quadratic interpolation inside an interval of
uncertainty that it shrinks (J. J. Moré and D. J. Thuente, "Line search
algorithms with guaranteed sufficient decrease", ACM TOMS 20(3), 1994). It is
the line search of L-BFGS-B (and so of scipy's ``minimize(method="L-BFGS-B")``)
and of libLBFGS, CRFsuite's optimiser; with L-BFGS-B's constants
(``ftol=1e-3``, ``gtol=0.9``, ``xtol=0.1``) skcrf's iterations follow scipy's.

The work is scalar; each trial step costs one evaluation of the objective,
which the caller's ``phi`` does.
"""

import math

__all__ = ["more_thuente", "LineSearchResult"]


class LineSearchResult:
    """What :func:`more_thuente` found.

    Attributes
    ----------
    stp : float
        The step (the last one evaluated).
    f, g : float
        ``phi(stp)`` and ``phi'(stp)``.
    n_evals : int
    status : str
        ``"converged"`` (strong Wolfe conditions hold); ``"xtol"``,
        ``"rounding"``, ``"stpmax"``, ``"stpmin"`` (MINPACK's warnings: the
        interval cannot shrink further; L-BFGS-B takes the step anyway);
        ``"max_evals"``.
    """

    __slots__ = ("stp", "f", "g", "n_evals", "status")

    def __init__(self, stp, f, g, n_evals, status):
        self.stp, self.f, self.g, self.n_evals, self.status = stp, f, g, n_evals, status

    def __repr__(self):
        return (f"LineSearchResult(stp={self.stp!r}, f={self.f!r}, g={self.g!r}, "
                f"n_evals={self.n_evals}, status={self.status!r})")


def more_thuente(phi, f0, g0, stp, *, ftol=1e-3, gtol=0.9, xtol=0.1, stpmin=0.0,
                 stpmax=1e10, max_evals=20):
    """Moré–Thuente line search from ``stp``.

    Parameters
    ----------
    phi : callable
        ``phi(stp) -> (value, derivative)`` along the search direction.
    f0, g0 : float
        ``phi(0)`` and ``phi'(0)`` (``g0 < 0``: a descent direction).
    stp : float
        First trial step (> 0).
    ftol, gtol, xtol : float
        Sufficient-decrease and curvature constants, and the relative width
        of the interval of uncertainty below which the search stops.
    stpmin, stpmax : float
        Bounds of the step.
    max_evals : int
        Evaluation budget.

    Returns
    -------
    LineSearchResult
    """
    if not g0 < 0:
        raise ValueError(f"not a descent direction: phi'(0) = {g0!r}")
    if not stp > 0:
        raise ValueError(f"the first step must be positive, got {stp!r}")
    gtest = ftol * g0
    width = stpmax - stpmin
    width1 = 2.0 * width
    brackt = False
    stage = 1
    # stx: the best step so far; sty: the other end of the interval
    stx, fx, gx = 0.0, f0, g0
    sty, fy, gy = 0.0, f0, g0
    stmin, stmax = 0.0, stp + 4.0 * stp
    for n_evals in range(1, max_evals + 1):
        f, g = phi(stp)
        ftest = f0 + stp * gtest
        if stage == 1 and f <= ftest and g >= 0.0:
            stage = 2
        status = None
        if brackt and (stp <= stmin or stp >= stmax):
            status = "rounding"
        if brackt and stmax - stmin <= xtol * stmax:
            status = "xtol"
        if stp == stpmax and f <= ftest and g <= gtest:
            status = "stpmax"
        if stp == stpmin and (f > ftest or g >= gtest):
            status = "stpmin"
        if f <= ftest and abs(g) <= gtol * (-g0):
            status = "converged"
        if status is not None:
            return LineSearchResult(stp, f, g, n_evals, status)
        if n_evals == max_evals:
            break
        if stage == 1 and f <= fx and f > ftest:
            # first stage: work on psi(stp) = phi(stp) - phi(0) - ftol stp phi'(0),
            # whose minimiser the sufficient decrease condition needs
            stx, fxm, gxm, sty, fym, gym, brackt, stp_next = _step(
                stx, fx - stx * gtest, gx - gtest, sty, fy - sty * gtest, gy - gtest,
                stp, f - stp * gtest, g - gtest, brackt, stmin, stmax)
            fx, gx = fxm + stx * gtest, gxm + gtest
            fy, gy = fym + sty * gtest, gym + gtest
        else:
            stx, fx, gx, sty, fy, gy, brackt, stp_next = _step(
                stx, fx, gx, sty, fy, gy, stp, f, g, brackt, stmin, stmax)
        if brackt:
            # bisect when the interval did not shrink enough in two steps
            if abs(sty - stx) >= 0.66 * width1:
                stp_next = stx + 0.5 * (sty - stx)
            width1 = width
            width = abs(sty - stx)
            stmin, stmax = min(stx, sty), max(stx, sty)
        else:
            stmin = stp_next + 1.1 * (stp_next - stx)
            stmax = stp_next + 4.0 * (stp_next - stx)
        stp = min(max(stp_next, stpmin), stpmax)
        if brackt and (stp <= stmin or stp >= stmax or stmax - stmin <= xtol * stmax):
            stp = stx   # no progress possible: return to the best step
    return LineSearchResult(stp, f, g, max_evals, "max_evals")


def _cubic_min(sa, fa, ga, sb, fb, gb):
    """Terms of the minimiser of the cubic through (sa, fa, ga), (sb, fb, gb)."""
    theta = 3.0 * (fa - fb) / (sb - sa) + ga + gb
    s = max(abs(theta), abs(ga), abs(gb))
    return theta, s


def _cubic_step_from(stp, fp, dp, sa, fa, da):
    """The minimiser of the cubic through (stp, fp, dp) and (sa, fa, da), written
    as a step from ``stp`` towards ``sa`` (the two ends bracket a minimum)."""
    theta, s = _cubic_min(sa, fa, da, stp, fp, dp)
    gamma = s * math.sqrt((theta / s) ** 2 - (da / s) * (dp / s))
    if stp > sa:
        gamma = -gamma
    p = (gamma - dp) + theta
    q = ((gamma - dp) + gamma) + da
    return stp + (p / q) * (sa - stp)


def _step(stx, fx, dx, sty, fy, dy, stp, fp, dp, brackt, stpmin, stpmax):
    """One safeguarded step (MINPACK-2's ``dcstep``): the next trial step from
    the best point ``stx``, the other end ``sty`` and the trial ``stp``, and the
    updated interval.

    Returns ``(stx, fx, dx, sty, fy, dy, brackt, stp_next)``.
    """
    sgnd = dp * math.copysign(1.0, dx)
    if fp > fx:
        # 1: higher value: the minimum is bracketed. The cubic step if it is
        # closer to stx than the quadratic one, else their average.
        theta, s = _cubic_min(stx, fx, dx, stp, fp, dp)
        gamma = s * math.sqrt((theta / s) ** 2 - (dx / s) * (dp / s))
        if stp < stx:
            gamma = -gamma
        p = (gamma - dx) + theta
        q = ((gamma - dx) + gamma) + dp
        stpc = stx + (p / q) * (stp - stx)
        stpq = stx + ((dx / ((fx - fp) / (stp - stx) + dx)) / 2.0) * (stp - stx)
        stpf = stpc if abs(stpc - stx) < abs(stpq - stx) else stpc + (stpq - stpc) / 2.0
        brackt = True
    elif sgnd < 0.0:
        # 2: lower value, derivatives of opposite sign: bracketed. The cubic
        # step if it is farther from stp than the secant step, else the secant.
        stpc = _cubic_step_from(stp, fp, dp, stx, fx, dx)
        stpq = stp + (dp / (dp - dx)) * (stx - stp)
        stpf = stpc if abs(stpc - stp) > abs(stpq - stp) else stpq
        brackt = True
    elif abs(dp) < abs(dx):
        # 3: lower value, same sign, the derivative's size decreases. The cubic
        # step only if the cubic tends to infinity in the direction of the step
        # or its minimum lies beyond stp; else the step to the bound.
        theta, s = _cubic_min(stx, fx, dx, stp, fp, dp)
        gamma = s * math.sqrt(max(0.0, (theta / s) ** 2 - (dx / s) * (dp / s)))
        if stp > stx:
            gamma = -gamma
        p = (gamma - dp) + theta
        q = (gamma + (dx - dp)) + gamma
        r = p / q
        if r < 0.0 and gamma != 0.0:
            stpc = stp + r * (stx - stp)
        elif stp > stx:
            stpc = stpmax
        else:
            stpc = stpmin
        stpq = stp + (dp / (dp - dx)) * (stx - stp)
        if brackt:
            # the step closer to stp, but never too close to the far end
            stpf = stpc if abs(stpc - stp) < abs(stpq - stp) else stpq
            if stp > stx:
                stpf = min(stp + 0.66 * (sty - stp), stpf)
            else:
                stpf = max(stp + 0.66 * (sty - stp), stpf)
        else:
            stpf = stpc if abs(stpc - stp) > abs(stpq - stp) else stpq
            stpf = max(stpmin, min(stpmax, stpf))
    else:
        # 4: lower value, same sign, the derivative's size does not decrease:
        # the cubic step through stp and sty if bracketed, else a bound.
        if brackt:
            stpf = _cubic_step_from(stp, fp, dp, sty, fy, dy)
        elif stp > stx:
            stpf = stpmax
        else:
            stpf = stpmin
    # the new interval: stx keeps the lowest value seen
    if fp > fx:
        sty, fy, dy = stp, fp, dp
    else:
        if sgnd < 0.0:
            sty, fy, dy = stx, fx, dx
        stx, fx, dx = stp, fp, dp
    return stx, fx, dx, sty, fy, dy, brackt, stpf
