"""Length bias of a judge: does the longer output win more often than the systems compared explain?

Logistic regression of the decisive verdicts on the length difference, adjusted for the systems compared::

    logit P(first wins) = b0 + b1 z + s_first - s_second

with ``z`` the length difference (first minus second) divided by its standard deviation and ``s`` one
strength per system (Bradley-Terry fixed effects; the last system of the comparisons is the reference, 0).
``b1`` is the log-odds per standard deviation of length at equal systems (> 0: longer outputs win), ``b0``
the position effect at equal length and equal systems. Without the system terms a length effect is partly
a quality effect of the systems that write longer (and, since a logistic model is not collapsible, an
unadjusted ``b1`` is biased towards 0 even when lengths are independent of systems: a planted 0.6 read as
0.38); the unadjusted fit is reported beside it (``length_effect_unadjusted``).

Wald intervals from the cluster-robust (sandwich, clustered by input) covariance with the small-sample
factor ``G / (G - 1) * (N - 1) / (N - K)`` of Stata and statsmodels' ``cov_type="cluster"`` (G clusters,
N rows, K coefficients).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .comparisons import FIRST, TIE, Comparisons

MAX_ITERATIONS = 100


def logistic_fit(x: np.ndarray, y: np.ndarray, clusters: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Logistic regression by Newton's method: ``logit P(y = 1) = b0 + b1 x`` for a vector ``x``, or
    ``X @ b`` for a design matrix ``X`` (n, K) (its own intercept column included).

    Returns the coefficients, the model-based covariance (inverse information) and the cluster-robust
    sandwich covariance ``H^-1 (sum_g s_g s_g^T) H^-1`` (scores summed within each cluster) with the
    small-sample factor ``G / (G - 1) * (N - 1) / (N - K)``.

    Raises
    ------
    numpy.linalg.LinAlgError
        A singular information matrix; ``FloatingPointError`` when Newton's method does not converge (the
        maximum-likelihood estimate does not exist: separation).
    """
    x = np.asarray(x, dtype=float)
    X = np.column_stack([np.ones_like(x), x]) if x.ndim == 1 else x
    k = X.shape[1]
    beta = np.zeros(k)
    for _ in range(MAX_ITERATIONS):
        prob = 1.0 / (1.0 + np.exp(-(X @ beta)))
        info = (X * (prob * (1 - prob))[:, None]).T @ X
        step = np.linalg.solve(info, X.T @ (y - prob))
        beta = beta + step
        if np.max(np.abs(step)) < 1e-10 * (1 + np.max(np.abs(beta))):
            break
    else:
        raise FloatingPointError("the logistic fit did not converge")
    prob = 1.0 / (1.0 + np.exp(-(X @ beta)))
    info = (X * (prob * (1 - prob))[:, None]).T @ X
    bread = np.linalg.inv(info)
    scores = X * (y - prob)[:, None]
    _, g = np.unique(clusters, return_inverse=True)
    summed = np.zeros((g.max() + 1, k))
    np.add.at(summed, g.ravel(), scores)
    n_g, n = summed.shape[0], X.shape[0]
    factor = n_g / (n_g - 1) * (n - 1) / (n - k) if n_g > 1 and n > k else np.nan
    meat = summed.T @ summed * factor
    return beta, bread, bread @ meat @ bread


def system_design(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Columns ``+1`` for the system shown first, ``-1`` for the second, one per system present but the last
    (the reference)."""
    present = np.unique(np.concatenate([first, second]))
    column = np.full(present.max() + 1, -1)
    column[present[:-1]] = np.arange(present.size - 1)
    out = np.zeros((first.size, present.size - 1))
    rows = np.arange(first.size)
    for codes, sign in ((first, 1.0), (second, -1.0)):
        use = column[codes] >= 0
        out[rows[use], column[codes[use]]] += sign
    return out


def _wald(beta, cov, k, z):
    from scipy.stats import norm

    se = float(np.sqrt(cov[k, k]))
    return float(beta[k] - z * se), float(beta[k] + z * se), float(2 * norm.sf(abs(beta[k]) / se))


def length_effect(c: Comparisons, confidence_level: float) -> dict[str, Any]:
    """The audit's length measures of one judge's comparisons (see the module docstring); ``reason`` says why
    there is no estimate when there is none."""
    from scipy.stats import norm

    known = np.isfinite(c.first_length) & np.isfinite(c.second_length)
    decisive = (c.verdict != TIE) & known
    diff = (c.first_length - c.second_length)[decisive]
    y = (c.verdict[decisive] == FIRST).astype(float)
    out: dict[str, Any] = {"length_comparisons": int(decisive.sum()), "length_missing": int((~known).sum())}
    sd = float(np.std(diff, ddof=1)) if diff.size > 1 else 0.0
    if diff.size < 10 or not sd > 0 or y.min() == y.max():
        return out
    if diff[y == 1].min() >= diff[y == 0].max() or diff[y == 1].max() <= diff[y == 0].min():
        out["reason"] = ("the length difference separates the verdicts perfectly (every longer first output wins, or"
                         " every one loses): the logistic fit has no finite estimate")
        return out
    z = norm.ppf(0.5 + confidence_level / 2)
    clusters = c.input[decisive]
    try:
        beta, _, robust = logistic_fit(diff / sd, y, clusters)
    except (np.linalg.LinAlgError, FloatingPointError):
        return out
    low, high, pvalue = _wald(beta, robust, 1, z)
    out.update(length_effect_unadjusted=float(beta[1]), length_effect_unadjusted_low=low,
               length_effect_unadjusted_high=high, length_sd=sd)
    X = np.column_stack([np.ones(diff.size), diff / sd, system_design(c.first[decisive], c.second[decisive])])
    try:
        beta, _, robust = logistic_fit(X, y, clusters)
    except (np.linalg.LinAlgError, FloatingPointError):
        out["reason"] = ("the fit with system effects has no finite estimate (a system wins or loses all its decisive"
                         " verdicts)")
        return out
    if not np.all(np.isfinite(beta)) or not np.all(np.isfinite(robust)):
        return out
    low, high, pvalue = _wald(beta, robust, 1, z)
    out.update(length_effect=float(beta[1]), length_effect_low=low, length_effect_high=high,
               position_effect=float(beta[0]), length_pvalue=pvalue)
    return out
