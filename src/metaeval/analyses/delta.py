"""r_SYS Delta(l, u): system-level Kendall tau-b over the system pairs whose metric gap lies in [l, u].

Deutsch, Dror & Roth (2022), Sec. 4: a system-level correlation over all pairs of systems mixes pairs that
any metric separates easily (large score gaps) with the pairs researchers actually compare (systems a
fraction of a point apart). Restricting Kendall's tau to the pairs whose metric-score difference
``|dx|`` lies in ``[l, u]`` shows how well the metric ranks systems that are close.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import ParameterError, check_choice, check_int
from ..serialization import ResultMixin
from ..signature import Signature
from ..stats.correlations.coefficients import tau_b
from . import _common as common
from .interface import Call, CommandSpec, Option, SectionSpec, focus_corpus, input_resamples

BOUNDARIES = ("both", "upper")


@dataclass(frozen=True)
class DeltaCorrelationResult(ResultMixin):
    """Kendall tau-b over the system pairs in each band ``[l, u]`` of metric-score gaps, per metric.

    Axes: ``a`` metric (``metrics``), ``i`` lower edge, ``j`` upper edge. Row ``i = 0`` has ``l = 0`` and is
    the cumulative curve r_Delta(0, u); the cells ``j < i`` (``l > u``) do not exist and hold NaN.

    Attributes
    ----------
    metrics : tuple of str
    human : str
    fractions : numpy.ndarray or None
        (K,) the fractions of pairs defining the upper edges (None for user ``edges``).
    lower, upper : numpy.ndarray
        (A, K) edges in the metric's units: ``upper[a, j] = u_j``; ``lower[a, 0] = 0`` and
        ``lower[a, i] = upper[a, i - 1]``.
    statistic : numpy.ndarray
        (A, K, K) tau-b of the pairs in cell ``(l_i, u_j)``; NaN if undefined (see ``reasons``).
    ci_low, ci_high : numpy.ndarray
        (A, K, K) percentile BOOT-INPUTS interval per cell (NaN without resamples).
    n_pairs : numpy.ndarray
        (A, K, K) number of system pairs in each cell on the original data.
    n_resamples_dropped : numpy.ndarray
        (A, K, K) resamples on which the cell's tau was undefined.
    reasons : numpy.ndarray of str
        (A, K, K) why a cell is NaN ('' when defined).
    metric_scores : numpy.ndarray
        (A, N) the system scores of each metric; ``human_scores`` (N,) those of the human.
    """

    metrics: tuple[str, ...]
    human: str
    systems: tuple[str, ...]
    fractions: np.ndarray | None
    lower: np.ndarray
    upper: np.ndarray
    statistic: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    n_pairs: np.ndarray
    n_resamples_dropped: np.ndarray
    reasons: np.ndarray
    n_total_pairs: int
    boundary: str
    min_pairs: int
    full_test_set: bool
    confidence_level: float
    n_resamples: int
    metric_scores: np.ndarray = field(repr=False)
    human_scores: np.ndarray = field(repr=False)
    signature: Signature
    coefficient: str = "kendall-b"

    @property
    def curve(self) -> np.ndarray:
        """(A, K) the cumulative curve r_Delta(0, u_j)."""
        return self.statistic[:, 0, :]

    def curve_frame(self):
        """One row per (metric, u): the cumulative curve with its interval and pair counts."""
        import pandas as pd

        rows = []
        for a, metric in enumerate(self.metrics):
            for j in range(self.upper.shape[1]):
                rows.append(self._row(a, 0, j, metric))
        return pd.DataFrame(rows)

    def frame_rows(self) -> list[dict[str, Any]]:
        """One row per (metric, l, u) cell with ``l <= u`` (the heat map in long format)."""
        k = self.upper.shape[1]
        rows = [self._row(a, i, j, metric) for a, metric in enumerate(self.metrics)
                for i in range(k) for j in range(i, k)]
        return rows

    def _row(self, a: int, i: int, j: int, metric: str) -> dict[str, Any]:
        return {
            "metric": metric,
            "lower": float(self.lower[a, i]),
            "upper": float(self.upper[a, j]),
            "fraction": None if self.fractions is None else float(self.fractions[j]),
            "n_pairs": int(self.n_pairs[a, i, j]),
            "statistic": common.plain(self.statistic[a, i, j]),
            "ci_low": common.plain(self.ci_low[a, i, j]),
            "ci_high": common.plain(self.ci_high[a, i, j]),
            "n_resamples_dropped": int(self.n_resamples_dropped[a, i, j]),
            "reason": self.reasons[a, i, j],
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "analysis": "delta",
            "metrics": list(self.metrics),
            "human": self.human,
            "coefficient": self.coefficient,
            "fractions": common.plain(self.fractions),
            "n_total_pairs": self.n_total_pairs,
            "boundary": self.boundary,
            "min_pairs": self.min_pairs,
            "full_test_set": self.full_test_set,
            "confidence_level": self.confidence_level,
            "n_resamples": self.n_resamples,
            "cells": common.records(self.to_frame()),
            "signature": str(self.signature),
        }


def _delta_iv(ds, metrics, human, fractions, edges, boundary, min_pairs, full_test_set, n_resamples,
              confidence_level, corpus_statistics):
    checked = common.check_scores(ds, human, metrics, corpus_statistics)
    ds, metrics = checked.ds, checked.metrics
    if fractions is not None and edges is not None:
        raise ParameterError("`edges` must be None when `fractions` is given; got both.")
    if edges is not None:
        edges = _increasing("edges", edges, low=0.0, high=math.inf, closed_high=False)
    else:
        fractions = _increasing("fractions", defaults.DELTA_FRACTIONS if fractions is None else fractions,
                                low=0.0, high=1.0, closed_high=True)
    boundary = check_choice("boundary", boundary, BOUNDARIES)
    min_pairs = check_int("min_pairs", min_pairs, minimum=1)
    full_test_set = common.check_full_test_set(full_test_set)
    n_resamples = check_int("n_resamples", n_resamples, minimum=0)
    confidence_level = iv.check_confidence_level(confidence_level)
    corpus = checked.corpus
    return (ds, metrics, human, fractions, edges, boundary, min_pairs, full_test_set, n_resamples, confidence_level,
            corpus)


def _increasing(name: str, values: Any, *, low: float, high: float, closed_high: bool) -> np.ndarray:
    bound = f"in ({low:g}, {high:g}]" if closed_high else "> 0"
    message = f"`{name}` must be a non-empty, strictly increasing list of numbers {bound}; got {values!r}."
    try:
        array = np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ParameterError(message) from None
    if array.size == 0 or not np.isfinite(array).all() or (array <= low).any() or np.any(np.diff(array) <= 0):
        raise ParameterError(message)
    if (array > high).any():
        raise ParameterError(message)
    return array


def quantile_edges(gaps: np.ndarray, fractions: np.ndarray) -> np.ndarray:
    """Upper edges ``u_q`` such that ``|dx| <= u_q`` holds for the ``ceil(q P)`` pairs closest in score.

    ``u_q`` is the gap of the ``ceil(q P)``-th smallest of the ``P`` finite gaps (so the pair at ``u_q``
    is included). Pairs sharing that gap are all included, so a cell may hold more than ``ceil(q P)``
    pairs; ``n_pairs`` reports the actual count.
    """
    finite = np.sort(gaps[np.isfinite(gaps)])
    if finite.size == 0:
        return np.full(fractions.shape, np.nan)
    counts = np.maximum(1, np.ceil(np.round(fractions * finite.size, 9)).astype(int))
    return finite[np.minimum(counts, finite.size) - 1]


def cell_counts(gaps, sx, sz, lower, upper, boundary):
    """Sums over the pairs of every cell ``(l_i, u_j)``: ``S``, ``n_0``, pairs untied in x, untied in z.

    ``gaps``, ``sx``, ``sz`` have shape (b, P); ``lower`` and ``upper`` (K,). Pairs are sorted by gap once;
    a cell is a contiguous range of the sorted pairs, so every sum is a difference of cumulative sums.
    ``boundary='both'``: ``l <= |dx| <= u``; ``'upper'``: ``l < |dx| <= u`` for ``l > 0``. Pairs with an
    undefined gap belong to no cell. Returns four int arrays of shape (b, K, K) (cells ``j < i`` included,
    meaningless).
    """
    order = np.argsort(gaps, axis=-1, kind="stable")
    g = np.take_along_axis(gaps, order, axis=-1)
    parts = [np.take_along_axis(sx.astype(np.int64) * sz, order, axis=-1),
             np.ones(g.shape, dtype=np.int64),
             np.take_along_axis((sx != 0).astype(np.int64), order, axis=-1),
             np.take_along_axis((sz != 0).astype(np.int64), order, axis=-1)]
    zeros = np.zeros(g.shape[:-1] + (1,), dtype=np.int64)
    cums = [np.concatenate([zeros, np.cumsum(p, axis=-1)], axis=-1) for p in parts]
    with np.errstate(invalid="ignore"):
        le_upper = (g[..., None, :] <= upper[:, None]).sum(axis=-1)  # (b, K)
        if boundary == "both":
            start = (g[..., None, :] < lower[:, None]).sum(axis=-1)
        else:
            start = np.where(lower > 0, (g[..., None, :] <= lower[:, None]).sum(axis=-1), 0)
    hi = np.broadcast_to(le_upper[..., None, :], le_upper.shape[:-1] + (lower.size, upper.size))
    lo = np.broadcast_to(start[..., :, None], hi.shape)
    flat_hi = hi.reshape(hi.shape[:-2] + (-1,))
    flat_lo = lo.reshape(flat_hi.shape)
    empty = flat_hi <= flat_lo  # no pair, or a cell with l > u
    out = []
    for c in cums:
        diff = np.take_along_axis(c, flat_hi, axis=-1) - np.take_along_axis(c, flat_lo, axis=-1)
        out.append(np.where(empty, 0, diff).reshape(hi.shape))
    return tuple(out)


def _tau(num, n0, ux, uz, min_pairs):
    return np.where(np.asarray(n0) >= min_pairs, tau_b(num, ux, uz), np.nan)


def _reason(n0: int, ux: int, uz: int, min_pairs: int) -> str:
    if n0 == 0:
        return "no system pair in the cell"
    if n0 < min_pairs:
        return f"fewer than {min_pairs} system pairs in the cell (min_pairs)"
    if ux == 0:
        return "every pair in the cell is tied in the metric"
    if uz == 0:
        return "every pair in the cell is tied in the human score"
    return ""


def delta_correlations(
    ds: ScoreSet,
    metrics: Any,
    human: str,
    *,
    fractions: Any = None,
    edges: Any = None,
    boundary: str = defaults.DELTA_BOUNDARY,
    min_pairs: int = defaults.DELTA_MIN_PAIRS,
    full_test_set: bool = False,
    n_resamples: int = defaults.N_RESAMPLES,
    confidence_level: float = defaults.CONFIDENCE_LEVEL,
    rng: Any = None,
    progress: Any = None,
    corpus_statistics: Any = None,
    tie_tolerance: float = defaults.TIE_TOLERANCE,
) -> DeltaCorrelationResult:
    """r_SYS Delta(l, u): system-level Kendall tau-b restricted to pairs with metric gap in ``[l, u]``.

    Parameters
    ----------
    ds : ScoreSet
    metrics : str or sequence of str
        The metrics (bootstrap draws are shared by all of them).
    human : str
        The human scorer.
    fractions : sequence of float in (0, 1], optional
        Upper edges as fractions of the pairs closest in metric score (default
        ``defaults.DELTA_FRACTIONS`` = 10%, 20%, ..., 100%): ``u_q`` is the gap of the ``ceil(q P)``-th
        closest pair, computed per metric.
    edges : sequence of float > 0, optional
        Instead of ``fractions``: the upper edges ``u_1 < ... < u_K`` in metric units, for every metric.
    boundary : {'both', 'upper'}
        'both' (default, as in the paper and its heat maps): the cells are closed intervals
        ``[l, u]``, so a pair whose gap equals an edge belongs to both cells that share that edge.
        'upper': cells with ``l > 0`` are ``(l, u]``, so the bands ``[0, u_1], (u_1, u_2], ...`` partition
        the pairs.
    min_pairs : int
        Cells with fewer pairs are NaN (default 5, the threshold below which the paper's heat maps
        mask a cell).
    full_test_set : bool
        Average each metric over every input it scored and the human over the judged inputs.
    n_resamples : int
        BOOT-INPUTS resamples for the intervals (0: no intervals).
    confidence_level : float
    rng : None, int or numpy.random.Generator

    progress : callable, optional
        Called with no argument once per bootstrap resample (for progress bars).
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
    DeltaCorrelationResult

    Warns
    -----
    DegenerateWarning
        When cells are undefined (no pair, fewer than ``min_pairs``, every pair tied in the metric or in
        the human score); each NaN cell states its reason in ``reasons``.

    Notes
    -----
    With system scores ``x_i`` (metric) and ``z_i`` (human) and, for a pair ``p = (i, j)``,
    ``sx_p = sgn(x_i - x_j)``, ``sz_p = sgn(z_i - z_j)`` (0 for a tie within a relative ``1e-9``), the
    statistic of the set ``Q`` of pairs with ``|x_i - x_j|`` in the cell is Kendall's tau-b restricted
    to ``Q``: ``S = sum_{p in Q} sx_p sz_p`` (concordant minus discordant pairs of ``Q``),
    ``n_0 = |Q|``, ``T_x`` / ``T_z`` the pairs of ``Q`` tied in x / z (pairs tied in both counted in
    each), and ``tau_b = S / sqrt((n_0 - T_x) (n_0 - T_z))``. For ``Q`` = all pairs this is the usual
    system-level tau-b. Undefined (NaN, never 0): ``Q`` empty or smaller than ``min_pairs``, or a factor
    of the denominator 0.

    Intervals: inputs are resampled with replacement (the metric's and the human's independently in
    full-test-set mode); on each resample the system scores, the gaps and the signs are recomputed
    and the pairs are re-selected with the edges fixed at their values on the original data, so the
    interval includes the uncertainty about which pairs are close. Percentile intervals of the
    defined resamples; undefined ones are dropped and counted.

    References
    ----------
    D. Deutsch, R. Dror and D. Roth. Re-Examining System-Level Correlations of Automatic Summarization
    Evaluation Metrics. NAACL 2022, Sec. 4.

    Examples
    --------
    >>> import metaeval as me
    >>> ds = me.load_dataset("realsumm")
    >>> r = me.delta_correlations(ds, "rouge-2.recall", "litepyramid.recall", n_resamples=0)
    >>> r.curve.shape, int(r.n_pairs[0, 0, -1])
    ((1, 10), 276)
    """
    (ds, metrics, human, fractions, edges, boundary, min_pairs, full_test_set, n_resamples,
     confidence_level, corpus) = _delta_iv(ds, metrics, human, fractions, edges, boundary, min_pairs,
                                           full_test_set, n_resamples, confidence_level, corpus_statistics)
    rtol = iv.check_tie_tolerance(tie_tolerance)
    generator, seed = iv.rng_and_seed(rng)
    scores = common.system_scores(ds, metrics, human, full_test_set=full_test_set, corpus=corpus)
    xbar, zbar = scores.point()
    i, j = common.pair_index(scores.n_systems)
    gaps = common.pair_gaps(xbar, i, j, rtol)  # (A, P)
    sx = common.pair_signs(xbar, i, j, rtol)
    sz = common.pair_signs(zbar, i, j, rtol)
    n_metrics = len(metrics)
    upper = np.stack([quantile_edges(g, fractions) for g in gaps]) if edges is None else np.tile(edges, (n_metrics, 1))
    k = upper.shape[1]
    lower = np.concatenate([np.zeros((n_metrics, 1)), upper[:, :-1]], axis=1)

    shape = (n_metrics, k, k)
    statistic = np.full(shape, np.nan)
    n_pairs = np.zeros(shape, dtype=np.int64)
    reasons = np.full(shape, "", dtype=object)
    exists = np.triu(np.ones((k, k), dtype=bool))
    for a in range(n_metrics):
        num, n0, ux, uz = (c[0] for c in cell_counts(gaps[a][None], sx[a][None], sz[None], lower[a], upper[a],
                                                       boundary))
        statistic[a] = np.where(exists, _tau(num, n0, ux, uz, min_pairs), np.nan)
        n_pairs[a] = np.where(exists, n0, 0)
        for ii, jj in zip(*np.nonzero(exists)):
            reasons[a, ii, jj] = _reason(int(n0[ii, jj]), int(ux[ii, jj]), int(uz[ii, jj]), min_pairs)

    ci_low = np.full(shape, np.nan)
    ci_high = np.full(shape, np.nan)
    dropped = np.zeros(shape, dtype=np.int64)
    if n_resamples:
        samples = np.empty((n_resamples, n_metrics, k, k))
        draws = scores.draws(n_resamples, generator)
        for sl, xm, zm in scores.resampled(draws):
            szr = common.pair_signs(zm, i, j, rtol)
            for a in range(n_metrics):
                counts = cell_counts(common.pair_gaps(xm[a], i, j, rtol), common.pair_signs(xm[a], i, j, rtol), szr,
                                     lower[a], upper[a], boundary)
                samples[sl, a] = _tau(*counts, min_pairs)
            for _ in range(sl.stop - sl.start) if progress is not None else ():
                progress()
        samples[:, :, ~exists] = np.nan
        ci_low, ci_high, dropped = common.percentile_bounds(samples, confidence_level)
        dropped = np.where(exists, dropped, 0)
    common.warn_reasons(f"r_SYS Delta(l, u) cells of {', '.join(metrics)}",
                        np.where(exists, reasons, ""))
    signature = Signature.of(
        **ds.signature_fields(), analysis="delta", metrics=list(metrics), human=human, level="system",
        coefficient="kendall-b",
        **({"fractions": [float(f) for f in fractions]} if edges is None else {"edges": [float(e) for e in edges]}),
        boundary=boundary, min_pairs=min_pairs, full_test_set=full_test_set,
        **iv.corpus_field(corpus, metrics, ("system",)), ci="boot-inputs", resamples=n_resamples,
        confidence=confidence_level, seed=seed, **iv.tie_field(rtol),
    )
    return DeltaCorrelationResult(
        metrics=metrics, human=human, systems=ds.systems, fractions=None if edges is not None else fractions,
        lower=lower, upper=upper, statistic=statistic, ci_low=ci_low, ci_high=ci_high, n_pairs=n_pairs,
        n_resamples_dropped=dropped, reasons=reasons, n_total_pairs=int(i.size), boundary=boundary,
        min_pairs=min_pairs, full_test_set=full_test_set, confidence_level=confidence_level,
        n_resamples=n_resamples, metric_scores=xbar, human_scores=zbar, signature=signature,
    )


# -- the command line and the report (declarations read by metaeval.cli and metaeval.report) -------------------

def _command(call: Call) -> DeltaCorrelationResult:
    o = call.options
    return delta_correlations(
        call.ds, call.metrics, call.human, fractions=o["fractions"], edges=o["edges"], boundary=o["boundary"],
        min_pairs=o["min_pairs"], full_test_set=o["full_test_set"], n_resamples=o["n_resamples"],
        confidence_level=o["confidence_level"], rng=o["seed"], corpus_statistics=call.corpus,
        progress=call.progress("bootstrap resamples", o["n_resamples"]) if o["n_resamples"] else None,
        tie_tolerance=o["tie_tolerance"],
    )


CLI = CommandSpec(
    _command,
    options=(
        Option("fractions", "numbers", help="Upper edges as fractions of the closest pairs, e.g. 0.1,0.2,...,1 (the"
                                            " default)."),
        Option("edges", "numbers", help="Upper edges in metric units instead of fractions, e.g. 0.005,0.01,0.02."),
        Option("boundary", BOUNDARIES, defaults.DELTA_BOUNDARY, "both: cells are [l, u]; upper: cells with l > 0 are"
                                                                " (l, u]."),
        Option("min_pairs", int, defaults.DELTA_MIN_PAIRS, "Cells with fewer pairs are n/a."),
        "full_test_set",
        Option("view", ("grid", "curve"), "grid", "grid: the (l, u) heat map per metric; curve: the cumulative"
                                                  " curve r(0, u)."),
        "confidence_level",
    ),
    inputs=("source", "corpus", "n_resamples", "seed", "tie_tolerance", "progress"),
    help="r_SYS Delta(l, u) of Deutsch, Dror & Roth (2022), Sec. 4: the system-level Kendall tau-b with the human"
         " over only the system pairs whose metric-score gap lies in [l, u].",
    frame=lambda result, options: result.to_frame() if options["view"] == "grid" else result.curve_frame(),
)

REPORT = SectionSpec(
    "Delta(l, u)",
    lambda ds, human, focus, settings, corpus: delta_correlations(
        ds, list(focus), human, n_resamples=input_resamples(ds, settings), rng=settings["seed"],
        tie_tolerance=settings["tie_tolerance"], **focus_corpus(corpus, focus)),
)
