"""Is metric A really better than metric B? Tests of the difference of two dependent correlations.

All three tests compare ``r(A, human)`` with ``r(B, human)`` on the same systems and inputs:

- :func:`permutation_test` (Deutsch, Dror & Roth 2021): under H0 the two metrics are exchangeable, so
  their (standardized) scores are swapped at random: whole rows (PERM-SYSTEMS), whole columns
  (PERM-INPUTS) or each cell independently with probability 1/2 (PERM-BOTH, the paper's Algorithm 2).
- :func:`bootstrap_test`: paired bootstrap of the difference (BOOT-SYSTEMS / INPUTS / BOTH).
- :func:`williams_test`: Williams' (1959) t-test for dependent Pearson correlations, on signed r.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import DegenerateWarning, ParameterError
from ..signature import Signature
from ..stats.significance import paired_bootstrap as _paired_bootstrap
from ..stats.significance import permutation as _permutation
from ..stats.significance.common import common_cells, identical_metrics_message
from ..stats.corpus import common_corpus_columns
from ..stats.kernels import point_correlations
from ..stats.correlations.levels import level_correlation, system_means
from ..stats.significance.williams import williams_test as _williams
from .results import ComparisonResult


def _compare_iv(ds, metric_a, metric_b, human, level, coefficient, undefined, alternative, corpus_statistics=None):
    ds = iv.check_scoreset(ds)
    level = iv.check_level(level)
    coefficient = iv.check_coefficient(coefficient)
    undefined = iv.check_undefined(undefined)
    alternative = iv.check_alternative(alternative)
    corpus = iv.check_corpus_statistics(ds, corpus_statistics)
    if not corpus:  # corpus statistics are aligned with every system of ds
        ds = iv.scored_systems(ds, human, (metric_a, metric_b))
    x = iv.metric_scores(ds, metric_a, corpus, level, param="metric_a")
    y = iv.metric_scores(ds, metric_b, corpus, level, param="metric_b")
    z = iv.human_scores(ds, human)
    iv.check_gold_aggregation(ds, human)
    iv.check_level_design(ds, level)
    return ds, x, y, z, level, coefficient, undefined, alternative


def _system_score_matrices(x, y, z):
    """``(N, 1)`` system scores of two metrics (either may be a corpus metric) and the human, on the inputs
    every system has for all three: what a test that sees only system scores (Williams, PERM-SYSTEMS,
    BOOT-SYSTEMS) tests."""
    (x, y), z = common_corpus_columns([x, y], z)
    xbar, zbar, _ = system_means(x, z)
    ybar = system_means(y, z)[0]
    return xbar[:, None], ybar[:, None], zbar[:, None]


_CORPUS_DOC = """    corpus_statistics : mapping, optional
        ``{metric: (statistics, aggregate)}`` or ``{metric: CorpusScores}``: at the system level these
        metrics' system scores are corpus scores (see :func:`metaeval.correlate`); the test then runs on the
        inputs where every system has both metrics and the human score.
"""


def _common(x, y, z):
    """The common cells of the two metrics and the human; warns when the metrics are identical there."""
    cells = common_cells(x, y, z)
    if cells.identical:
        warnings.warn(identical_metrics_message(cells.n_cells), DegenerateWarning, stacklevel=3)
    return cells


def _signature(ds, metric_a, metric_b, human, level, coefficient, undefined, test, alternative, **more):
    fields = dict(ds.signature_fields())
    fields.update(metric_a=metric_a, metric_b=metric_b, human=human, level=level,
                  coefficient=coefficient, undefined=undefined, test=test, alternative=alternative)
    fields.update(more)
    return Signature.of(**fields)


def _pair_statistics(cells, level, coefficient, undefined, rtol):
    # level_correlation of x and of y on the common cells (bitwise), computed together with fast exact kernels
    return tuple(point_correlations([cells.x, cells.y], cells.z, level=level, coefficient=coefficient,
                                    undefined=undefined, rtol=rtol))


def _resampled_result(ds, metric_a, metric_b, human, level, coefficient, undefined, alternative, test, method,
                      cells, pvalue, ci, n_resamples, n_dropped, distribution, rtol, **signature_fields):
    """The ComparisonResult of a permutation or paired bootstrap test on the common ``cells``."""
    a, b = _pair_statistics(cells, level, coefficient, undefined, rtol)
    return ComparisonResult(
        metric_a=metric_a, metric_b=metric_b, human=human, level=level, coefficient=coefficient,
        test=test, method=method, alternative=alternative,
        statistic=float(a.statistic) - float(b.statistic), statistic_a=float(a.statistic),
        statistic_b=float(b.statistic), pvalue=float(pvalue),
        ci=None if ci is None else (float(ci[0]), float(ci[1])),
        n_used=int(min(a.n_used, b.n_used)), n_skipped=int(max(a.n_skipped, b.n_skipped)),
        n_dropped_a=cells.n_dropped_x, n_dropped_b=cells.n_dropped_y, n_resamples=n_resamples, n_resamples_dropped=int(n_dropped),
        signature=_signature(ds, metric_a, metric_b, human, level, coefficient, undefined,
                             f"{test[:4]}-{method}", alternative, resamples=n_resamples, **signature_fields,
                             **iv.tie_field(rtol)),
        null_distribution=np.asarray(distribution),
    )


def permutation_test(
    ds: ScoreSet,
    metric_a: str,
    metric_b: str,
    human: str,
    *,
    level: str = defaults.LEVEL,
    coefficient: str = defaults.COEFFICIENT,
    method: str = defaults.RESAMPLING_METHOD,
    alternative: str = defaults.ALTERNATIVE,
    n_resamples: int = defaults.N_RESAMPLES,
    undefined: str = defaults.UNDEFINED,
    rng: Any = None,
    batch: int | None = None,
    corpus_statistics: Any = None,
    tie_tolerance: float = defaults.TIE_TOLERANCE,
) -> ComparisonResult:
    """Permutation test of H1: rho(A, human) > rho(B, human) (or '<', or '!=').

    Both metrics are standardized (z-scores over their valid cells), then for each of
    ``n_resamples`` resamples cells of A and B are swapped: whole systems (``method='systems'``),
    whole inputs (``'inputs'``) or each cell independently with probability 1/2 (``'both'``). The
    p-value is ``(1 + #{delta_s >= delta}) / (1 + k)`` with ``delta = r(A) - r(B)``, comparing with a
    relative tolerance of ``100 * eps * |delta|`` so that resamples equal to the observed delta in exact
    arithmetic count as '>='; identical metrics give p = 1.

    Parameters
    ----------
    ds : ScoreSet
    metric_a, metric_b, human : str
        Scorer names.
    level, coefficient, undefined
        As in :func:`metaeval.correlate`.
    method : {'systems', 'inputs', 'both'}
        Which cells are swapped together (PERM-SYSTEMS / PERM-INPUTS / PERM-BOTH).
    alternative : {'greater', 'less', 'two-sided'}
        'greater' (default, as in Deutsch et al. 2021): A correlates more strongly than B.
    n_resamples : int
    rng : None, int or numpy.random.Generator
    batch : int, optional
        Resamples computed at once (memory bound only; the result does not depend on it).
{corpus_doc}        With a corpus metric only PERM-SYSTEMS applies (it swaps whole system scores, standardized
        over the systems); PERM-INPUTS and PERM-BOTH swap cells, which a corpus score has none of.
    tie_tolerance : float in [0, 0.001], optional
        Relative tolerance under which two scores tie in every rank statistic (Kendall's taus, Spearman, pairwise
        accuracy, acc-eq / tau-eq, the pair signs of the analyses): ``|a - b|`` at most ``tie_tolerance`` times
        the spread of their vector (docs/statistics.md, "The tie rule"). Default
        :data:`metaeval.defaults.TIE_TOLERANCE` (1e-9); 0 compares exactly, as scipy does. A non-default value
        is recorded in the signature.

    Returns
    -------
    ComparisonResult
        ``statistic`` = delta, ``statistic_a``/``statistic_b`` the two correlations, ``pvalue``,
        ``null_distribution`` the permuted deltas.

    Notes
    -----
    nlpstats 0.0.1 implements 'both' by swapping whole rows then whole columns (a cell is swapped iff
    its row bit XOR its column bit is set); ours swaps each cell independently, as in the paper's
    Algorithm 2 and SacreROUGE. The two are different tests.

    References
    ----------
    D. Deutsch, R. Dror and D. Roth. A Statistical Analysis of Summarization Evaluation Metrics using
    Resampling Methods. TACL 9, 2021.
    """
    ds, x, y, z, level, coefficient, undefined, alternative = _compare_iv(
        ds, metric_a, metric_b, human, level, coefficient, undefined, alternative, corpus_statistics
    )
    method = iv.check_method(method)
    n_resamples = iv.check_n_resamples(n_resamples)
    rtol = iv.check_tie_tolerance(tie_tolerance)
    generator, seed = iv.rng_and_seed(rng)
    flag = iv.corpus_flag(x, y)
    if flag:
        if method != "systems":
            raise ParameterError(f"`method` must be 'systems' for a permutation test with a corpus metric (PERM-INPUTS"
                                 f" and PERM-BOTH swap cells, and a corpus score has none); got {method!r}.")
        x, y, z = _system_score_matrices(x, y, z)
    cells = _common(x, y, z)
    iv.check_permutable({metric_a: cells.x, metric_b: cells.y})
    out = _permutation.permutation_test(
        cells.x, cells.y, cells.z, level=level, coefficient=coefficient, method=method, alternative=alternative,
        n_resamples=n_resamples, undefined=undefined, rng=generator, batch=batch, rtol=rtol,
    )
    return _resampled_result(
        ds, metric_a, metric_b, human, level, coefficient, undefined, alternative, "permutation", method,
        cells, out.pvalue, None, n_resamples, out.n_resamples_dropped, out.null_distribution, rtol,
        seed=seed, **flag,
    )


def bootstrap_test(
    ds: ScoreSet,
    metric_a: str,
    metric_b: str,
    human: str,
    *,
    level: str = defaults.LEVEL,
    coefficient: str = defaults.COEFFICIENT,
    method: str = defaults.RESAMPLING_METHOD,
    alternative: str = defaults.ALTERNATIVE,
    n_resamples: int = defaults.N_RESAMPLES,
    confidence_level: float = defaults.CONFIDENCE_LEVEL,
    undefined: str = defaults.UNDEFINED,
    rng: Any = None,
    batch: int | None = None,
    corpus_statistics: Any = None,
    tie_tolerance: float = defaults.TIE_TOLERANCE,
) -> ComparisonResult:
    """Paired bootstrap test of H1: rho(A, human) > rho(B, human) (or '<', or '!=').

    A, B and the human scores are resampled together (systems, inputs or both, with replacement);
    each resample gives ``delta_s = r_s(A) - r_s(B)``. ``ci`` is the percentile interval of delta at
    ``confidence_level``; the p-value is the one defined in :mod:`metaeval.stats.significance.paired_bootstrap`.

    Other parameters are those of :func:`permutation_test` (a corpus metric's resampled system scores
    re-sum its statistics over the drawn inputs).

    Parameters
    ----------
    tie_tolerance : float in [0, 0.001], optional
        Relative tolerance under which two scores tie in every rank statistic (Kendall's taus, Spearman, pairwise
        accuracy, acc-eq / tau-eq, the pair signs of the analyses): ``|a - b|`` at most ``tie_tolerance`` times
        the spread of their vector (docs/statistics.md, "The tie rule"). Default
        :data:`metaeval.defaults.TIE_TOLERANCE` (1e-9); 0 compares exactly, as scipy does. A non-default value
        is recorded in the signature.
    """
    ds, x, y, z, level, coefficient, undefined, alternative = _compare_iv(
        ds, metric_a, metric_b, human, level, coefficient, undefined, alternative, corpus_statistics
    )
    method = iv.check_method(method)
    n_resamples = iv.check_n_resamples(n_resamples)
    confidence_level = iv.check_confidence_level(confidence_level)
    rtol = iv.check_tie_tolerance(tie_tolerance)
    generator, seed = iv.rng_and_seed(rng)
    flag = iv.corpus_flag(x, y)
    cells = _common(*(_system_score_matrices(x, y, z) if flag else (x, y, z)))
    out = _paired_bootstrap.bootstrap_test(
        x, y, z, level=level, coefficient=coefficient, method=method, alternative=alternative,  # its own common cells
        n_resamples=n_resamples, confidence_level=confidence_level, undefined=undefined,
        rng=generator, batch=batch, rtol=rtol,
    )
    return _resampled_result(
        ds, metric_a, metric_b, human, level, coefficient, undefined, alternative, "bootstrap", method,
        cells, out.pvalue, (out.low, out.high), n_resamples, out.n_resamples_dropped, out.samples, rtol,
        confidence=confidence_level, seed=seed, **flag,
    )


def williams_test(
    ds: ScoreSet,
    metric_a: str,
    metric_b: str,
    human: str,
    *,
    level: str = defaults.LEVEL,
    alternative: str = defaults.ALTERNATIVE,
    corpus_statistics: Any = None,
) -> ComparisonResult:
    """Williams' test of H1: rho(A, human) > rho(B, human) for dependent Pearson correlations.

    Uses the signed correlations r(A, human), r(B, human), r(A, B) on the system scores (system level)
    or on the cells (global level; partial level: on the cells' residuals after removing each system's mean,
    as FRANK's evaluation script does), all three on the cells where A, B and the human are all present;
    ``n`` (``n_used``) is the number of systems or cells there. Swapping A and B negates t and mirrors the
    one-sided p-value; identical metrics give p = 1 with a ``DegenerateWarning``. It assumes bivariate normality and is
    defined for Pearson only (the WMT scripts and nlpstats apply it to absolute correlations, which lets
    a strongly negative metric 'beat' a positive one; we do not). ``corpus_statistics`` as in
    :func:`permutation_test`: a corpus metric enters with its corpus system scores.

    References
    ----------
    E. J. Williams. Regression Analysis. Wiley, 1959. Y. Graham and T. Baldwin. Testing for
    Significance of Increased Correlation with Human Judgment. EMNLP 2014.
    """
    ds, x, y, z, level, coefficient, undefined, alternative = _compare_iv(
        ds, metric_a, metric_b, human, level, "pearson", "skip", alternative, corpus_statistics
    )
    if level not in ("system", "global", "partial"):
        raise ParameterError(f"`level` must be one of 'system', 'global', 'partial' for Williams' test; got {level!r}.")
    flag = iv.corpus_flag(x, y)
    cells = _common(*(_system_score_matrices(x, y, z) if flag else (x, y, z)))
    r_az = level_correlation(cells.x, cells.z, level=level, coefficient="pearson")
    r_bz = level_correlation(cells.y, cells.z, level=level, coefficient="pearson")
    r_ab = level_correlation(cells.x, cells.y, level=level, coefficient="pearson")
    n = int(r_az.n_used)  # systems (system level) or cells (global level), the same for the three correlations
    if n < 4:
        raise ParameterError(f"`n` must be at least 4 {'systems' if level == 'system' else 'cells'} where"
                             f" {metric_a!r}, {metric_b!r} and {human!r} are all present for Williams' test;"
                             f" got {n}.")
    out = _williams(float(r_az.statistic), float(r_bz.statistic), float(r_ab.statistic), n, alternative=alternative)
    return ComparisonResult(
        metric_a=metric_a, metric_b=metric_b, human=human, level=level, coefficient="pearson",
        test="williams", method=None, alternative=alternative,
        statistic=float(r_az.statistic) - float(r_bz.statistic), statistic_a=float(r_az.statistic),
        statistic_b=float(r_bz.statistic), pvalue=float(out.pvalue), ci=None,
        n_used=n, n_skipped=0, n_dropped_a=cells.n_dropped_x, n_dropped_b=cells.n_dropped_y,
        n_resamples=None, n_resamples_dropped=None,
        signature=_signature(ds, metric_a, metric_b, human, level, "pearson", "skip", "williams",
                             alternative, n=n, **flag),
    )


permutation_test.__doc__ = permutation_test.__doc__.replace("{corpus_doc}", _CORPUS_DOC)
