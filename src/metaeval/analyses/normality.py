"""Normality of system scores and of per-input scores (Deutsch, Dror & Roth 2021, App. A).

Fisher-z intervals and Williams' test assume (bivariate) normal scores. Shapiro-Wilk tests whether the
N system scores of a scorer look normal, and, at the summary level, whether the N scores of each input
do; the share of inputs rejecting normality at ``alpha`` summarizes the latter.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import ParameterError
from ..serialization import ResultMixin
from ..signature import Signature
from . import _common as common
from .interface import Call, CommandSpec, Option, SectionSpec

__all__ = ["NormalityResult", "normality"]

#: Shapiro-Wilk needs at least this many values.
MIN_VALUES = 3


@dataclass(frozen=True)
class NormalityResult(ResultMixin):
    """Shapiro-Wilk tests of every scorer's system scores and per-input scores.

    Attributes
    ----------
    scorers : tuple of str
    humans : tuple of str
        The scorers among ``scorers`` that are human judgments.
    system_statistic, system_pvalue : numpy.ndarray
        (S,) Shapiro-Wilk W and p-value of the N system scores (mean over the inputs the scorer has for
        every system); NaN with a reason in ``system_reasons``.
    input_pvalues : numpy.ndarray
        (S, M) p-value of the N scores of each input (NaN where untestable), for histograms.
    share_rejected : numpy.ndarray
        (S,) share of the tested inputs with p-value < ``alpha``.
    n_inputs_tested, n_inputs_skipped : numpy.ndarray
        (S,) inputs tested, and inputs skipped because they have fewer than 3 scores or are constant.
    """

    scorers: tuple[str, ...]
    humans: tuple[str, ...]
    alpha: float
    system_statistic: np.ndarray
    system_pvalue: np.ndarray
    system_reasons: np.ndarray
    share_rejected: np.ndarray
    n_inputs_tested: np.ndarray
    n_inputs_skipped: np.ndarray
    signature: Signature
    input_pvalues: np.ndarray = field(repr=False, compare=False)

    def frame_rows(self) -> list[dict[str, Any]]:
        """One row per scorer."""
        return [{
            "scorer": s, "human": s in self.humans, "system_w": common.plain(self.system_statistic[k]),
            "system_pvalue": common.plain(self.system_pvalue[k]),
            "system_normal_rejected": bool(self.system_pvalue[k] < self.alpha) if np.isfinite(self.system_pvalue[k]) else None,
            "input_share_rejected": common.plain(self.share_rejected[k]),
            "n_inputs_tested": int(self.n_inputs_tested[k]), "n_inputs_skipped": int(self.n_inputs_skipped[k]),
            "reason": self.system_reasons[k],
        } for k, s in enumerate(self.scorers)]

    def to_dict(self) -> dict[str, Any]:
        return {"analysis": "normality", "alpha": self.alpha, "scorers": common.records(self.to_frame()),
                "signature": str(self.signature)}


def _normality_iv(ds, scorers, alpha):
    known = set((ds.human, *ds.metrics)) if isinstance(ds, iv.CheckedScores) else set()  # checked by the caller
    ds = iv.check_scoreset(ds)
    if scorers is None:
        scorers = ds.humans + ds.metrics
    elif isinstance(scorers, str):
        scorers = (scorers,)
    try:
        scorers = tuple(scorers)
    except TypeError:
        raise ParameterError(f"`scorers` must be a scorer name or a list of scorer names; got {scorers!r}.") from None
    if not scorers:
        raise ParameterError("`scorers` must name at least one scorer; got an empty list.")
    for scorer in scorers:
        if not (isinstance(scorer, str) and scorer in known):
            ds.require(scorer, param="scorers")
    alpha = iv.check_alpha(alpha)
    return ds, scorers, alpha


def shapiro(values: np.ndarray, rtol: float = defaults.TIE_TOLERANCE) -> tuple[float, float, str]:
    """Shapiro-Wilk ``(W, p, reason)`` of the finite ``values``; NaN and a reason when untestable.

    Untestable: fewer than 3 values, or a constant vector (all tied within the relative tolerance of
    :mod:`metaeval.stats.correlations.coefficients`), for which scipy's answer depends on its version.
    """
    v = values[np.isfinite(values)]
    if v.size < MIN_VALUES:
        return float("nan"), float("nan"), f"fewer than {MIN_VALUES} scores"
    i, j = common.pair_index(v.size)
    if not common.pair_signs(v, i, j, rtol).any():
        return float("nan"), float("nan"), "all scores are tied"
    with warnings.catch_warnings():
        # scipy warns that p may be inaccurate for N > 5000; the p-value is still reported.
        warnings.filterwarnings("ignore", category=UserWarning, message=".*N > 5000.*")
        result = stats.shapiro(v)
    return float(result.statistic), float(result.pvalue), ""


#: Inputs whose pair signs are computed at once by :func:`input_pvalues`.
_CHUNK = 4096


def _swilk():
    """scipy's compiled Shapiro-Wilk routine (AS R94), which ``scipy.stats.shapiro`` calls after sorting and
    centring; None when this scipy does not have it where expected (then ``scipy.stats.shapiro`` is called)."""
    try:
        from scipy.stats._ansari_swilk_statistics import swilk
    except ImportError:  # pragma: no cover - another scipy layout
        return None
    return swilk


def input_pvalues(x: np.ndarray, rtol: float = defaults.TIE_TOLERANCE) -> np.ndarray:
    """``shapiro(x[:, j])[1]`` for every input ``j`` of ``x`` (N, M), the same numbers, faster.

    The inputs every system scored are decided together: constant ones (every pair tied, under the tie rule)
    are NaN; the others go to scipy's compiled routine with the preparation of ``scipy.stats.shapiro`` (sorted,
    minus the value at position ``N // 2``), without its per-call overhead. Inputs with a missing score go
    through :func:`shapiro`.
    """
    n, m = x.shape
    out = np.full(m, np.nan)
    complete = np.isfinite(x).all(axis=0)
    swilk = _swilk()
    if swilk is None or n < MIN_VALUES:
        complete[:] = False
    cols = np.flatnonzero(complete)
    i, j = common.pair_index(n)
    half = np.zeros(n // 2)
    for start in range(0, cols.size, _CHUNK):
        part = cols[start:start + _CHUNK]
        values = np.ascontiguousarray(x[:, part].T)  # (k, N)
        varies = common.pair_signs(values, i, j, rtol).any(axis=1)
        ordered = np.sort(values, axis=1) - values[:, n // 2 : n // 2 + 1]
        for row in np.flatnonzero(varies):
            half[:] = 0.0
            out[part[row]] = float(swilk(ordered[row], half, 0)[1])
    for col in np.flatnonzero(~complete):
        out[col] = shapiro(x[:, col], rtol)[1]
    return out


def normality(ds: ScoreSet, scorers: Any = None, *, alpha: float = defaults.ALPHA,
              tie_tolerance: float = defaults.TIE_TOLERANCE) -> NormalityResult:
    """Shapiro-Wilk tests of system scores and per-input scores, for humans and metrics.

    Parameters
    ----------
    ds : ScoreSet
    scorers : str or sequence of str, optional
        Default: every human scorer, then every metric.
    alpha : float
        Level at which a per-input test counts as rejecting normality (default 0.05).
    tie_tolerance : float in [0, 0.001], optional
        Relative tolerance under which two scores tie (here: which vectors are all tied, hence untestable): ``|a - b|`` at most ``tie_tolerance`` times
        the spread of their vector (docs/statistics.md, "The tie rule"). Default
        :data:`metaeval.defaults.TIE_TOLERANCE` (1e-9); 0 compares exactly, as scipy does. A non-default value
        is recorded in the signature.

    Returns
    -------
    NormalityResult

    Warns
    -----
    DegenerateWarning
        When a system-level test is undefined (fewer than 3 systems, all system scores tied).

    Notes
    -----
    System level: ``W, p = ShapiroWilk(xbar)``, ``xbar_i`` the mean of scorer X over the inputs it scored
    for every system. Per input ``j``: ``p_j = ShapiroWilk(X[:, j])`` over the systems with a score;
    ``share = #{p_j < alpha} / #tested``. Inputs with fewer than 3 scores or constant scores are
    skipped and counted. Computed with ``scipy.stats.shapiro``.

    References
    ----------
    D. Deutsch, R. Dror and D. Roth. A Statistical Analysis of Summarization Evaluation Metrics using
    Resampling Methods. TACL 9, 2021, App. A.
    S. S. Shapiro and M. B. Wilk. An analysis of variance test for normality (complete samples).
    Biometrika 52, 1965.
    """
    ds, scorers, alpha = _normality_iv(ds, scorers, alpha)
    rtol = iv.check_tie_tolerance(tie_tolerance)
    n_scorers, n_inputs = len(scorers), ds.shape[1]
    w = np.full(n_scorers, np.nan)
    p = np.full(n_scorers, np.nan)
    reasons = np.full(n_scorers, "", dtype=object)
    input_p = np.full((n_scorers, n_inputs), np.nan)
    for k, scorer in enumerate(scorers):
        x = ds.matrix(scorer)
        complete = np.isfinite(x).all(axis=0)
        if complete.any():
            w[k], p[k], reason = shapiro(x[:, complete].mean(axis=1), rtol)
            reasons[k] = f"system scores of {scorer!r}: {reason}" if reason else ""
        else:
            reasons[k] = f"system scores of {scorer!r}: no input is scored for every system"
        input_p[k] = input_pvalues(x, rtol)
    tested = np.isfinite(input_p)
    n_tested = tested.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(n_tested > 0, (np.where(tested, input_p, 1.0) < alpha).sum(axis=1) / np.maximum(n_tested, 1),
                         np.nan)
    has_scores = np.stack([np.isfinite(ds.matrix(s)).any(axis=0) for s in scorers])
    common.warn_reasons("Shapiro-Wilk tests of system scores", reasons)
    signature = Signature.of(**ds.signature_fields(), analysis="normality", scorers=list(scorers),
                             test="shapiro-wilk", alpha=alpha, **iv.tie_field(rtol))
    return NormalityResult(
        scorers=scorers, humans=tuple(s for s in scorers if s in ds.humans), alpha=alpha, system_statistic=w,
        system_pvalue=p, system_reasons=reasons, share_rejected=share, n_inputs_tested=n_tested,
        n_inputs_skipped=(has_scores & ~tested).sum(axis=1), signature=signature, input_pvalues=input_p,
    )


# -- the command line and the report (declarations read by metaeval.cli and metaeval.report) -------------------

def _command(call: Call) -> NormalityResult:
    metrics = call.options["metric"]
    for metric in metrics:
        call.ds.require(metric, param="metric")
    if call.human in metrics:
        raise ParameterError(f"`--metric` must not repeat the human scorer; got {call.human!r}.")
    scorers = (call.human,) + tuple(metrics) if metrics else None
    return normality(call.ds, scorers, alpha=call.options["alpha"])


CLI = CommandSpec(
    _command,
    options=(Option("alpha", help="Level at which a test rejects normality.", shared=True),),
    inputs=("source",),
    help="Shapiro-Wilk tests of each scorer's system scores and of its scores across systems on each input"
         " (Deutsch, Dror & Roth 2021, App. A).",
)

REPORT = SectionSpec(  # cell scores: corpus statistics do not apply
    "normality", lambda ds, human, focus, settings, corpus: normality(ds, [human] + [m for m in focus if m != human],
                                                                   tie_tolerance=settings["tie_tolerance"]),
)
