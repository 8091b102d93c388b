"""Partition-averaged correlation of a metric with human agreement or scores (Dorr et al. 2005, sec. 5).

The statistic is defined in :mod:`metaeval.stats.resampling.partition`: the data points are randomly partitioned
into cells of ``p`` points, the metric and the human score are averaged per cell, Pearson's r is taken
over the cells, and this is repeated (10,000 times in the paper); the result reports the mean and the
median of r over the partitions and their spread (quartiles, and the central ``confidence_level`` share
of the partitions' r, which is a spread of the procedure, not a confidence interval of a population r).

Three entry points share one result (:class:`PartitionCorrelationResult`, one row per label and size):

- :func:`partition_correlation`: two arrays;
- :func:`scoreset_partition_correlation`: the (system, input) cells of a ScoreSet, one row per metric;
- :func:`extrinsic_correlation`: a judgment table (:mod:`metaeval.analyses.extrinsic`): the documents of
  each surrogate condition are the points, the subjects' agreement rate (Relevance-Prediction or
  LDC-Agreement) their human score, pooled per cell over the judgments (Table 5).

Every label and size uses the same partitions (one seed drawn from ``rng``, reused), so rows differ only
by their data.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import DegenerateWarning, ParameterError, check_choice, check_int
from ..serialization import EXCLUDED, ResultMixin
from ..signature import Signature
from ..stats.resampling.partition import partition_correlations
from . import _common as common
from .extrinsic import _COLUMN, MEASURES, relevance_agreement

__all__ = ["PartitionCorrelationResult", "extrinsic_correlation", "partition_correlation",
           "scoreset_partition_correlation"]

UNITS = ("document", "judgment")
_SUMMARY = ("label", "size", "mean", "median", "std", "q1", "q3", "spread_low", "spread_high", "n_points",
            "n_cells", "n_left_out", "n_undefined")


@dataclass(frozen=True)
class PartitionCorrelationResult(ResultMixin):
    """Pearson r over cell means of random partitions, per label and cell size.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (label, size): ``mean`` and ``median`` of r over the defined partitions, ``std``,
        quartiles ``q1``/``q3``, ``spread_low``/``spread_high`` (the central ``confidence_level`` share),
        ``n_points``, ``n_cells`` (cells per partition), ``n_left_out`` (points left out of each partition
        when the size does not divide them), ``n_undefined`` (partitions with constant cell means).
    distributions : dict
        ``(label, size)`` -> the (n_partitions,) r of every partition (NaN where undefined).
    """

    table: pd.DataFrame = field(metadata=EXCLUDED)
    sizes: tuple[int, ...]
    n_partitions: int
    confidence_level: float
    signature: Signature
    distributions: dict = field(default_factory=dict, repr=False, compare=False, metadata=EXCLUDED)

    def frame_rows(self) -> list[dict[str, Any]]:
        return common.records(self.table)

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["rows"] = self.frame_rows()
        return out


def _options_iv(sizes, n_partitions, confidence_level, rng):
    sizes = common.check_positive_ints("sizes", sizes, minimum=1)
    n_partitions = check_int("n_partitions", n_partitions, minimum=1)
    confidence_level = iv.check_confidence_level(confidence_level)
    generator, seed = iv.rng_and_seed(rng)
    base = int(generator.integers(2**63 - 1))
    return sizes, n_partitions, confidence_level, base, seed


def _rows(label: str, x, y, weights, sizes, n_partitions, confidence_level, base, distributions):
    rows = []
    for size in sizes:
        r = partition_correlations(x, y, size=size, n_partitions=n_partitions, rng=np.random.default_rng(base),
                                   weights=weights)
        distributions[(label, size)] = r
        ok = r[np.isfinite(r)]
        tail = (1.0 - confidence_level) / 2
        stats = (np.mean(ok), np.median(ok), np.std(ok), *np.quantile(ok, [0.25, 0.75, tail, 1 - tail])) \
            if ok.size else (np.nan,) * 7
        if ok.size < r.size:
            _warn_undefined(label, size, r.size - ok.size, r.size)
        n = len(x)
        rows.append(dict(zip(_SUMMARY, (label, size, *map(float, stats), n, n // size, n - (n // size) * size,
                                        int(r.size - ok.size)))))
    return rows


def _warn_undefined(label: str, size: int, undefined: int, total: int) -> None:
    import warnings

    warnings.warn(f"{label}, size {size}: {undefined} of {total} partitions have constant cell means; their r is "
                  f"undefined and left out.", DegenerateWarning, stacklevel=4)


def _finish(rows, sizes, n_partitions, confidence_level, distributions, **fields) -> PartitionCorrelationResult:
    table = pd.DataFrame(rows, columns=list(_SUMMARY))
    signature = Signature.of(analysis="partition-correlation", coefficient="pearson", sizes=sizes,
                             partitions=n_partitions, confidence_level=confidence_level, **fields)
    return PartitionCorrelationResult(table=table, sizes=sizes, n_partitions=n_partitions,
                                      confidence_level=confidence_level, signature=signature,
                                      distributions=distributions)


def partition_correlation(x: Any, y: Any, *, sizes: Any = (defaults.PARTITION_SIZE,),
                          n_partitions: int = defaults.PARTITION_REPEATS, weights: Any = None,
                          confidence_level: float = defaults.CONFIDENCE_LEVEL, rng: Any = None,
                          label: str = "x") -> PartitionCorrelationResult:
    """Partition-averaged Pearson correlation of two score vectors (Dorr et al. 2005, sec. 5.1).

    Parameters
    ----------
    x, y : array of shape (n,)
        Metric and human (agreement) score of each data point.
    sizes : int or sequence of int, keyword-only
        Cell sizes ``p`` (Dorr et al.: 1, 2, 4); default 4.
    n_partitions : int, keyword-only
        Random partitions per size (default 10,000, as the paper).
    weights : array of shape (n,), optional
        Weight of each point within its cell (e.g. its number of judgments).
    confidence_level : float, keyword-only
        Share of the partitions' r inside ``spread_low``..``spread_high``.
    rng : None, int or numpy.random.Generator, keyword-only
    label : str, keyword-only
        The row label.

    Returns
    -------
    PartitionCorrelationResult

    References
    ----------
    B. Dorr, C. Monz, S. President, R. Schwartz and D. Zajic (2005). A Methodology for Extrinsic Evaluation
    of Text Summarization: Does ROUGE Correlate? ACL 2005 Workshop on Intrinsic and Extrinsic Evaluation
    Measures for MT and/or Summarization, sec. 5.1, Table 5, Figure 1.
    """
    sizes, n_partitions, confidence_level, base, seed = _options_iv(sizes, n_partitions, confidence_level, rng)
    distributions: dict = {}
    rows = _rows(str(label), x, y, weights, sizes, n_partitions, confidence_level, base, distributions)
    return _finish(rows, sizes, n_partitions, confidence_level, distributions, points=int(np.size(x)), seed=seed)


def scoreset_partition_correlation(ds: ScoreSet, metrics: Any, human: str, *,
                                   sizes: Any = (defaults.PARTITION_SIZE,),
                                   n_partitions: int = defaults.PARTITION_REPEATS,
                                   confidence_level: float = defaults.CONFIDENCE_LEVEL,
                                   rng: Any = None) -> PartitionCorrelationResult:
    """:func:`partition_correlation` over the (system, input) cells of ``ds``: one row per metric and size.

    The points are the cells where the metric and the human both have a score (summary-level data
    pooled over systems and inputs, as Dorr et al. pool surrogates of all documents).
    """
    ds = iv.check_scoreset(ds)
    human = common.check_human(ds, human)
    metrics = iv.check_metrics(ds, metrics, human)
    sizes, n_partitions, confidence_level, base, seed = _options_iv(sizes, n_partitions, confidence_level, rng)
    z = ds.matrix(human)
    distributions: dict = {}
    rows = []
    for metric in metrics:
        x = ds.matrix(metric)
        both = np.isfinite(x) & np.isfinite(z)
        rows += _rows(metric, x[both], z[both], None, sizes, n_partitions, confidence_level, base, distributions)
    return _finish(rows, sizes, n_partitions, confidence_level, distributions, human=human, metrics=tuple(metrics),
                   **ds.signature_fields(), seed=seed)


def extrinsic_correlation(judgments: Any, *, metric: str, measures: Any = MEASURES,
                          unit: str = defaults.EXTRINSIC_UNIT,
                          full_text: str = defaults.FULL_TEXT_CONDITION, sizes: Any = (1, 2, 4),
                          n_partitions: int = defaults.PARTITION_REPEATS,
                          confidence_level: float = defaults.CONFIDENCE_LEVEL,
                          rng: Any = None) -> PartitionCorrelationResult:
    """Dorr et al.'s Table 5: partition-averaged r between a metric and each agreement measure, per condition.

    With ``unit='document'`` (default), for each surrogate condition the documents are the data points:
    the metric is the mean of the ``metric`` column over the condition's rows of the document, the
    agreement the rate over the subjects' judgments; within a cell the agreement is pooled over the
    judgments (points weighted by their number of judgments), as the 40-judgment cells of the paper's
    Table 2. With ``unit='judgment'`` every (subject, document) judgment is a point with a 0/1 agreement
    (the paper's "600 data points" at p = 1). Rows are labelled ``<condition> (RP)`` / ``<condition> (LDC)``.

    Parameters
    ----------
    judgments : path or pandas.DataFrame
        The judgment table of :func:`metaeval.relevance_agreement`, with a ``metric`` column.
    metric : str, keyword-only
        The metric column.
    measures : sequence of {'relevance-prediction', 'ldc-agreement'}, keyword-only
    unit : {'document', 'judgment'}, keyword-only
        The data point: a document (agreement pooled over subjects) or one judgment.
    full_text, sizes, n_partitions, confidence_level, rng
        As :func:`relevance_agreement` and :func:`partition_correlation` (sizes default 1, 2, 4).
    """
    measures = (measures,) if isinstance(measures, str) else tuple(measures)
    if not measures:
        raise ParameterError(f"`measures` must name at least one of {', '.join(map(repr, MEASURES))}; got none.")
    for measure in measures:
        check_choice("measures", measure, MEASURES)
    unit = check_choice("unit", unit, UNITS)
    sizes, n_partitions, confidence_level, base, seed = _options_iv(sizes, n_partitions, confidence_level, rng)
    agreement = relevance_agreement(judgments, full_text=full_text, metrics=(metric,))
    points = agreement.points if unit == "document" else agreement.judgments.assign(
        relevance_prediction=agreement.judgments["agree"], ldc_agreement=agreement.judgments["correct"],
        n_paired=agreement.judgments["agree"].notna().astype(float),
        n_gold=agreement.judgments["correct"].notna().astype(float))
    distributions: dict = {}
    rows = []
    for condition, part in points.groupby("condition", sort=True):
        for measure in measures:
            column = _COLUMN[measure]
            counts = part["n_paired" if measure == "relevance-prediction" else "n_gold"].to_numpy(float)
            keep = counts > 0
            if not keep.any():
                raise ParameterError(f"`measures` must be computable: condition {condition!r} has no judgment "
                                     f"for {measure!r}; got {measure!r}.")
            tag = "RP" if measure == "relevance-prediction" else "LDC"
            rows += _rows(f"{condition} ({tag})", part[metric].to_numpy(float)[keep], part[column].to_numpy(float)[keep],
                          counts[keep], sizes, n_partitions, confidence_level, base, distributions)
    from .extrinsic import source_field

    return _finish(rows, sizes, n_partitions, confidence_level, distributions, **source_field(judgments),
                   metric=metric, measures=measures, unit=unit, full_text=full_text, seed=seed)
