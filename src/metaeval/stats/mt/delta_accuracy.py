"""The delta-to-accuracy curve: how often a metric's verdict on a system pair agrees with the humans', as a
function of the metric difference between the two systems (Kocmi, Zouhar, Federmann & Post 2024).

For the system pairs ``(a, b)`` of a language pair, ``d = |x_a - x_b|`` is the metric delta (system scores
``x``) and ``y = 1`` when ``sign(x_a - x_b) = sign(z_a - z_b)`` (human system scores ``z``), else 0: the
pairwise-accuracy verdict of :func:`metaeval.stats.mt.wmt.pairwise_agreement` (a metric tie is a
disagreement; pairs the human ties are left out). The curve is the logistic regression

    P(y = 1 | d) = 1 / (1 + exp(-(b0 + b1 d)))

fitted by maximum likelihood (Newton-Raphson, i.e. iteratively reweighted least squares, on the concave
log-likelihood ``sum w (y eta - log(1 + e^eta))``), batched over rows so that every metric and every
bootstrap resample is fitted at once. The delta at which the fitted agreement reaches ``X`` is
``(logit(X) - b0) / b1`` when ``b1 > 0``; 0 when the curve starts at or above ``X``; ``inf`` when it never
reaches ``X`` (``b1 <= 0``).

The maximum-likelihood estimate does not exist when the outcomes are *separated* by the delta: every pair
agrees (or disagrees), or every pair below some delta disagrees and every pair above it agrees
(Albert & Anderson 1984). :func:`separated` detects it exactly; such fits are NaN and counted by the caller.

References
----------
Kocmi, T., Zouhar, V., Federmann, C. and Post, M. (2024). Navigating the Metrics Maze: Reconciling Score
Magnitudes and Accuracies. ACL 2024.
Albert, A. and Anderson, J. A. (1984). On the existence of maximum likelihood estimates in logistic
regression models. Biometrika 71(1), 1-10.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.correlations.ties import are_tied

__all__ = ["agreement_pairs", "fit_logistic", "logistic_curve", "delta_for_accuracy", "separated"]

#: Newton-Raphson iterations of one fit at most, and the relative step size taken as convergence.
MAX_ITERATIONS = 100
TOLERANCE = 1e-10


def agreement_pairs(xbar: np.ndarray, zbar: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every system pair of system scores ``xbar`` (..., N) against the human's ``zbar`` (..., N):
    ``(d, y, counted)``, each (..., N (N - 1) / 2): the metric delta ``|x_a - x_b|``, the agreement (1.0 or 0.0;
    a metric tie disagrees) and whether the human separates the pair (the tie rule of
    :mod:`metaeval.stats.correlations.ties`)."""
    xbar, zbar = np.asarray(xbar, dtype=float), np.asarray(zbar, dtype=float)
    ia, ib = np.triu_indices(xbar.shape[-1], 1)
    xa, xb, za, zb = xbar[..., ia], xbar[..., ib], zbar[..., ia], zbar[..., ib]
    sz = np.sign(za - zb) * ~are_tied(za, zb)
    sx = np.sign(xa - xb) * ~are_tied(xa, xb)
    d = np.where(sx == 0, 0.0, np.abs(xa - xb))
    sx, sz = np.broadcast_arrays(sx, sz)
    return np.broadcast_to(d, sx.shape), (sx == sz).astype(float), sz != 0


def separated(d: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """(B,) bool: whether the weighted outcomes ``y`` (B, n) are separated by ``d`` (B, n) among the
    observations of positive weight ``w``, so that the logistic MLE does not exist: all outcomes alike, or
    ``max d[y = 0] <= min d[y = 1]`` (or the reverse), ties at the boundary included (quasi-complete)."""
    on = w > 0
    ones, zeros = on & (y > 0.5), on & (y <= 0.5)
    max0 = np.where(zeros, d, -np.inf).max(axis=-1)
    min1 = np.where(ones, d, np.inf).min(axis=-1)
    max1 = np.where(ones, d, -np.inf).max(axis=-1)
    min0 = np.where(zeros, d, np.inf).min(axis=-1)
    return (max0 <= min1) | (max1 <= min0)


def _loglik(b0, b1, d, y, w):
    eta = b0[:, None] + b1[:, None] * d
    return (w * (y * eta - np.logaddexp(0.0, eta))).sum(axis=-1)


def fit_logistic(d: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-likelihood logistic regression of ``y`` on ``d``, row by row: ``(b0, b1)``, each (B,).

    ``d``, ``y`` (B, n) (or (n,)); ``w`` non-negative weights (multiplicities; 0 leaves an observation out).
    Newton-Raphson from ``b = 0`` with step halving whenever a step lowers the log-likelihood; rows that are
    separated (:func:`separated`), have fewer than two distinct deltas, or do not converge give NaN.
    """
    d = np.atleast_2d(np.asarray(d, dtype=float))
    y = np.broadcast_to(np.atleast_2d(np.asarray(y, dtype=float)), d.shape)
    w = np.ones(d.shape) if w is None else np.broadcast_to(np.atleast_2d(np.asarray(w, dtype=float)), d.shape)
    rows = d.shape[0]
    b0, b1 = np.zeros(rows), np.zeros(rows)
    wd = np.where(w > 0, d, np.nan)
    spread = np.nanmax(wd, axis=-1, initial=-np.inf) > np.nanmin(wd, axis=-1, initial=np.inf)
    active = ~separated(d, y, w) & spread
    done = np.zeros(rows, dtype=bool)
    ll = _loglik(b0, b1, d, y, w)
    for _ in range(MAX_ITERATIONS):
        live = active & ~done
        if not live.any():
            break
        dl, yl, wl = d[live], y[live], w[live]
        eta = b0[live, None] + b1[live, None] * dl
        p = 1.0 / (1.0 + np.exp(-eta))
        r, v = wl * (yl - p), wl * p * (1.0 - p)
        g0, g1 = r.sum(-1), (r * dl).sum(-1)
        h00, h01, h11 = v.sum(-1), (v * dl).sum(-1), (v * dl * dl).sum(-1)
        det = h00 * h11 - h01 * h01
        with np.errstate(divide="ignore", invalid="ignore"):
            s0, s1 = (h11 * g0 - h01 * g1) / det, (h00 * g1 - h01 * g0) / det
        n0, n1, base = b0[live], b1[live], ll[live]
        step = np.ones(n0.size)
        new_ll = _loglik(n0 + s0, n1 + s1, dl, yl, wl)
        for _ in range(30):  # step halving: Newton may overshoot far from the optimum
            worse = ~(new_ll >= base - 1e-12 * np.abs(base))
            if not worse.any():
                break
            step[worse] /= 2
            new_ll[worse] = _loglik(n0[worse] + step[worse] * s0[worse], n1[worse] + step[worse] * s1[worse],
                                    dl[worse], yl[worse], wl[worse])
        t0, t1 = n0 + step * s0, n1 + step * s1
        converged = (np.abs(step * s0) <= TOLERANCE * (1 + np.abs(t0))) & \
                    (np.abs(step * s1) <= TOLERANCE * (1 + np.abs(t1)))
        idx = np.flatnonzero(live)
        b0[idx], b1[idx], ll[idx] = t0, t1, new_ll
        done[idx] = converged | ~np.isfinite(t0) | ~np.isfinite(t1)
    ok = active & done & np.isfinite(b0) & np.isfinite(b1)
    return np.where(ok, b0, np.nan), np.where(ok, b1, np.nan)


def logistic_curve(b0: np.ndarray, b1: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Fitted agreement ``1 / (1 + exp(-(b0 + b1 d)))`` at the deltas ``grid`` (..., G): (B, G)."""
    eta = np.asarray(b0, dtype=float)[:, None] + np.asarray(b1, dtype=float)[:, None] * grid
    return 0.5 * (1.0 + np.tanh(eta / 2.0))


def delta_for_accuracy(b0: np.ndarray, b1: np.ndarray, target: float) -> np.ndarray:
    """The delta at which the fitted agreement reaches ``target`` (0 < target < 1): ``(logit(target) - b0) /
    b1``; 0 where the curve starts at or above it; inf where it never reaches it (``b1 <= 0`` below it); NaN
    where the fit is NaN."""
    b0, b1 = np.asarray(b0, dtype=float), np.asarray(b1, dtype=float)
    goal = np.log(target / (1.0 - target))
    with np.errstate(divide="ignore", invalid="ignore"):
        delta = (goal - b0) / b1
    out = np.where(b0 >= goal, 0.0, np.where(b1 > 0, delta, np.inf))
    return np.where(np.isfinite(b0) & np.isfinite(b1), out, np.nan)
