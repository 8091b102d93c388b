"""What a metric-score gap means to humans: the probability that humans order two systems as the metric does,
as a function of the metric-score gap between them.

Deutsch, Dror & Roth (2022) advise reporting correlations by score gap (r_SYS Delta). This turns that
advice into the number a reader wants: "a +0.5 ROUGE-1 gain is confirmed by the human judgments with
probability p [low, high]". Over all pairs of systems, whether the humans agree with the metric's
ordering is modelled as a smooth, logistic function of the absolute gap, with a bootstrap band.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import MetaevalWarning, ParameterError, ScoreSetError, check_int
from ..serialization import ResultMixin
from ..signature import Signature
from . import _common as common
from .interface import Call, CommandSpec, Option

__all__ = ["GapAgreementResult", "gap_agreement", "firth_logistic"]

MAX_ITERATIONS = 100
TOLERANCE = 1e-8
MAX_STEP = 5.0


@dataclass(frozen=True)
class GapAgreementResult(ResultMixin):
    """P(humans agree with the metric's ordering of two systems | metric gap), per metric.

    Attributes
    ----------
    metrics : tuple of str
    coefficients : numpy.ndarray
        (A, 2) ``(b0, b1)`` of ``p(g) = 1 / (1 + exp(-(b0 + b1 g)))``, ``g`` in metric units.
    grid, probability, low, high : numpy.ndarray
        (A, G) gaps from 0 to the largest observed gap, the fitted probability and its bootstrap band.
    resample_median : numpy.ndarray
        (A, G) median of the resampled curves before centring (a diagnostic of the attenuation that
        resampling inputs causes; see the Notes of :func:`gap_agreement`).
    deltas : numpy.ndarray
        (D,) the gaps asked for; ``at_delta``, ``at_delta_low``, ``at_delta_high`` (A, D) the answers.
    n_pairs, n_excluded : numpy.ndarray
        (A,) pairs used (ordered by both the metric and the humans) and pairs left out (tied in one).
    agreement : numpy.ndarray
        (A,) the share of used pairs on which humans agree (unsmoothed).
    bin_gap, bin_agreement, bin_count : numpy.ndarray
        (A, B) mean gap, agreement rate and pair count of equal-count bins of the gap (for plots).
    max_gap : numpy.ndarray
        (A,) the largest observed gap; answers beyond it are extrapolations.
    reasons : numpy.ndarray of str
        (A,) why a metric's fit is NaN ('' when defined).
    """

    metrics: tuple[str, ...]
    human: str
    coefficients: np.ndarray
    grid: np.ndarray
    probability: np.ndarray
    low: np.ndarray
    high: np.ndarray
    resample_median: np.ndarray
    deltas: np.ndarray
    at_delta: np.ndarray
    at_delta_low: np.ndarray
    at_delta_high: np.ndarray
    n_pairs: np.ndarray
    n_excluded: np.ndarray
    agreement: np.ndarray
    bin_gap: np.ndarray
    bin_agreement: np.ndarray
    bin_count: np.ndarray
    max_gap: np.ndarray
    reasons: np.ndarray
    full_test_set: bool
    confidence_level: float
    n_resamples: int
    n_resamples_dropped: np.ndarray
    signature: Signature

    def frame_rows(self) -> list[dict[str, Any]]:
        """One row per (metric, asked gap); without ``deltas``, one row per (metric, grid point)."""
        if self.deltas.size:
            rows = [{"metric": m, "delta": float(d), "probability": common.plain(self.at_delta[a, k]),
                     "low": common.plain(self.at_delta_low[a, k]), "high": common.plain(self.at_delta_high[a, k]),
                     "extrapolated": bool(d > self.max_gap[a]), "n_pairs": int(self.n_pairs[a]),
                     "reason": self.reasons[a]}
                    for a, m in enumerate(self.metrics) for k, d in enumerate(self.deltas)]
        else:
            rows = [{"metric": m, "delta": float(g), "probability": common.plain(self.probability[a, k]),
                     "low": common.plain(self.low[a, k]), "high": common.plain(self.high[a, k]),
                     "extrapolated": False, "n_pairs": int(self.n_pairs[a]), "reason": self.reasons[a]}
                    for a, m in enumerate(self.metrics) for k, g in enumerate(self.grid[a])]
        return rows

    def curve_frame(self):
        """One row per (metric, grid point): the smoothed curve and its band."""
        import pandas as pd

        return pd.DataFrame([{"metric": m, "gap": float(g), "probability": common.plain(self.probability[a, k]),
                              "low": common.plain(self.low[a, k]), "high": common.plain(self.high[a, k])}
                             for a, m in enumerate(self.metrics) for k, g in enumerate(self.grid[a])])

    def bins_frame(self):
        """One row per (metric, bin): the raw agreement rates the curve smooths."""
        import pandas as pd

        return pd.DataFrame([{"metric": m, "mean_gap": common.plain(self.bin_gap[a, k]),
                              "agreement": common.plain(self.bin_agreement[a, k]), "n_pairs": int(self.bin_count[a, k])}
                             for a, m in enumerate(self.metrics) for k in range(self.bin_gap.shape[1])])

    def to_dict(self) -> dict[str, Any]:
        return {
            "analysis": "gap", "metrics": list(self.metrics), "human": self.human,
            "model": "firth-logistic(|gap|)", "coefficients": common.plain(self.coefficients),
            "agreement": common.plain(self.agreement), "n_pairs": common.plain(self.n_pairs),
            "n_excluded": common.plain(self.n_excluded), "max_gap": common.plain(self.max_gap),
            "reasons": list(self.reasons), "full_test_set": self.full_test_set,
            "confidence_level": self.confidence_level, "n_resamples": self.n_resamples,
            "answers": common.records(self.to_frame()) if self.deltas.size else [],
            "curve": common.records(self.curve_frame()),
            "bins": common.records(self.bins_frame()),
            "signature": str(self.signature),
        }


def firth_logistic(d: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Firth-penalized logistic regression ``logit p = b0 + b1 d``, batched: d, y, w (b, P) -> (b, 2).

    ``w`` (0/1) marks the observations used. Firth's (1993) modified score
    ``X^T (w (y - p) + h (1/2 - p)) = 0``, with ``h`` the diagonal of the weighted hat matrix, gives
    finite estimates even under (quasi-)complete separation (e.g. every pair agreeing). Newton steps
    with the Fisher information, each component capped at ``MAX_STEP`` (as logistf does). Rows with
    fewer than 2 used observations or a constant ``d`` are NaN.
    """
    b = d.shape[0]
    beta = np.zeros((b, 2))
    ones = np.ones_like(d)
    for _ in range(MAX_ITERATIONS):
        eta = beta[:, :1] + beta[:, 1:] * d
        p = 1.0 / (1.0 + np.exp(-eta))
        v = w * p * (1.0 - p)
        i00, i01, i11 = v.sum(axis=1), (v * d).sum(axis=1), (v * d * d).sum(axis=1)
        det = i00 * i11 - i01 * i01
        with np.errstate(invalid="ignore", divide="ignore"):
            inv00, inv01, inv11 = i11 / det, -i01 / det, i00 / det
            h = v * (inv00[:, None] * ones + 2 * inv01[:, None] * d + inv11[:, None] * d * d)
        r = w * (y - p) + h * (0.5 - p)
        u0, u1 = r.sum(axis=1), (r * d).sum(axis=1)
        step = np.stack([inv00 * u0 + inv01 * u1, inv01 * u0 + inv11 * u1], axis=1)
        step = np.clip(np.nan_to_num(step, nan=0.0), -MAX_STEP, MAX_STEP)
        beta = beta + step
        if np.max(np.abs(step)) < TOLERANCE:
            break
    bad = (w.sum(axis=1) < 2) | ~(_spread(d, w) > 0)
    beta[bad] = np.nan
    return beta


def _spread(d, w):
    hi = np.where(w > 0, d, -np.inf).max(axis=1)
    lo = np.where(w > 0, d, np.inf).min(axis=1)
    return hi - lo


def _observations(xbar, zbar, i, j, rtol):
    """Gaps and agreement of the pairs: (..., P) gap, agree (0/1), used (0/1); ties under the relative tie
    tolerance ``rtol``."""
    sx = common.pair_signs(xbar, i, j, rtol)
    sz = common.pair_signs(zbar, i, j, rtol)
    used = ((sx != 0) & (sz != 0)).astype(np.float64)
    gap = np.where(used > 0, np.abs(xbar[..., i] - xbar[..., j]), 0.0)
    return gap, (sx == sz).astype(np.float64), used


def _gap_iv(ds, metrics, human, deltas, grid_points, n_bins, full_test_set, n_resamples, confidence_level,
            corpus_statistics):
    checked = common.check_scores(ds, human, metrics, corpus_statistics)
    ds, metrics = checked.ds, checked.metrics
    if ds.shape[0] < 2:
        raise ScoreSetError(f"`ds` must have at least 2 systems (a gap is between two); got {ds.shape[0]}.")
    if deltas is None:
        deltas = np.zeros(0)
    else:
        try:
            deltas = np.asarray(deltas, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            deltas = np.array([np.nan])
        if not (np.isfinite(deltas).all() and (deltas >= 0).all()):
            raise ParameterError(f"`deltas` must be a number or a list of numbers >= 0 (metric gaps); got {deltas!r}.")
    grid_points = check_int("grid_points", grid_points, minimum=2)
    n_bins = check_int("n_bins", n_bins, minimum=1)
    full_test_set = common.check_full_test_set(full_test_set)
    n_resamples = check_int("n_resamples", n_resamples, minimum=0)
    confidence_level = iv.check_confidence_level(confidence_level)
    corpus = checked.corpus
    return ds, metrics, human, deltas, grid_points, n_bins, full_test_set, n_resamples, confidence_level, corpus


def centred_band(curves: np.ndarray, estimate: np.ndarray, confidence_level: float):
    """Percentile band of resampled probabilities, centred on ``estimate`` at their median, on the logit scale.

    ``curves`` (k, A, G) and ``estimate`` (A, G) -> ``low``, ``high``, the resamples' ``median`` and the
    number of undefined resamples: ``expit(logit p_hat + q(logit p* - median logit p*))`` for the
    quantiles ``q`` at ``(1 - confidence_level) / 2`` and ``(1 + confidence_level) / 2``.
    """
    eps = 1e-12
    with np.errstate(divide="ignore", invalid="ignore"):
        logit = np.log(np.clip(curves, eps, 1 - eps)) - np.log1p(-np.clip(curves, eps, 1 - eps))
        centre_logit = np.nanmedian(np.where(np.isfinite(curves), logit, np.nan), axis=0) \
            if np.isfinite(curves).any() else np.full(estimate.shape, np.nan)
    lo, hi, dropped = common.percentile_bounds(logit - centre_logit[None], confidence_level)
    est = np.clip(estimate, eps, 1 - eps)
    base = np.log(est) - np.log1p(-est)
    with np.errstate(over="ignore"):
        expit = lambda v: 1.0 / (1.0 + np.exp(-v))  # noqa: E731
        return expit(base + lo), expit(base + hi), expit(centre_logit), dropped


def _predict(beta, g):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-(beta[..., :1] + beta[..., 1:] * g)))


def gap_agreement(
    ds: ScoreSet,
    metrics: Any,
    human: str,
    *,
    deltas: Any = None,
    grid_points: int = defaults.GAP_GRID_POINTS,
    n_bins: int = defaults.GAP_BINS,
    full_test_set: bool = False,
    n_resamples: int = defaults.N_RESAMPLES,
    confidence_level: float = defaults.CONFIDENCE_LEVEL,
    rng: Any = None,
    corpus_statistics: Any = None,
    tie_tolerance: float = defaults.TIE_TOLERANCE,
) -> GapAgreementResult:
    """Probability that humans confirm the metric's ordering of two systems, as a function of the gap.

    Parameters
    ----------
    ds : ScoreSet
    metrics : str or sequence of str
    human : str
    deltas : float or sequence of float, optional
        Metric gaps (in the metric's units, e.g. 0.5 for half a ROUGE point on a 0-100 scale) at which
        to report the probability and its interval.
    grid_points : int
        Points of the curve, from 0 to the largest observed gap.
    n_bins : int
        Equal-count bins of the raw agreement rates (for plots next to the curve).
    full_test_set : bool
        Average each metric over every input it scored and the human over the judged inputs.
    n_resamples : int
        BOOT-INPUTS resamples of the band (0: no band).
    confidence_level : float
    rng : None, int or numpy.random.Generator
    corpus_statistics : mapping of str to CorpusScores or (statistics, aggregate), optional
        Metrics whose system score is a corpus score (BLEU, chrF, TER: summed sufficient statistics, then
        scored; :class:`metaeval.stats.corpus.CorpusScores`), as in :func:`metaeval.correlate`: in the data
        and in every resample (re-summed with the input counts). Their inputs are those where every
        system has statistics (and, in judged-subset mode, every other scorer a score). Recorded as
        ``corpus_level`` in the signature.
    tie_tolerance : float in [0, 0.001], optional
        Relative tolerance under which two scores tie in every rank statistic (Kendall's taus, Spearman, pairwise
        accuracy, acc-eq / tau-eq, the pair signs of the analyses): ``|a - b|`` at most ``tie_tolerance`` times
        the spread of their vector (docs/statistics.md, "The tie rule"). Default
        :data:`metaeval.defaults.TIE_TOLERANCE` (1e-9); 0 compares exactly, as scipy does. A non-default value
        is recorded in the signature.

    Returns
    -------
    GapAgreementResult

    Warns
    -----
    DegenerateWarning
        When a metric's fit is undefined (fewer than 2 pairs ordered by both, or a single gap value).
    MetaevalWarning
        When a requested gap exceeds the largest observed gap (the answer is an extrapolation).

    Notes
    -----
    Every pair of systems ``(i, j)`` with system scores ordered by the metric (``x_i != x_j``) and by the
    humans (``z_i != z_j``) is an observation with gap ``g = |x_i - x_j|`` and outcome
    ``y = [sgn(x_i - x_j) = sgn(z_i - z_j)]``; pairs tied in either are left out and counted
    (the metric makes no claim, or the humans express no preference). The curve is a logistic
    regression ``P(y = 1 | g) = 1 / (1 + exp(-(b0 + b1 g)))`` fitted with Firth's penalty.

    Why this smoother: agreement should rise monotonically with the gap from about 1/2 (a tiny gap is
    noise) towards 1; a logistic curve in ``|g|`` has exactly that shape with two parameters, which is
    as much as ~N^2/2 strongly dependent pairs support (isotonic regression gives a step function whose
    bootstrap band is ragged; kernel smoothing needs a bandwidth). The intercept is free rather than
    forcing ``p(0) = 1/2``, so the curve can follow the data where most pairs are (``p(0)`` itself is
    an extrapolation of the fit: read the raw rates of ``bins_frame()`` near 0). Firth's penalty
    keeps the fit finite when every pair agrees. The pairs
    are not independent, so the fit is a smoother, not an inference: the band comes from resampling
    inputs with replacement, recomputing the system scores and refitting. Resampling inputs adds a
    second layer of noise to system scores that are already noisy, which flattens every resampled curve
    (errors in the gaps attenuate the slope: on REALSumm 74-97% of the resampled curves lie below the
    estimate at mid-range gaps), so raw percentiles would sit below the estimate. The band therefore
    keeps the resamples' spread and drops that shift: on the logit scale it is the estimate plus the
    percentiles of the resampled curves minus their median (``resample_median`` reports the shift).
    Systems are not resampled: the band is about these systems' scores, not a population of systems.

    References
    ----------
    D. Deutsch, R. Dror and D. Roth. Re-Examining System-Level Correlations of Automatic Summarization
    Evaluation Metrics. NAACL 2022 (Sec. 4 and its recommendations).
    D. Firth. Bias reduction of maximum likelihood estimates. Biometrika 80(1), 1993.
    """
    ds, metrics, human, deltas, grid_points, n_bins, full_test_set, n_resamples, confidence_level, corpus = _gap_iv(
        ds, metrics, human, deltas, grid_points, n_bins, full_test_set, n_resamples, confidence_level,
        corpus_statistics)
    rtol = iv.check_tie_tolerance(tie_tolerance)
    generator, seed = iv.rng_and_seed(rng)
    scores = common.system_scores(ds, metrics, human, full_test_set=full_test_set, corpus=corpus)
    xbar, zbar = scores.point()
    i, j = common.pair_index(scores.n_systems)
    n_metrics = len(metrics)
    gap, agree, used = _observations(xbar, zbar[None], i, j, rtol)  # (A, P)
    max_gap = np.where(used.sum(axis=1) > 0, np.where(used > 0, gap, 0.0).max(axis=1), np.nan)
    scale = np.where(max_gap > 0, max_gap, 1.0)[:, None]
    beta_s = firth_logistic(gap / scale, agree, used)
    beta = np.stack([beta_s[:, 0], beta_s[:, 1] / scale[:, 0]], axis=1)
    grid = np.linspace(0.0, 1.0, grid_points)[None] * np.nan_to_num(max_gap)[:, None]
    probability = _predict(beta, grid)
    at_delta = _predict(beta, np.broadcast_to(deltas, (n_metrics, deltas.size)))
    reasons = np.array([("" if np.isfinite(beta[a]).all() else
                         "fewer than 2 system pairs ordered by both metric and humans" if used[a].sum() < 2 else
                         "every ordered pair has the same metric gap") for a in range(n_metrics)], dtype=object)

    low, high, median = (np.full(grid.shape, np.nan) for _ in range(3))
    d_low, d_high = np.full(at_delta.shape, np.nan), np.full(at_delta.shape, np.nan)
    dropped = np.zeros(n_metrics, dtype=np.int64)
    if n_resamples:
        curves = np.full((n_resamples, n_metrics, grid_points + deltas.size), np.nan)
        points = np.concatenate([grid, np.broadcast_to(deltas, (n_metrics, deltas.size))], axis=1) / scale
        draws = scores.draws(n_resamples, generator)
        for sl, xm, zm in scores.resampled(draws):
            g, y, u = _observations(xm, zm[None], i, j, rtol)  # (A, b, P)
            for a in range(n_metrics):
                bs = firth_logistic(g[a] / scale[a], y[a], u[a])
                curves[sl, a] = _predict(bs, points[a][None])
        lo, hi, centre, drop = centred_band(curves, np.concatenate([probability, at_delta], axis=1),
                                            confidence_level)
        low, high, median = lo[:, :grid_points], hi[:, :grid_points], centre[:, :grid_points]
        d_low, d_high = lo[:, grid_points:], hi[:, grid_points:]
        dropped = drop[:, 0]
    bin_gap, bin_agree, bin_count = _bins(gap, agree, used, n_bins)
    common.warn_reasons(f"gap-agreement fits of {', '.join(metrics)}", reasons)
    beyond = [(m, float(d)) for a, m in enumerate(metrics) for d in deltas if d > max_gap[a]]
    if beyond:
        listed = "; ".join(f"{m}: {d:g} > {max_gap[metrics.index(m)]:.4g}" for m, d in beyond)
        warnings.warn(f"gaps beyond the largest observed metric gap are extrapolations ({listed}).",
                      MetaevalWarning, stacklevel=2)
    signature = Signature.of(
        **ds.signature_fields(), analysis="gap", metrics=list(metrics), human=human, level="system",
        model="firth-logistic", deltas=[float(d) for d in deltas], grid_points=grid_points, bins=n_bins,
        full_test_set=full_test_set,
        **iv.corpus_field(corpus, metrics, ("system",)), ci="boot-inputs", resamples=n_resamples, confidence=confidence_level, seed=seed,
        **iv.tie_field(rtol),
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        agreement = (agree * used).sum(axis=1) / used.sum(axis=1)
    return GapAgreementResult(
        metrics=metrics, human=human, coefficients=beta, grid=grid, probability=probability, low=low, high=high,
        resample_median=median,
        deltas=deltas, at_delta=at_delta, at_delta_low=d_low, at_delta_high=d_high,
        n_pairs=used.sum(axis=1).astype(np.int64), n_excluded=(1 - used).sum(axis=1).astype(np.int64),
        agreement=agreement, bin_gap=bin_gap, bin_agreement=bin_agree, bin_count=bin_count, max_gap=max_gap,
        reasons=reasons, full_test_set=full_test_set, confidence_level=confidence_level, n_resamples=n_resamples,
        n_resamples_dropped=dropped, signature=signature,
    )


def _bins(gap, agree, used, n_bins):
    """Equal-count bins of the used pairs by gap: mean gap, agreement rate, count -> (A, B) each."""
    n_metrics = gap.shape[0]
    out = np.full((3, n_metrics, n_bins), np.nan)
    for a in range(n_metrics):
        keep = used[a] > 0
        order = np.argsort(gap[a][keep], kind="stable")
        chunks = np.array_split(order, n_bins)
        for k, chunk in enumerate(chunks):
            out[2, a, k] = chunk.size
            if chunk.size:
                out[0, a, k] = gap[a][keep][chunk].mean()
                out[1, a, k] = agree[a][keep][chunk].mean()
    return out[0], out[1], np.nan_to_num(out[2]).astype(np.int64)


# -- the command line and the report (declarations read by metaeval.cli and metaeval.report) -------------------

def _command(call: Call) -> GapAgreementResult:
    o = call.options
    return gap_agreement(call.ds, call.metrics, call.human, deltas=o["delta"] or None, grid_points=o["grid_points"],
                         n_bins=o["n_bins"], full_test_set=o["full_test_set"], n_resamples=o["n_resamples"],
                         confidence_level=o["confidence_level"], rng=o["seed"], corpus_statistics=call.corpus,
                         tie_tolerance=o["tie_tolerance"])


CLI = CommandSpec(
    _command,
    options=(Option("delta", float, help="A metric gap (metric units; repeatable), e.g. --delta 0.5 for +0.5 on a"
                                         " 0-100 scale.", multiple=True),
             Option("grid_points", int, defaults.GAP_GRID_POINTS, "Points of the curve (shown when no --delta is"
                                                                  " given)."),
             Option("n_bins", int, defaults.GAP_BINS, "Equal-count bins of the raw agreement rates."),
             "full_test_set",
             Option("confidence_level", help="Confidence level of the bands.", shared=True)),
    inputs=("source", "corpus", "n_resamples", "seed", "tie_tolerance"),
    help="The probability that the humans agree with the metric's ordering of two systems, as a function of"
         " the metric gap, smoothed over all system pairs (Firth logistic regression).",
    frame=lambda result, options: result.to_frame() if options["delta"] else result.curve_frame(),
)
