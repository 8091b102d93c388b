"""Summary-level correlations as a published procedure computed them: REALSumm's document filter.

REALSumm's analysis notebook (Bhandari et al. 2020, Exp-IV; ``analysis/utils.py`` ``print_ktau_matrix`` of
neulab/REALSumm) averages the per-document Kendall correlations only over the documents whose correlation is
significant: a document ``j`` enters the mean iff scipy's two-sided p-value of ``tau_b(X[:, j], Z[:, j])``
is at most 0.05 (an undefined tau counts as p = 1). The summary-level correlation is then

``r_sig = mean_{j : p_j <= alpha} tau_b(X[:, j], Z[:, j])``

instead of metaeval's ``mean_j tau_b(X[:, j], Z[:, j])`` over every defined document. The filter is
**biased upward**: with 24-25 systems a per-document tau is significant only when it is large (about 0.3 or
more) and positive, so the filter keeps the documents on which the metric happens to agree with the humans
and drops the ones where it does not (or disagrees). On REALSumm's mix, ROUGE-2 recall gives 0.4860 with
the filter (58 of 100 documents kept, BART twice as in the notebook) against 0.3502 over all documents
(24 systems). metaeval never filters by default; ``significant_documents_only=True`` exists to reproduce the
published figures and warns (:class:`~metaeval.errors.PaperProcedureWarning`). See ``docs/reproductions.md``.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import PaperProcedureWarning, ParameterError
from ..serialization import ResultMixin
from ..serialization import plain as _plain
from ..signature import Signature
from ..stats.correlations.levels import level_correlation
from ..stats.significance.pvalues import analytic_pvalue

__all__ = ["PaperSummaryLevelResult", "paper_summary_level"]

#: REALSumm's significance filter: a document is kept iff its two-sided p-value is at most this.
PAPER_DOCUMENT_ALPHA = 0.05
#: Coefficients with a scipy p-value per document.
_COEFFICIENTS = ("pearson", "spearman", "kendall-b", "kendall-c")


@dataclass(frozen=True)
class PaperSummaryLevelResult(ResultMixin):
    """Summary-level correlation of each metric, optionally over the significant documents only.

    Attributes
    ----------
    metrics : tuple of str
    human, coefficient : str
    statistic : ndarray (metrics,)
        Mean per-document correlation over the documents used.
    n_used : ndarray of int (metrics,)
        Documents averaged.
    n_undefined : ndarray of int (metrics,)
        Documents whose correlation is undefined (constant scores, fewer than 2 systems): left out.
    n_not_significant : ndarray of int (metrics,)
        Defined documents left out by the filter (p-value above ``alpha``); 0 without the filter.
    significant_documents_only : bool
    alpha : float
        The filter's level (REALSumm: 0.05).
    signature : Signature
    """

    metrics: tuple[str, ...]
    human: str
    coefficient: str
    statistic: np.ndarray
    n_used: np.ndarray
    n_undefined: np.ndarray
    n_not_significant: np.ndarray
    significant_documents_only: bool
    alpha: float
    signature: Signature

    def frame_rows(self) -> list[dict[str, Any]]:
        """One row per metric."""
        return [{"metric": metric, "statistic": _plain(self.statistic[a]), "n_used": int(self.n_used[a]),
                 "n_undefined": int(self.n_undefined[a]), "n_not_significant": int(self.n_not_significant[a])}
                for a, metric in enumerate(self.metrics)]

    def to_dict(self) -> dict[str, Any]:
        return {"human": self.human, "coefficient": self.coefficient,
                "significant_documents_only": self.significant_documents_only, "alpha": self.alpha,
                "rows": self.frame_rows(), "signature": str(self.signature)}


def _paper_summary_level_iv(ds, human, metrics, coefficient, significant_documents_only, alpha):
    ds = iv.check_scoreset(ds)
    z = iv.matrices(ds, human, param="human")
    metrics = iv.check_metrics(ds, metrics, human)
    coefficient = iv.check_coefficient(coefficient)
    if coefficient not in _COEFFICIENTS:
        raise ParameterError(f"`coefficient` must be one of {', '.join(repr(c) for c in _COEFFICIENTS)} (a "
                                f"p-value per document); got {coefficient!r}.")
    if not isinstance(significant_documents_only, (bool, np.bool_)):
        raise ParameterError(f"`significant_documents_only` must be True or False; got "
                                f"{significant_documents_only!r}.")
    alpha = iv.check_alpha(alpha)
    return ds, z, metrics, coefficient, bool(significant_documents_only), alpha


def paper_summary_level(
    ds: ScoreSet,
    human: str,
    metrics: Sequence[str] | None = None,
    *,
    coefficient: str = "kendall-b",
    significant_documents_only: bool = False,
    alpha: float = PAPER_DOCUMENT_ALPHA,
    tie_tolerance: float = defaults.TIE_TOLERANCE,
) -> PaperSummaryLevelResult:
    """Summary-level correlation, optionally averaged over the significant documents only (REALSumm).

    Parameters
    ----------
    ds : ScoreSet
    human : str
    metrics : sequence of str, optional
        Default: every scorer but ``human``.
    coefficient : {'kendall-b', 'kendall-c', 'pearson', 'spearman'}
        REALSumm's notebook: Kendall tau-b (scipy's ``kendalltau``).
    significant_documents_only : bool
        False (default): metaeval's summary level, the mean over every document with a defined correlation.
        True: REALSumm's notebook, the mean over the documents whose two-sided scipy p-value is at most
        ``alpha`` (biased upward; warns).
    alpha : float
        The filter's level (REALSumm: 0.05).
    tie_tolerance : float in [0, 0.001], optional
        Relative tolerance under which two scores tie in every rank statistic (Kendall's taus, Spearman, pairwise
        accuracy, acc-eq / tau-eq, the pair signs of the analyses): ``|a - b|`` at most ``tie_tolerance`` times
        the spread of their vector (docs/statistics.md, "The tie rule"). Default
        :data:`metaeval.defaults.TIE_TOLERANCE` (1e-9); 0 compares exactly, as scipy does. A non-default value
        is recorded in the signature.

    Returns
    -------
    PaperSummaryLevelResult

    Warns
    -----
    PaperProcedureWarning
        With ``significant_documents_only=True``.

    Notes
    -----
    ``r = mean_{j in J} CORR(X[:, j], Z[:, j])`` with ``J`` the documents with a defined correlation, or
    with the filter those among them with ``p_j <= alpha``; ``p_j`` is scipy's two-sided p-value of the
    per-document correlation (:func:`metaeval.stats.significance.pvalues.analytic_pvalue`). Without the filter this
    equals :func:`metaeval.correlate` at the summary level.

    References
    ----------
    Bhandari, M., Gour, P. N., Ashfaq, A., Liu, P. and Neubig, G. (2020). Re-evaluating Evaluation in Text
    Summarization. EMNLP 2020 (Exp-IV; the analysis notebook of neulab/REALSumm).

    Examples
    --------
    >>> import metaeval as me
    >>> ds = me.load_dataset("realsumm")
    >>> r = me.paper_summary_level(ds, "litepyramid.recall", ["rouge-2.recall"])
    >>> round(float(r.statistic[0]), 4), int(r.n_used[0])
    (0.3502, 100)
    """
    ds, z, metrics, coefficient, filtered, alpha = _paper_summary_level_iv(
        ds, human, metrics, coefficient, significant_documents_only, alpha)
    rtol = iv.check_tie_tolerance(tie_tolerance)
    if filtered:
        warnings.warn("significant_documents_only=True averages only the documents whose correlation is "
                      f"significant (p <= {alpha:g}), as the REALSumm notebook: biased upward; a reproduction "
                      "option, not a summary-level correlation.", PaperProcedureWarning, stacklevel=3)
    m = z.shape[1]
    statistic = np.full(len(metrics), np.nan)
    used = np.zeros(len(metrics), dtype=np.int64)
    undefined = np.zeros_like(used)
    dropped = np.zeros_like(used)
    for a, metric in enumerate(metrics):
        x = iv.matrices(ds, metric, param="metrics")
        values = []
        for j in range(m):
            xj, zj = x[:, j:j + 1], z[:, j:j + 1]
            tau = float(level_correlation(xj, zj, level="summary", coefficient=coefficient, rtol=rtol).statistic)
            if not np.isfinite(tau):
                undefined[a] += 1
                continue
            if filtered:
                p = analytic_pvalue(xj, zj, level="global", coefficient=coefficient, statistic=tau)
                if not (np.isfinite(p) and p <= alpha):
                    dropped[a] += 1
                    continue
            values.append(tau)
        used[a] = len(values)
        if values:
            statistic[a] = float(np.mean(values))
    fields = dict(ds.signature_fields())
    fields.update(analysis="paper-summary-level", metrics=metrics, human=human, level="summary",
                  coefficient=coefficient, document_filter=f"p<={alpha:g}" if filtered else "none",
                  **iv.tie_field(rtol))
    return PaperSummaryLevelResult(metrics=metrics, human=human, coefficient=coefficient, statistic=statistic,
                                   n_used=used, n_undefined=undefined, n_not_significant=dropped,
                                   significant_documents_only=filtered, alpha=alpha,
                                   signature=Signature.of(**fields))
