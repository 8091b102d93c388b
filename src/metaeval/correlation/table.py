"""The meta-evaluation table: every metric x level x coefficient against one human score."""
from __future__ import annotations

import contextlib
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import MetaevalWarning, ParameterError
from ..serialization import ResultMixin
from ..signature import Signature
from ..vocabulary import CI_METHODS, check_ci_method, check_pvalue_method
from .cell_warnings import cell_prefix, fold_cell_warnings
from .intervals import bootstrap_ci, correlate, fisher_ci
from .results import CorrelationResult

INTERVAL_METHODS = CI_METHODS


@dataclass(frozen=True)
class CorrelationTable(ResultMixin):
    """Correlations of several metrics with one human score, at several levels and coefficients."""

    human: str
    metrics: tuple[str, ...]
    levels: tuple[str, ...]
    coefficients: tuple[str, ...]
    results: tuple[CorrelationResult, ...]
    signature: Signature

    def get(self, metric: str, level: str, coefficient: str) -> CorrelationResult:
        """The result for one (metric, level, coefficient)."""
        for r in self.results:
            if (r.metric, r.level, r.coefficient) == (metric, level, coefficient):
                return r
        raise ParameterError(
            f"`(metric, level, coefficient)` must be in this table; got {(metric, level, coefficient)!r}."
        )

    def frame_rows(self) -> list[dict[str, Any]]:
        """One row per (metric, level, coefficient)."""
        return [r.to_dict() for r in self.results]


def correlation_table(
    ds: ScoreSet,
    human: str,
    metrics: Sequence[str] | None = None,
    *,
    levels: Sequence[str] | None = None,
    coefficients: Sequence[str] = defaults.REPORT_COEFFICIENTS,
    ci: str = defaults.TABLE_CI,
    n_resamples: int = defaults.N_RESAMPLES,
    confidence_level: float = defaults.CONFIDENCE_LEVEL,
    undefined: str = defaults.UNDEFINED,
    full_test_set: bool = False,
    rng: Any = defaults.SEED,
    progress: Any = None,
    pvalue_method: str = defaults.PVALUE_METHOD,
    alternative: str = defaults.CORRELATION_ALTERNATIVE,
    corpus_statistics: Any = None,
    tie_tolerance: float = defaults.TIE_TOLERANCE,
) -> CorrelationTable:
    """Correlate every metric with ``human`` at every level and coefficient, with intervals.

    Parameters
    ----------
    ds : ScoreSet
    human : str
        The human score.
    metrics : list of str, optional
        Default: every scorer of ``ds`` that is not human and is not ``human``.
    levels : list of str, optional
        Default: system and summary (:data:`~metaeval.defaults.REPORT_LEVELS`), or only system when the
        data has one input. A level the design cannot support (summary with one input, any level with
        fewer than 3 systems) is an error naming it.
    coefficients : list of str
    ci : {'boot-both', 'boot-systems', 'boot-inputs', 'fisher', 'none'}
        Interval of every cell. Bootstrap intervals of all cells use the same seed, hence the same
        resampled systems and inputs for every metric.
    rng : int or None
        Seed shared by every cell (default 0, so the table is reproducible).
    full_test_set : bool
        System level only (see :func:`metaeval.correlate`).
    progress : callable, optional
        Called with no argument after each cell (for progress bars).
    pvalue_method : {'analytic', 'permutation', 'none'}
        The p-value of every cell (see :func:`metaeval.correlate`): scipy's where the level correlates one
        vector pair (system, global, partial; NaN at summary and by-system level), a permutation p-value
        with ``n_resamples`` shuffles and the seed ``rng``, or none.
    alternative : {'two-sided', 'greater', 'less'}
        H1 of the p-values.
    corpus_statistics : mapping, optional
        ``{metric: (statistics, aggregate)}``: the system-level cells of these metrics use corpus scores
        (see :func:`metaeval.correlate`).
    tie_tolerance : float in [0, 0.001], optional
        Relative tolerance under which two scores tie in every rank statistic (Kendall's taus, Spearman, pairwise
        accuracy, acc-eq / tau-eq, the pair signs of the analyses): ``|a - b|`` at most ``tie_tolerance`` times
        the spread of their vector (docs/statistics.md, "The tie rule"). Default
        :data:`metaeval.defaults.TIE_TOLERANCE` (1e-9); 0 compares exactly, as scipy does. A non-default value
        is recorded in the signature.

    Returns
    -------
    CorrelationTable

    Warns
    -----
    MetaevalWarning
        The warnings of the cells, after the last cell, one per kind
        (:func:`~metaeval.correlation.cell_warnings.fold_cell_warnings`): a kind raised by several cells
        is one warning naming how many cells, their levels, coefficients and metrics, with the numbers
        that differ between cells as ranges; a kind raised by one cell starts with its context
        ``metric X, system level, pearson: ``.
    """
    checked = iv.check_scores(ds, human, metrics)  # checked once: every cell trusts it
    metrics = checked.metrics
    levels = tuple(iv.check_level(level) for level in (iv.default_levels(checked.ds) if levels is None else levels))
    coefficients = tuple(iv.check_coefficient(c) for c in coefficients)
    ci = check_ci_method(ci)
    pvalue_method = check_pvalue_method(pvalue_method)
    alternative = iv.check_alternative(alternative)
    rtol = iv.check_tie_tolerance(tie_tolerance)
    checked = checked.scored(corpus_statistics)
    ds, corpus = checked.ds, checked.corpus
    if isinstance(rng, np.random.Generator):
        raise ParameterError("`rng` must be an integer seed or None for a table (each cell reuses it); got a Generator.")
    results = []
    raised: list = []  # (text, category) of every cell's metaeval warnings, folded after the last cell
    for metric in metrics:
        for level in levels:
            for coefficient in coefficients:
                common = dict(level=level, coefficient=coefficient, undefined=undefined,
                              full_test_set=full_test_set, pvalue_method=pvalue_method, alternative=alternative,
                              corpus_statistics=corpus, tie_tolerance=rtol)
                with _cell_context(metric, level, coefficient, raised):
                    if ci.startswith("boot-"):
                        r = bootstrap_ci(checked, metric, human, method=ci[5:], n_resamples=n_resamples,
                                         confidence_level=confidence_level, rng=rng, **common)
                    elif ci == "fisher":
                        r = fisher_ci(checked, metric, human, confidence_level=confidence_level, n_resamples=n_resamples,
                                      rng=rng, **common)
                    else:
                        r = correlate(checked, metric, human, n_resamples=n_resamples, rng=rng, **common)
                results.append(r)
                if progress is not None:
                    progress()
    for text, category in fold_cell_warnings(raised):
        warnings.warn(text, category, stacklevel=3)
    fields = dict(ds.signature_fields())
    fields.update(human=human, full_test_set=full_test_set, ci=ci, resamples=n_resamples if ci.startswith("boot-") else None,
                  confidence=confidence_level if ci != "none" else None, undefined=undefined,
                  seed=rng if ci.startswith("boot-") or pvalue_method == "permutation" else None,
                  pvalue=pvalue_method, alternative=alternative if pvalue_method != "none" else None,
                  **iv.corpus_field(corpus, metrics, levels), **iv.tie_field(rtol))
    return CorrelationTable(human=human, metrics=metrics, levels=levels, coefficients=coefficients,
                            results=tuple(results), signature=Signature.of(**fields))


@contextlib.contextmanager
def _cell_context(metric: str, level: str, coefficient: str, raised: list):
    """Record the metaeval warnings of one cell in ``raised`` as ``(cell_prefix + text, category)``, so
    :func:`fold_cell_warnings` can say which metric, level and coefficient they concern; other warnings
    are re-raised at once."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", MetaevalWarning)
        yield
    prefix = cell_prefix(metric, level, coefficient)
    for warning in caught:
        if issubclass(warning.category, MetaevalWarning):
            raised.append((prefix + str(warning.message), warning.category))
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
