"""Top-k systems (REALSumm Exp-II, Bhandari et al. 2020): does a metric still agree with humans when only
the best systems are compared?

A system-level correlation over all systems is dominated by easy pairs (a weak baseline against a
strong model). Researchers compare the best systems, so REALSumm recomputes the correlation over the
``k`` systems with the highest human scores, for ``k`` from ``N`` down to 3.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import check_int
from ..serialization import ResultMixin
from ..signature import Signature
from ..stats.correlations.coefficients import correlation_rows
from . import _common as common
from .interface import Call, CommandSpec, Option, SectionSpec, focus_corpus, input_resamples

__all__ = ["TopKResult", "topk_correlations"]


@dataclass(frozen=True)
class TopKResult(ResultMixin):
    """Correlation over the ``k`` best systems by human score, per metric and ``k``.

    Attributes
    ----------
    metrics : tuple of str
    ks : numpy.ndarray
        (K,) the numbers of systems, in the order given (default ``N, N - 1, ..., 3``).
    statistic, ci_low, ci_high : numpy.ndarray
        (A, K) the correlation and its percentile BOOT-INPUTS interval.
    n_resamples_dropped : numpy.ndarray
        (A, K) resamples with an undefined correlation.
    reasons : numpy.ndarray of str
        (A, K) why a value is NaN ('' when defined).
    top_systems : tuple of tuple of str
        The systems in the top ``k``, best first, for every ``k`` (on the original data).
    """

    metrics: tuple[str, ...]
    human: str
    ks: np.ndarray
    statistic: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    n_resamples_dropped: np.ndarray
    reasons: np.ndarray
    top_systems: tuple[tuple[str, ...], ...]
    coefficient: str
    full_test_set: bool
    confidence_level: float
    n_resamples: int
    signature: Signature

    def frame_rows(self) -> list[dict[str, Any]]:
        """One row per (metric, k)."""
        return [{
            "metric": metric, "k": int(k), "statistic": common.plain(self.statistic[a, g]),
            "ci_low": common.plain(self.ci_low[a, g]), "ci_high": common.plain(self.ci_high[a, g]),
            "n_resamples_dropped": int(self.n_resamples_dropped[a, g]), "reason": self.reasons[a, g],
        } for a, metric in enumerate(self.metrics) for g, k in enumerate(self.ks)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "analysis": "topk", "metrics": list(self.metrics), "human": self.human, "coefficient": self.coefficient,
            "full_test_set": self.full_test_set, "confidence_level": self.confidence_level,
            "n_resamples": self.n_resamples, "points": common.records(self.to_frame()),
            "top_systems": {str(int(k)): list(s) for k, s in zip(self.ks, self.top_systems)},
            "signature": str(self.signature),
        }


def _topk_iv(ds, metrics, human, ks, coefficient, full_test_set, n_resamples, confidence_level, corpus_statistics):
    checked = common.check_scores(ds, human, metrics, corpus_statistics)
    ds, metrics = checked.ds, checked.metrics
    n = ds.shape[0]
    if ks is None:
        ks = tuple(range(n, defaults.TOPK_MIN_SYSTEMS - 1, -1)) or (n,)
    else:
        ks = common.check_positive_ints("ks", ks, minimum=1, maximum=n)
    coefficient = iv.check_coefficient(coefficient)
    full_test_set = common.check_full_test_set(full_test_set)
    n_resamples = check_int("n_resamples", n_resamples, minimum=0)
    confidence_level = iv.check_confidence_level(confidence_level)
    corpus = checked.corpus
    return ds, metrics, human, ks, coefficient, full_test_set, n_resamples, confidence_level, corpus


def top_indices(human_scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` highest human scores along the last axis, best first.

    Ties are broken by system order (a stable sort of the negated scores); systems without a score rank
    last.
    """
    key = np.where(np.isnan(human_scores), np.inf, -human_scores)
    return np.argsort(key, axis=-1, kind="stable")[..., :k]


def _topk_stat(xm: np.ndarray, zm: np.ndarray, k: int, coefficient: str, rtol: float) -> np.ndarray:
    """Correlation over the top ``k`` systems by ``zm``: xm (A, b, N), zm (b, N) -> (A, b)."""
    idx = top_indices(zm, k)  # (b, k)
    zk = np.take_along_axis(zm, idx, axis=-1)
    xk = np.take_along_axis(xm, np.broadcast_to(idx, xm.shape[:-1] + (k,)), axis=-1)
    a, b = xk.shape[:2]
    flat_z = np.broadcast_to(zk, (a, b, k)).reshape(a * b, k)
    return correlation_rows(np.ascontiguousarray(xk.reshape(a * b, k)), np.ascontiguousarray(flat_z),
                            coefficient, rtol=rtol).reshape(a, b)


def _reason(k: int, xk: np.ndarray, zk: np.ndarray, value: float, rtol: float) -> str:
    if k < defaults.TOPK_MIN_SYSTEMS:
        return f"a correlation over {k} systems is not meaningful (at least {defaults.TOPK_MIN_SYSTEMS} needed)"
    if np.isfinite(value):
        return ""
    i, j = common.pair_index(k)
    if not common.pair_signs(zk, i, j, rtol).any():
        return f"the human scores of the top {k} systems are all tied"
    if not common.pair_signs(xk, i, j, rtol).any():
        return f"the metric scores of the top {k} systems are all tied"
    return "the correlation is undefined"


def topk_correlations(
    ds: ScoreSet,
    metrics: Any,
    human: str,
    *,
    ks: Any = None,
    coefficient: str = defaults.COEFFICIENT,
    full_test_set: bool = False,
    n_resamples: int = defaults.N_RESAMPLES,
    confidence_level: float = defaults.CONFIDENCE_LEVEL,
    rng: Any = None,
    corpus_statistics: Any = None,
    tie_tolerance: float = defaults.TIE_TOLERANCE,
) -> TopKResult:
    """System-level correlation over the ``k`` best systems by human score (REALSumm Exp-II).

    Parameters
    ----------
    ds : ScoreSet
    metrics : str or sequence of str
        Bootstrap draws are shared by all metrics.
    human : str
    ks : sequence of int, optional
        Numbers of top systems, each in ``[1, N]`` (default ``N, N - 1, ..., 3``). Values below 3 give
        NaN with a reason (a correlation over 2 systems is +-1 by construction).
    coefficient : str
        Any coefficient (default Kendall tau-b; REALSumm reports Pearson and Kendall).
    full_test_set : bool
        Average each metric over every input it scored and the human over the judged inputs.
    n_resamples : int
        BOOT-INPUTS resamples (0: no intervals).
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
    TopKResult

    Warns
    -----
    DegenerateWarning
        For every NaN value (``k < 3``, all-tied human or metric scores among the top ``k``).

    Notes
    -----
    With system scores ``x`` and ``z`` and ``T_k`` the ``k`` systems with the highest ``z`` (ties broken
    by system order), the statistic is ``CORR(x[T_k], z[T_k])``. Intervals: inputs are resampled with
    replacement; on each resample the system scores are recomputed and the top ``k`` re-selected by the
    resampled human scores, so the interval includes the uncertainty about which systems are the best
    ``k`` (the statistic is recomputed from scratch, as a bootstrap requires).

    References
    ----------
    M. Bhandari, P. Gour, A. Ashfaq, P. Liu and G. Neubig. Re-evaluating Evaluation in Text
    Summarization. EMNLP 2020, Sec. 4 (Exp-II).
    """
    ds, metrics, human, ks, coefficient, full_test_set, n_resamples, confidence_level, corpus = _topk_iv(
        ds, metrics, human, ks, coefficient, full_test_set, n_resamples, confidence_level, corpus_statistics)
    rtol = iv.check_tie_tolerance(tie_tolerance)
    generator, seed = iv.rng_and_seed(rng)
    scores = common.system_scores(ds, metrics, human, full_test_set=full_test_set, corpus=corpus)
    xbar, zbar = scores.point()
    ks_arr = np.array(ks, dtype=np.int64)
    shape = (len(metrics), ks_arr.size)
    statistic = np.full(shape, np.nan)
    reasons = np.full(shape, "", dtype=object)
    top_systems = []
    for g, k in enumerate(ks_arr):
        idx = top_indices(zbar, int(k))
        top_systems.append(tuple(ds.systems[i] for i in idx))
        if k >= defaults.TOPK_MIN_SYSTEMS:
            statistic[:, g] = _topk_stat(xbar[:, None], zbar[None], int(k), coefficient, rtol)[:, 0]
        for a in range(len(metrics)):
            reasons[a, g] = _reason(int(k), xbar[a, idx], zbar[idx], statistic[a, g], rtol)
    ci_low = np.full(shape, np.nan)
    ci_high = np.full(shape, np.nan)
    dropped = np.zeros(shape, dtype=np.int64)
    if n_resamples:
        samples = np.full((n_resamples,) + shape, np.nan)
        draws = scores.draws(n_resamples, generator)
        for sl, xm, zm in scores.resampled(draws):
            for g, k in enumerate(ks_arr):
                if k >= defaults.TOPK_MIN_SYSTEMS:
                    samples[sl, :, g] = _topk_stat(xm, zm, int(k), coefficient, rtol).T
        ci_low, ci_high, dropped = common.percentile_bounds(samples, confidence_level)
        dropped = np.where(ks_arr[None] >= defaults.TOPK_MIN_SYSTEMS, dropped, 0)
    common.warn_reasons(f"top-k correlations of {', '.join(metrics)}", reasons)
    signature = Signature.of(
        **ds.signature_fields(), analysis="topk", metrics=list(metrics), human=human, level="system",
        coefficient=coefficient, ks=[int(k) for k in ks_arr], full_test_set=full_test_set,
        **iv.corpus_field(corpus, metrics, ("system",)), ci="boot-inputs",
        resamples=n_resamples, confidence=confidence_level, seed=seed, **iv.tie_field(rtol),
    )
    return TopKResult(
        metrics=metrics, human=human, ks=ks_arr, statistic=statistic, ci_low=ci_low, ci_high=ci_high,
        n_resamples_dropped=dropped, reasons=reasons, top_systems=tuple(top_systems), coefficient=coefficient,
        full_test_set=full_test_set, confidence_level=confidence_level, n_resamples=n_resamples,
        signature=signature,
    )


# -- the command line and the report (declarations read by metaeval.cli and metaeval.report) -------------------

def _command(call: Call) -> TopKResult:
    o = call.options
    return topk_correlations(call.ds, call.metrics, call.human, ks=o["ks"], coefficient=o["coefficient"],
                             full_test_set=o["full_test_set"], n_resamples=o["n_resamples"],
                             confidence_level=o["confidence_level"], rng=o["seed"], corpus_statistics=call.corpus,
                             tie_tolerance=o["tie_tolerance"])


CLI = CommandSpec(
    _command,
    options=(Option("ks", "integers", help="Numbers of top systems (default N down to 3)."), "coefficient",
             "full_test_set", "confidence_level"),
    inputs=("source", "corpus", "n_resamples", "seed", "tie_tolerance"),
    help="Bhandari et al. (2020), Exp-II: the correlation with the human over only the k systems the humans rank"
         " best.",
)

REPORT = SectionSpec(
    "top-k systems",
    lambda ds, human, focus, settings, corpus: topk_correlations(
        ds, list(focus), human, coefficient=settings["coefficient"], n_resamples=input_resamples(ds, settings),
        rng=settings["seed"], tie_tolerance=settings["tie_tolerance"], **focus_corpus(corpus, focus)),
)
