"""Agreement between annotators: Krippendorff's alpha, pairwise annotator correlations, and the
agreement of two annotator groups (SummEval's experts and crowd workers).

Krippendorff's alpha is ``1 - D_o / D_e``: observed disagreement over the pairable values (values of units
that received at least two) against the disagreement expected by chance from the same values' pooled
distribution, with a squared distance for 'interval', rank-mass distance for 'ordinal', 0/1 for
'nominal' and ``((a - b) / (a + b))^2`` for 'ratio' (Krippendorff 2011). It does not use coder
identities, so the vote slots of a summary stand in for workers when the files carry no worker ids.
The computation is metaeval's own coincidence-matrix implementation in numpy (the PyPI package
``krippendorff`` is GPL-licensed, so it is only a test oracle): the tests check it against Krippendorff's
worked example, a hand computation and, when installed, the ``krippendorff`` package. Alpha is NaN with a
:class:`~metaeval.errors.DegenerateWarning` where it is undefined (no unit with two values, or every
pairable value the same, so ``D_e = 0``).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import DegenerateWarning, ParameterError, check_choice
from ..serialization import EXCLUDED, ResultMixin
from ..serialization import plain as _plain
from ..signature import Signature
from ..stats.correlations.coefficients import canonical_coefficient, correlation
from .annotations import PyramidAnnotations, votes_reliability_data
from .pyramid import filter_workers

LEVELS = ("nominal", "ordinal", "interval", "ratio")
PYRAMID_GROUPS = ("dataset", "document", "system", "summary")
SCORE_GROUPS = ("dataset", "document", "system")


def _distances(values: np.ndarray, n_c: np.ndarray, level: str) -> np.ndarray:
    """Squared distances between the domain values (Krippendorff 2011, sec. E)."""
    a, b = values[:, None], values[None, :]
    if level == "nominal":
        return (a != b).astype(float)
    if level == "interval":
        return (a - b) ** 2
    if level == "ratio":
        total = a + b
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total == 0, 0.0, ((a - b) / np.where(total == 0, 1.0, total)) ** 2)
    cumulative = np.cumsum(n_c)  # ordinal: mass between the two ranks, halves of the ends
    lo, hi = np.minimum.outer(np.arange(len(values)), np.arange(len(values))), \
        np.maximum.outer(np.arange(len(values)), np.arange(len(values)))
    between = cumulative[hi] - np.where(lo > 0, cumulative[lo - 1], 0.0)
    return (between - (n_c[lo] + n_c[hi]) / 2) ** 2


def _alpha_or_nan(data: np.ndarray, level: str) -> tuple[float, int]:
    """Alpha of a coders x units matrix and its number of pairable values; NaN when undefined.

    Coincidence-matrix form: ``o_ck = sum_u (#c #k - [c = k] #c) / (m_u - 1)`` over units with m_u >= 2
    values, ``n_c = sum_k o_ck``, ``e_ck = (n_c n_k - [c = k] n_c) / (n - 1)``, and
    ``alpha = 1 - sum o_ck d_ck / sum e_ck d_ck``.
    """
    counts_per_unit = np.sum(~np.isnan(data), axis=0)
    pairable = data[:, counts_per_unit >= 2]
    observed = pairable[~np.isnan(pairable)]
    if observed.size < 2 or np.unique(observed).size < 2:
        return float("nan"), int(observed.size)
    if level == "ratio" and np.any(observed < 0):
        raise ParameterError("`level` 'ratio' needs values >= 0; got a negative value.")
    values = np.unique(observed)
    n_units = pairable.shape[1]
    counts = np.zeros((n_units, len(values)))
    valid = ~np.isnan(pairable)
    units = np.broadcast_to(np.arange(n_units), pairable.shape)[valid]
    np.add.at(counts, (units, np.searchsorted(values, pairable[valid])), 1.0)
    m = counts.sum(axis=1)
    weighted = counts / (m - 1)[:, None]
    o = weighted.T @ counts - np.diag(weighted.sum(axis=0))
    n_c = o.sum(axis=0)
    n = n_c.sum()
    e = (np.outer(n_c, n_c) - np.diag(n_c)) / (n - 1)
    d = _distances(values, n_c, level)
    expected = float((e * d).sum())
    if not expected > 0:
        return float("nan"), int(observed.size)
    return 1.0 - float((o * d).sum()) / expected, int(observed.size)


def krippendorff_alpha(data, *, level: str = defaults.AGREEMENT_LEVEL) -> float:
    """Krippendorff's alpha of a reliability matrix.

    Parameters
    ----------
    data : array_like, shape (coders, units)
        ``data[c, u]`` is coder c's value for unit u; NaN = not coded.
    level : {'nominal', 'ordinal', 'interval', 'ratio'}
        Level of measurement (the distance between two values).

    Returns
    -------
    float
        ``alpha = 1 - D_o / D_e``; NaN (with a warning) when undefined.

    Warns
    -----
    DegenerateWarning
        When no unit has two values or all pairable values are equal.

    References
    ----------
    Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability. Annenberg School for
    Communication, University of Pennsylvania.

    Examples
    --------
    >>> import numpy as np
    >>> from metaeval.human import krippendorff_alpha
    >>> round(krippendorff_alpha(np.array([[1, 2, 3, 3], [1, 2, 3, 4]]), level="nominal"), 3)
    0.696
    """
    level = check_choice("level", level, LEVELS)
    try:
        array = np.array(data, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"`data` must be a numeric coders x units matrix; got {type(data).__name__}.") from None
    if array.ndim != 2:
        raise ParameterError(f"`data` must be a coders x units matrix; got an array of shape {array.shape}.")
    if np.isinf(array).any():
        raise ParameterError("`data` must hold finite values or NaN; got an infinite value.")
    alpha, _ = _alpha_or_nan(array, level)
    if np.isnan(alpha):
        warnings.warn("Krippendorff's alpha is undefined: no unit has two values, or every pairable value is the same"
                      " (no expected disagreement).", DegenerateWarning, stacklevel=2)
    return alpha


@dataclass(frozen=True)
class AgreementResult(ResultMixin):
    """Krippendorff's alpha of one set of annotations, pooled and per group.

    Attributes
    ----------
    alpha : float
        Pooled over every unit (after the worker filter, for pyramid votes).
    alpha_before_filter : float or None
        Pyramid votes: pooled alpha of all votes, before the worker filter (equal to ``alpha`` when no
        worker was dropped); None for scores.
    mean_alpha : float or None
        Mean of the defined per-group alphas (None when ``by == 'dataset'``).
    by : str
        'dataset', 'document', 'system' or 'summary'.
    level : str
    groups : pandas.DataFrame
        One row per group: ``group``, ``alpha``, ``n_units``, ``n_pairable`` (values in units with >= 2).
    n_used, n_skipped : int
        Groups with a defined / undefined alpha.
    n_units, n_coders : int
        Units pooled, and the most values any unit has.
    signature : Signature
    """

    alpha: float
    alpha_before_filter: float | None
    mean_alpha: float | None
    by: str
    level: str
    groups: pd.DataFrame = field(metadata=EXCLUDED)  # the table of to_frame
    n_used: int
    n_skipped: int
    n_units: int
    n_coders: int
    signature: Signature

    @property
    def statistic(self) -> float:
        """``mean_alpha`` when grouped, else ``alpha``."""
        return self.alpha if self.mean_alpha is None else self.mean_alpha

    def to_frame(self) -> pd.DataFrame:
        return self.groups.copy()


def _agreement_iv(source, scorer, level, by, worker_filter):
    if isinstance(source, PyramidAnnotations):
        if scorer is not None:
            raise ParameterError(f"`scorer` must be None for pyramid votes; got {scorer!r}.")
        level = check_choice("level", defaults.AGREEMENT_LEVEL if level is None else level, LEVELS)
        by = check_choice("by", by, PYRAMID_GROUPS)
        worker_filter = check_choice("worker_filter", worker_filter, ("auto", "drop-noisiest", "none"))
        if worker_filter == "drop-noisiest" and not source.has_workers:
            raise ParameterError("`worker_filter` must be 'auto' or 'none' for votes without worker ids; got"
                                 " 'drop-noisiest'.")
        if worker_filter == "auto":
            worker_filter = "drop-noisiest" if source.has_workers else "none"
        return source, scorer, level, by, worker_filter
    checked = isinstance(source, iv.CheckedScores) and scorer == source.human  # the human a report checked once
    source = iv.check_scoreset(source) if isinstance(source, iv.CheckedScores) else source
    if isinstance(source, ScoreSet):
        if scorer is None:
            raise ParameterError("`scorer` must name a scorer with annotators when `source` is a ScoreSet; got None.")
        if not checked:
            source.require(scorer, param="scorer")
        if source.n_annotators(scorer) < 2 and len(rater_scorers(source, scorer)) < 2:
            raise ParameterError(f"`scorer` must have at least 2 annotators per cell (an annotator axis, or per-rater"
                                 f" human scorers {scorer}.<rater> as MQM ratings give); got {scorer!r} with 1.")
        level = check_choice("level", "interval" if level is None else level, LEVELS)
        by = check_choice("by", by, SCORE_GROUPS)
        return source, scorer, level, by, None
    raise ParameterError(f"`source` must be PyramidAnnotations or a ScoreSet; got {type(source).__name__}.")


def rater_scorers(ds: ScoreSet, scorer: str) -> tuple[str, ...]:
    """The per-rater human scorers ``<scorer>.<rater>`` of ``ds`` (MQM ratings: ``mqm.rater1``, ...): each a
    rater's own scores, NaN on the cells it did not rate; rater waves (``<scorer>.wave<k>``) are not raters."""
    import re

    wave = re.compile(re.escape(scorer) + r"\.wave\d+$")
    return tuple(s for s in ds.scorers if s.startswith(scorer + ".") and s in ds.humans and not wave.match(s))


def agreement(source: PyramidAnnotations | ScoreSet, scorer: str | None = None, *, level: str | None = None,
              by: str = defaults.AGREEMENT_BY, worker_filter: str = defaults.WORKER_FILTER) -> AgreementResult:
    """Krippendorff's alpha of pyramid votes or of several annotators' scores, pooled and per group.

    Parameters
    ----------
    source : PyramidAnnotations or ScoreSet
        Pyramid votes: a unit is (document, system, non-BLANK SCU), its values the votes (1/0). A
        ScoreSet: a unit is a (system, input) cell of ``scorer``, its values the annotators' scores.
    scorer : str, optional
        The ScoreSet's scorer with an annotator axis; or a scorer with per-rater human scorers
        ``<scorer>.<rater>`` (MQM ratings read with several raters per segment: ``mqm`` and ``mqm.rater1``,
        ...), whose raters are then the annotators (a rater who did not rate a cell: a missing value).
    level : {'nominal', 'ordinal', 'interval', 'ratio'}, optional
        Default 'nominal' for votes, 'interval' for scores.
    by : {'dataset', 'document', 'system', 'summary'}
        Besides the pooled alpha, one alpha per document, per system or (votes only) per summary, and
        their mean over the groups where alpha is defined.
    worker_filter : {'auto', 'drop-noisiest', 'none'}
        Votes only: as in :func:`~metaeval.human.pyramid.litepyramid`; ``alpha_before_filter`` keeps
        the alpha of all votes.

    Returns
    -------
    AgreementResult

    Warns
    -----
    DegenerateWarning
        When the pooled alpha is undefined, or some groups' alphas are (they are skipped and counted).

    References
    ----------
    Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability.
    Bhandari et al. (2020), Re-evaluating Evaluation in Text Summarization, EMNLP (alpha of the REALSumm
    votes after filtering: 0.66 overall, 0.57 extractive, 0.72 abstractive).
    """
    source, scorer, level, by, worker_filter = _agreement_iv(source, scorer, level, by, worker_filter)
    before, raters = None, ()
    if isinstance(source, PyramidAnnotations):
        data, keys = votes_reliability_data(source)
        if worker_filter == "drop-noisiest":
            before, _ = _alpha_or_nan(data, level)
            source, _ = filter_workers(source)
            data, keys = votes_reliability_data(source)
        if by == "summary":
            labels = keys["document"] + "\x1f" + keys["system"]
        elif by != "dataset":
            labels = keys[by]
        name = source.source or "votes"
    else:
        raters = rater_scorers(source, scorer) if source.n_annotators(scorer) < 2 else ()
        array = (np.stack([source.matrix(r) for r in raters], axis=2) if raters else source.annotations(scorer))
        n, m, a = array.shape
        data = array.reshape(n * m, a).T
        keys = pd.DataFrame({"system": np.repeat(source.systems, m), "document": np.tile(source.inputs, n)})
        labels = keys["system"] if by == "system" else keys["document"]
        name = scorer
    alpha, _ = _alpha_or_nan(data, level)
    if before is None and isinstance(source, PyramidAnnotations):
        before = alpha
    if np.isnan(alpha):
        warnings.warn(f"the pooled Krippendorff's alpha of {name} is undefined: no unit has two values, or every"
                      " pairable value is the same.", DegenerateWarning, stacklevel=2)
    rows = []
    if by != "dataset":
        codes, uniques = pd.factorize(labels)
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(len(uniques) + 1))
        for g, label in enumerate(uniques):
            cols = order[bounds[g]:bounds[g + 1]]
            value, pairable = _alpha_or_nan(data[:, cols], level)
            rows.append((str(label).replace("\x1f", ":"), value, len(cols), pairable))
    groups = pd.DataFrame(rows, columns=["group", "alpha", "n_units", "n_pairable"])
    defined = groups["alpha"].notna()
    n_skipped = int((~defined).sum())
    mean_alpha = float(groups.loc[defined, "alpha"].mean()) if by != "dataset" and defined.any() else (
        float("nan") if by != "dataset" else None)
    if n_skipped:
        warnings.warn(f"Krippendorff's alpha is undefined for {n_skipped} of {len(groups)} {by} groups (every pairable"
                      " value the same, or no unit with two values); they are left out of the mean.",
                      DegenerateWarning, stacklevel=2)
    counts = np.sum(~np.isnan(data), axis=0)
    signature = Signature.of(statistic="krippendorff-alpha", source=name,
                             **({"annotators": f"raters:{'+'.join(raters)}"} if not isinstance(
                                 source, PyramidAnnotations) and raters else {}), level=level, by=by,
                             worker_filter=worker_filter, units=int(data.shape[1]),
                             **({} if isinstance(source, PyramidAnnotations) else source.signature_fields()))
    return AgreementResult(alpha, before, mean_alpha, by, level, groups, int(defined.sum()) if by != "dataset" else 1,
                           n_skipped, int(data.shape[1]), int(counts.max()) if counts.size else 0, signature)


@dataclass(frozen=True)
class AnnotatorCorrelationResult(ResultMixin):
    """Correlations between every pair of annotator slots of one scorer, over the cells both scored.

    ``matrix[a, b]`` is the correlation of annotator a's and b's scores (1 on the diagonal, NaN when
    undefined); ``n_cells[a, b]`` the cells used; ``mean`` the mean over pairs a < b.
    """

    scorer: str
    coefficient: str
    matrix: np.ndarray
    n_cells: np.ndarray
    mean: float
    signature: Signature

    @property
    def statistic(self) -> float:
        return self.mean

    def frame_rows(self) -> list[dict[str, Any]]:
        k = self.matrix.shape[0]
        return [{"annotator_a": a + 1, "annotator_b": b + 1, "correlation": _plain(self.matrix[a, b]),
                 "n_cells": int(self.n_cells[a, b])} for a in range(k) for b in range(a + 1, k)]


def annotator_correlations(ds: ScoreSet, scorer: str, *, coefficient: str = "pearson",
                           tie_tolerance: float = defaults.TIE_TOLERANCE) -> AnnotatorCorrelationResult:
    """Pairwise correlations between the annotators of ``scorer`` over all (system, input) cells.

    Meaningful when an annotator slot is one person throughout (SummEval's three experts); with crowd
    workers a slot mixes people. Coefficients as in :func:`metaeval.correlate`.

    Parameters
    ----------
    tie_tolerance : float in [0, 0.001], optional
        Relative tolerance under which two scores tie in every rank statistic (Kendall's taus, Spearman, pairwise
        accuracy, acc-eq / tau-eq, the pair signs of the analyses): ``|a - b|`` at most ``tie_tolerance`` times
        the spread of their vector (docs/statistics.md, "The tie rule"). Default
        :data:`metaeval.defaults.TIE_TOLERANCE` (1e-9); 0 compares exactly, as scipy does. A non-default value
        is recorded in the signature.

    Warns
    -----
    DegenerateWarning
        When some pair's correlation is undefined (a constant annotator, fewer than 2 shared cells).
    """
    if not isinstance(ds, ScoreSet):
        raise ParameterError(f"`ds` must be a ScoreSet; got {type(ds).__name__}.")
    ds.require(scorer, param="scorer")
    coefficient = canonical_coefficient(coefficient)
    rtol = iv.check_tie_tolerance(tie_tolerance)
    if ds.n_annotators(scorer) < 2:
        raise ParameterError(f"`scorer` must have at least 2 annotators per cell; got {scorer!r} with 1.")
    array = ds.annotations(scorer)
    k = array.shape[2]
    flat = array.reshape(-1, k)
    matrix = np.eye(k)
    n_cells = np.zeros((k, k), dtype=np.int64)
    for a in range(k):
        n_cells[a, a] = int(np.sum(~np.isnan(flat[:, a])))
        for b in range(a + 1, k):
            both = ~np.isnan(flat[:, a]) & ~np.isnan(flat[:, b])
            value = float(correlation(flat[both, a], flat[both, b], coefficient, rtol=rtol)) if both.sum() >= 2 else np.nan
            matrix[a, b] = matrix[b, a] = value
            n_cells[a, b] = n_cells[b, a] = int(both.sum())
    upper = matrix[np.triu_indices(k, 1)]
    if np.isnan(upper).any():
        warnings.warn(f"{int(np.isnan(upper).sum())} annotator pairs of {scorer!r} have an undefined {coefficient}"
                      " correlation (a constant annotator or fewer than 2 shared cells).", DegenerateWarning,
                      stacklevel=2)
    mean = float(np.nanmean(upper)) if (~np.isnan(upper)).any() else float("nan")
    signature = Signature.of(statistic="annotator-correlation", scorer=scorer, coefficient=coefficient,
                             **ds.signature_fields(), **iv.tie_field(rtol))
    return AnnotatorCorrelationResult(scorer, coefficient, matrix, n_cells, mean, signature)


@dataclass(frozen=True)
class GroupAgreementResult(ResultMixin):
    """Agreement of two annotator groups' aggregated scores (e.g. SummEval experts vs crowd workers).

    Attributes
    ----------
    scorer_a, scorer_b : str
    coefficient : str
    correlations : tuple of CorrelationResult
        ``scorer_a`` (in the metric's place) against ``scorer_b``, one per level.
    alpha : float
        Krippendorff's interval alpha with the two aggregated scores as two coders of every cell.
    n_cells : int
        Cells where both groups have a score.
    signature : Signature
    """

    scorer_a: str
    scorer_b: str
    coefficient: str
    correlations: tuple
    alpha: float
    n_cells: int
    signature: Signature

    @property
    def statistic(self) -> float:
        return self.alpha

    def frame_rows(self) -> list[dict[str, Any]]:
        rows = [{"measure": "correlation", "level": r.level, "coefficient": r.coefficient, "statistic": r.statistic,
                 "n_used": r.n_used, "n_skipped": r.n_skipped} for r in self.correlations]
        rows.append({"measure": "krippendorff-alpha", "level": "cell", "coefficient": "interval",
                     "statistic": self.alpha, "n_used": self.n_cells, "n_skipped": 0})
        return rows


def group_agreement(ds: ScoreSet, scorer_a: str, scorer_b: str, *, coefficient: str = defaults.COEFFICIENT,
                    levels: tuple[str, ...] = ("system", "summary", "global"),
                    tie_tolerance: float = defaults.TIE_TOLERANCE) -> GroupAgreementResult:
    """How two annotator groups agree (e.g. SummEval ``turker.relevance`` vs ``expert.relevance``).

    Each group's scores are aggregated per cell (the ScoreSet's ``aggregation``), then correlated at each
    level (:func:`metaeval.correlate`, ``scorer_a`` in the metric's place), and Krippendorff's interval
    alpha is computed with the two aggregated scores as two coders of every cell.

    Parameters
    ----------
    tie_tolerance : float in [0, 0.001], optional
        Relative tolerance under which two scores tie in every rank statistic (Kendall's taus, Spearman, pairwise
        accuracy, acc-eq / tau-eq, the pair signs of the analyses): ``|a - b|`` at most ``tie_tolerance`` times
        the spread of their vector (docs/statistics.md, "The tie rule"). Default
        :data:`metaeval.defaults.TIE_TOLERANCE` (1e-9); 0 compares exactly, as scipy does. A non-default value
        is recorded in the signature.

    Returns
    -------
    GroupAgreementResult

    References
    ----------
    Fabbri et al. (2021), SummEval: Re-evaluating Summarization Evaluation, TACL (expert and crowd
    annotations of the same summaries).
    """
    from ..correlation import correlate

    if not isinstance(ds, ScoreSet):
        raise ParameterError(f"`ds` must be a ScoreSet; got {type(ds).__name__}.")
    ds.require(scorer_a, param="scorer_a")
    ds.require(scorer_b, param="scorer_b")
    if isinstance(levels, str) or not levels:
        raise ParameterError(f"`levels` must be a non-empty list of levels; got {levels!r}.")
    rtol = iv.check_tie_tolerance(tie_tolerance)
    correlations = tuple(correlate(ds, scorer_a, scorer_b, level=level, coefficient=coefficient, tie_tolerance=rtol)
                         for level in levels)
    data = np.stack([ds.matrix(scorer_a).ravel(), ds.matrix(scorer_b).ravel()])
    alpha, _ = _alpha_or_nan(data, "interval")
    if np.isnan(alpha):
        warnings.warn(f"Krippendorff's alpha between {scorer_a!r} and {scorer_b!r} is undefined (no cell scored by"
                      " both, or every score the same).", DegenerateWarning, stacklevel=2)
    signature = Signature.of(statistic="group-agreement", scorers=(scorer_a, scorer_b),
                             coefficient=correlations[0].coefficient, levels=tuple(levels), alpha_level="interval",
                             **ds.signature_fields(), **iv.tie_field(rtol))
    n_cells = int(np.sum(~np.isnan(data).any(axis=0)))
    return GroupAgreementResult(scorer_a, scorer_b, correlations[0].coefficient, correlations, alpha, n_cells,
                                signature)
