"""The labelled correlation API: a metric against human judgments, and metric against metric.

- :mod:`.intervals`: :func:`correlate`, :func:`bootstrap_ci`, :func:`fisher_ci` (one correlation);
- :mod:`.difference`: :func:`permutation_test`, :func:`bootstrap_test`, :func:`williams_test` (is metric
  A better than metric B?);
- :mod:`.matrix`: :func:`compare_metrics` (every pair, corrected, ranked into significance clusters);
- :mod:`.table`: :func:`correlation_table` (every metric x level x coefficient);
- :mod:`.results`: the result dataclasses.

Each function validates its labelled input once (:mod:`metaeval._validation`), hands arrays to
:mod:`metaeval.stats` and wraps the numbers into a result with a signature. The WMT metrics-task wing
(:func:`metaeval.mt_evaluate`, the protocol audit) is :mod:`metaeval.mt`.
"""
from .difference import bootstrap_test, permutation_test, williams_test
from .intervals import bootstrap_ci, correlate, fisher_ci
from .matrix import compare_metrics
from .results import ComparisonResult, CorrelationResult, MetricComparisonResult
from .table import CorrelationTable, correlation_table

__all__ = [
    "ComparisonResult",
    "CorrelationResult",
    "CorrelationTable",
    "MetricComparisonResult",
    "bootstrap_ci",
    "bootstrap_test",
    "compare_metrics",
    "correlate",
    "correlation_table",
    "fisher_ci",
    "permutation_test",
    "williams_test",
]
