"""Nugget F(beta): the TREC 2003/2004 definition-question score (Voorhees 2003), as restated by
Lin & Demner-Fushman (2005).

For one response: ``r`` vital nuggets matched, ``a`` okay nuggets matched, ``R`` vital nuggets in the
answer key, ``l`` the response length (non-whitespace characters)::

    recall     R_n = r / R                                (okay nuggets give no recall)
    allowance  alpha = c * (r + a)                        (c = 100 characters per matched nugget)
    precision  P_n = 1                  if l < alpha
               P_n = 1 - (l - alpha) / l   otherwise
    F(beta)    = (beta^2 + 1) P_n R_n / (beta^2 P_n + R_n)

beta = 5 in TREC 2003, beta = 3 in TREC 2004. A response with no vital nugget scores 0 whatever its okay
nuggets (R_n = 0). Decision: F is 0 (not NaN) when P_n = R_n = 0, the TREC convention (a response with
nothing matched and l > 0 has P_n = 0 and R_n = 0); the counts may be fractional (soft matches), the
formula is unchanged.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from metaeval import defaults
from metaeval.errors import ParameterError

__all__ = ["nugget_f", "nugget_precision", "nugget_recall"]


def _array(name: str, value: Any, *, minimum: float = 0.0, strict: bool = False) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"`{name}` must be a number or an array of numbers; got {value!r}.") from None
    bad = ~np.isfinite(array) | ((array <= minimum) if strict else (array < minimum))
    if bad.any():
        first = float(array[bad].flat[0]) if array.ndim else float(array)
        rule = f"> {minimum:g}" if strict else f">= {minimum:g}"
        raise ParameterError(f"`{name}` must hold finite numbers {rule}; got {first!r}.")
    return array


def _nugget_iv(vital_matched, okay_matched, vital_total, length, beta, allowance):
    r = _array("vital_matched", vital_matched)
    a = _array("okay_matched", okay_matched)
    big_r = _array("vital_total", vital_total, strict=True)
    l = _array("length", length)
    try:
        r, a, big_r, l = np.broadcast_arrays(r, a, big_r, l)
    except ValueError:
        shapes = ", ".join(str(np.shape(v)) for v in (r, a, big_r, l))
        raise ParameterError(f"`vital_matched`, `okay_matched`, `vital_total` and `length` must have "
                             f"broadcastable shapes; got {shapes}.") from None
    over = r > big_r
    if over.any():
        k = int(np.flatnonzero(over.ravel())[0])
        raise ParameterError(f"`vital_matched` must be <= `vital_total`; got {float(r.ravel()[k])!r} > {float(big_r.ravel()[k])!r}.")
    beta = float(_array("beta", beta, strict=True))
    allowance = float(_array("allowance", allowance, strict=True))
    return r, a, big_r, l, beta, allowance


def nugget_recall(vital_matched, vital_total) -> np.ndarray:
    """Nugget recall ``r / R`` over the vital nuggets only (okay nuggets give no recall)."""
    r = _array("vital_matched", vital_matched)
    big_r = _array("vital_total", vital_total, strict=True)
    return np.asarray(r / big_r)


def nugget_precision(vital_matched, okay_matched, length, *, allowance: float = defaults.NUGGET_ALLOWANCE) -> np.ndarray:
    """Length-allowance precision: 1 if ``length < allowance * (r + a)``, else ``1 - (l - alpha) / l``."""
    r = _array("vital_matched", vital_matched)
    a = _array("okay_matched", okay_matched)
    l = _array("length", length)
    allowance = float(_array("allowance", allowance, strict=True))
    return _precision(r, a, l, allowance)


def _precision(r, a, l, allowance):
    alpha = allowance * (r + a)
    with np.errstate(divide="ignore", invalid="ignore"):
        penalized = 1.0 - (l - alpha) / l
    return np.asarray(np.where(l < alpha, 1.0, np.where(l > 0, penalized, 0.0)))


def nugget_f(vital_matched, okay_matched, vital_total, length, *, beta: float = defaults.NUGGET_BETA,
             allowance: float = defaults.NUGGET_ALLOWANCE) -> np.ndarray | float:
    """Nugget F(beta) of definition-question answers or summaries (TREC 2003/2004).

    Parameters
    ----------
    vital_matched, okay_matched : number or array
        ``r`` and ``a``: vital and okay nuggets found in the response (>= 0; fractions allowed for soft
        matches).
    vital_total : number or array
        ``R``: vital nuggets in the answer key (> 0).
    length : number or array
        ``l``: non-whitespace characters of the response (>= 0).
    beta : float, keyword-only
        Weight of recall: 3 (TREC 2004, the default) or 5 (TREC 2003).
    allowance : float, keyword-only
        Characters allowed per matched (vital or okay) nugget: 100 in TREC.

    Returns
    -------
    float or numpy.ndarray
        ``(beta^2 + 1) P R / (beta^2 P + R)`` per response (the arrays broadcast); a float for scalar
        inputs. 0 where ``R_n = 0`` (no vital nugget matched). For a ``beta`` whose square overflows
        float64 (above about 1.3e154), its limit: ``R`` where ``P > 0``, else 0.

    Raises
    ------
    ParameterError
        A count or length negative or not finite, ``vital_total <= 0``, ``vital_matched > vital_total``,
        shapes that do not broadcast, ``beta`` or ``allowance`` <= 0.

    Notes
    -----
    recall ``r / R``; allowance ``alpha = 100 (r + a)``; precision 1 if ``l < alpha`` else
    ``1 - (l - alpha) / l``. See the module docstring.

    References
    ----------
    J. Lin and D. Demner-Fushman (2005). Evaluating Summaries and Answers: Two Sides of the Same Coin?
    ACL 2005 Workshop on Intrinsic and Extrinsic Evaluation Measures for MT and/or Summarization, Fig. 2.
    E. Voorhees (2003). Overview of the TREC 2003 Question Answering Track.

    Examples
    --------
    >>> round(nugget_f(3, 2, 4, 600, beta=3), 6)
    0.757576
    >>> round(nugget_f(3, 2, 4, 600, beta=5), 6)
    0.752896
    """
    r, a, big_r, l, beta, allowance = _nugget_iv(vital_matched, okay_matched, vital_total, length, beta, allowance)
    recall = r / big_r
    precision = _precision(r, a, l, allowance)
    b2 = beta * beta
    if not np.isfinite(b2):  # beta above 1.3e154: F is its limit, recall wherever precision is positive
        f = np.where(precision > 0, recall, 0.0)
        return float(f) if f.ndim == 0 else f
    denominator = b2 * precision + recall
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.where(denominator > 0, (b2 + 1.0) * precision * recall / denominator, 0.0)
    return float(f) if f.ndim == 0 else f
