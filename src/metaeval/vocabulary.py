"""The one vocabulary of metaeval: every named choice, and one validator per concept.

The API, the CLI (``click.Choice`` lists), the report and :mod:`metaeval.stats` all take their choices
from here, so a level, a coefficient or an alternative is spelled one way everywhere and rejected with
one message. Each validator returns the canonical value or raises :class:`~metaeval.errors.ParameterError`
with the template "`param` must be one of ...; got <value!r>.". ``param`` names the argument being
checked (the CLI passes its own names). This module imports nothing heavier than :mod:`metaeval.errors`,
so the CLI can build its options without numpy.
"""
from __future__ import annotations

import math
from typing import Any

from .errors import ParameterError, check_choice

__all__ = [
    "ALTERNATIVES",
    "EVEN_SPLITS",
    "CI_METHODS",
    "COEFFICIENTS",
    "COEFFICIENT_ALIASES",
    "COEFFICIENT_CHOICES",
    "CORPUS_METRICS",
    "CORRECTIONS",
    "FAMILIES",
    "FAMILYWISE_CORRECTIONS",
    "INTERVALS",
    "JUDGE_RESAMPLING",
    "LEVELS",
    "LEVEL_ALIASES",
    "LEVEL_CHOICES",
    "METRIC_TESTS",
    "MT_HUMAN_TIES",
    "MT_PROTOCOLS",
    "MT_SEGMENTS",
    "MT_SIGNIFICANCE",
    "MT_SENTINELS",
    "MT_STATISTICS",
    "OUTPUT_FORMATS",
    "PAIRWISE_COEFFICIENTS",
    "PVALUE_METHODS",
    "RESAMPLING_METHODS",
    "SPAN_AVERAGINGS",
    "SPAN_CRITICAL_RULES",
    "SPAN_ERROR_RULES",
    "SPAN_FOLDS_BY",
    "SPAN_GOLD_RULES",
    "SPAN_MACRO_RULES",
    "SPAN_MATCHINGS",
    "SPAN_MEASURES",
    "SPAN_SEVERITY_MODES",
    "SPAN_SIDES",
    "SPAN_TASKS",
    "SYSTEM_TESTS",
    "TIE_MODELS",
    "UNDEFINED_POLICIES",
    "VERDICTS",
    "VERDICT_ALIASES",
    "canonical_coefficient",
    "canonical_level",
    "check_alternative",
    "check_ci_method",
    "check_correction",
    "check_family",
    "check_format",
    "check_interval",
    "check_method",
    "check_pvalue_method",
    "check_metric_test",
    "check_mt_task",
    "check_system_test",
    "check_tie_threshold",
    "check_undefined",
]

LEVELS = ("system", "summary", "global", "by-system", "partial")
"""Correlation levels: system means, per input ("grouped by item"), all cells, per system, and all cells
after removing each system's mean (the partial correlation controlling for the system, FRANK)."""

LEVEL_ALIASES = {"input": "summary", "segment": "summary"}
"""Accepted spellings of a level and the canonical level they stand for (MT says 'segment')."""

LEVEL_CHOICES = LEVELS + tuple(LEVEL_ALIASES)
"""Every spelling a user may type for a level."""

COEFFICIENTS = ("pearson", "spearman", "kendall-a", "kendall-b", "kendall-c", "accuracy", "tau-eq", "acc-eq", "pdp")
"""Correlation coefficients, in the order of the CLI and the docs. ``pdp``: Pairwise Difference Pearson (DiIanni
& Deutsch 2025), Pearson over the differences of every pair within a group, pooled over the groups."""

COEFFICIENT_ALIASES = {"kendall": "kendall-b"}
"""Accepted spellings of a coefficient and the canonical name they stand for."""

COEFFICIENT_CHOICES = COEFFICIENTS + tuple(COEFFICIENT_ALIASES)
"""Every spelling a user may type for a coefficient."""

PAIRWISE_COEFFICIENTS = ("accuracy", "tau-eq", "acc-eq")
"""Coefficients of pairwise agreement; only these accept a non-zero ``tie_threshold``."""

RESAMPLING_METHODS = ("systems", "inputs", "both")
"""What is resampled or permuted together (BOOT-* and PERM-* of Deutsch, Dror & Roth 2021)."""

ALTERNATIVES = ("two-sided", "greater", "less")
"""Alternative hypotheses, as in scipy.stats."""

CORRECTIONS = ("none", "bonferroni", "sidak", "holm", "holm-sidak", "benjamini-hochberg")
"""Multiple-comparison corrections of p-values (formulas: :func:`metaeval.adjust_pvalues`)."""

FAMILYWISE_CORRECTIONS = ("bonferroni", "sidak", "holm", "holm-sidak")
"""The corrections of :data:`CORRECTIONS` that control the family-wise error rate."""

FAMILIES = ("matrix", "row")
"""Families a significance matrix is corrected over: the whole matrix, or each row metric."""

METRIC_TESTS = ("permutation", "bootstrap", "williams")
"""Tests of the difference of two dependent correlations (metric A vs metric B)."""

SYSTEM_TESTS = ("bootstrap", "randomization")
"""Tests of the difference of two systems under one scorer (Koehn 2004; Riezler & Maxwell 2005)."""

INTERVALS = ("percentile", "bca")
"""Bootstrap interval constructions."""

VERDICTS = ("first", "second", "tie")
"""A pairwise verdict (judges and preferences): the system shown first wins, the second wins, or a tie."""

VERDICT_ALIASES = {"a": "first", "model_a": "first", "b": "second", "model_b": "second", "draw": "tie",
                   "tie (bothbad)": "tie"}
"""Other spellings of :data:`VERDICTS` accepted in comparison files (Chatbot Arena writes model_a / model_b)."""

EVEN_SPLITS = ("half", "tie")
"""How a judge is scored against the humans' majority verdict of a key whose human votes split evenly (no single
most frequent outcome): ``half`` counts the key once per outcome at the top, each with weight 1/k (MT-Bench's
Human-M: agreeing with one side of a 1-1 split counts as half an agreement), ``tie`` makes the majority a tie."""

TIE_MODELS = ("half", "davidson", "drop")
"""How a Bradley-Terry ranking treats ties: half a win each, Davidson's (1970) tie parameter, or left out."""

JUDGE_RESAMPLING = ("comparisons", "inputs", "judges")
"""What the bootstrap of a ranking from comparisons resamples: comparisons, inputs (the comparisons of an
input move together) or judges / annotators (each one's comparisons move together)."""

CI_METHODS = ("boot-both", "boot-systems", "boot-inputs", "fisher", "none")
"""Interval of each cell of a correlation table."""

PVALUE_METHODS = ("analytic", "permutation", "none")
"""P-value of a single correlation: scipy's analytic one, a permutation test, or none."""

UNDEFINED_POLICIES = ("skip", "zero")
"""What a grouped level does with a group whose correlation is undefined: skip it, or count it as 0."""

MT_STATISTICS = ("pearson", "spearman", "kendall-a", "kendall-b", "kendall-c", "accuracy", "acc-eq", "tau-eq",
                 "acc23", "tau23", "soft-accuracy", "darr", "pdp")
"""Statistics of an MT meta-evaluation task: the coefficients, acc23 / tau23 (acc-eq / tau-eq with a calibrated
tie threshold, Deutsch, Foster & Freitag 2023), soft pairwise accuracy (Thompson et al. 2024, system level)
and the WMT DARR Kendall-like tau (Ma et al. 2018, item-grouped)."""

MT_PROTOCOLS = ("wmt23", "wmt24", "wmt25", "mean")
"""Evaluation protocols of ``metaeval mt`` (``metaeval.stats.mt.protocol.PROTOCOLS``): WMT23, WMT24, WMT25 as
mt-metrics-eval computes them, or metaeval's plain mean of the task statistics."""

MT_SEGMENTS = ("common", "per-metric")

MT_SENTINELS = ("sentinel-random", "sentinel-system-mean", "sentinel-rounded", "sentinel-length")
"""The sentinel metrics of the protocol audit (Perrella et al. 2024), built from the metrics, never the gold."""
"""Segments of ``metaeval mt``: the segments every metric and the human scored, or each metric's own."""

MT_SIGNIFICANCE = ("permutation", "bootstrap")
"""Significance test of ``metaeval mt`` between metrics: mt-metrics-eval's permutation tests (per task, and
for an average from the tasks' permutation draws) or a paired bootstrap over segments."""

MT_HUMAN_TIES = ("count", "skip")
"""System-level pairwise accuracy and system pairs the human ties: count them (a metric that separates
them is wrong, mt-metrics-eval) or leave them out (Kocmi et al. 2021's 'pairs the human orders')."""

CORPUS_METRICS = ("bleu", "chrf", "ter", "nist", "stm", "hwcm", "dstm")
"""Metrics with corpus scores from summed sufficient statistics (``metaeval.scoring.corpus``; ``--corpus-metric``)."""
# Error spans (metaeval.spans, `metaeval spans`; docs/spans.md defines each).
#: Matching rules of a span measure.
SPAN_MEASURES = ("char", "exact", "overlap", "partial", "wmt25")
#: Micro (sum the counts over segments) or macro (average per-segment values).
SPAN_AVERAGINGS = ("micro", "macro")
#: Macro F1: the mean of the per-segment F1 (the reference's) or the F1 of the macro P and R.
SPAN_MACRO_RULES = ("mean-f1", "f1-of-means")
#: One-to-one matching of predicted and gold spans: an optimal assignment (the reference's default since
#: 2026-02-26) or greedy by decreasing Dice overlap.
SPAN_MATCHINGS = ("optimal", "greedy")
#: Whether a pair (or a character) must agree on severity.
SPAN_SEVERITY_MODES = ("ignore", "match")
#: How a critical severity compares under severity matching: as major (the reference, WMT25) or as its own.
SPAN_CRITICAL_RULES = ("major", "own")
#: Which human errors count: the reference's standardization, or every located minor/major/critical error.
SPAN_ERROR_RULES = ("reference", "all")
#: The text a span marks: the translation, or the source (omissions, source issues).
SPAN_SIDES = ("target", "source")
#: Binary decisions per segment (`spans binary`).
SPAN_TASKS = ("error-free", "critical")
SPAN_GOLD_RULES = ("both", "no-span", "score")
SPAN_FOLDS_BY = ("segment", "document")

OUTPUT_FORMATS = ("table", "json", "csv", "latex", "markdown")
"""Every command that prints a result accepts every one of these ``--format`` values."""

METRIC_SCALES = ("0-1", "0-100", "0-inf")
"""The ``scale`` field of every metric signature (docs/metrics.md, "Names and scales")."""

SCORE_VARIANTS = ("recall", "precision", "f1")
"""The variants of a scorer name ``<metric>.<variant>`` with recall / precision / F (never ``f``)."""


def canonical_level(value: Any, *, param: str = "level") -> str:
    """The canonical level for ``value`` (``'input'`` and ``'segment'`` mean ``'summary'``)."""
    if isinstance(value, str):
        value = LEVEL_ALIASES.get(value, value)
    return check_choice(param, value, LEVELS)


def canonical_coefficient(value: Any, *, param: str = "coefficient") -> str:
    """The canonical coefficient for ``value`` (``'kendall'`` means ``'kendall-b'``)."""
    if isinstance(value, str):
        value = COEFFICIENT_ALIASES.get(value, value)
    return check_choice(param, value, COEFFICIENTS)


def check_method(value: Any, *, param: str = "method") -> str:
    """A resampling method of :data:`RESAMPLING_METHODS`."""
    return check_choice(param, value, RESAMPLING_METHODS)


def check_alternative(value: Any, *, param: str = "alternative") -> str:
    """An alternative hypothesis of :data:`ALTERNATIVES`."""
    return check_choice(param, value, ALTERNATIVES)


def check_correction(value: Any, *, param: str = "correction") -> str:
    """A correction of :data:`CORRECTIONS`."""
    return check_choice(param, value, CORRECTIONS)


def check_family(value: Any, *, param: str = "family") -> str:
    """A correction family of :data:`FAMILIES`."""
    return check_choice(param, value, FAMILIES)


def check_metric_test(value: Any, *, param: str = "test") -> str:
    """A test of two metrics of :data:`METRIC_TESTS`."""
    return check_choice(param, value, METRIC_TESTS)


def check_system_test(value: Any, *, param: str = "test") -> str:
    """A test of two systems of :data:`SYSTEM_TESTS`."""
    return check_choice(param, value, SYSTEM_TESTS)


def check_interval(value: Any, *, param: str = "interval") -> str:
    """A bootstrap interval of :data:`INTERVALS`."""
    return check_choice(param, value, INTERVALS)


def check_ci_method(value: Any, *, param: str = "ci") -> str:
    """A table interval of :data:`CI_METHODS`."""
    return check_choice(param, value, CI_METHODS)


def check_pvalue_method(value: Any, *, param: str = "pvalue_method") -> str:
    """A p-value method of :data:`PVALUE_METHODS`."""
    return check_choice(param, value, PVALUE_METHODS)


def check_undefined(value: Any, *, param: str = "undefined") -> str:
    """An undefined-group policy of :data:`UNDEFINED_POLICIES`."""
    return check_choice(param, value, UNDEFINED_POLICIES)


def check_mt_task(value: Any, *, param: str = "tasks") -> tuple[str, str]:
    """An MT task ``'level/statistic'`` -> ``(canonical level, statistic)``."""
    level, _, statistic = value.partition("/") if isinstance(value, str) else ("", "", "")
    if not statistic or level not in LEVEL_CHOICES or statistic not in MT_STATISTICS:
        raise ParameterError(
            f"`{param}` must hold tasks 'level/statistic' with a level of {', '.join(map(repr, LEVEL_CHOICES))} "
            f"and a statistic of {', '.join(map(repr, MT_STATISTICS))}; got {value!r}."
        )
    level = LEVEL_ALIASES.get(level, level)
    if statistic == "soft-accuracy" and level != "system" or statistic == "darr" and level != "summary":
        raise ParameterError(f"`{param}`: {statistic!r} is defined at level "
                             f"{'system' if statistic == 'soft-accuracy' else 'summary'!r} only; got {value!r}.")
    return level, statistic


def check_format(value: Any, *, param: str = "format") -> str:
    """An output format of :data:`OUTPUT_FORMATS`."""
    return check_choice(param, value, OUTPUT_FORMATS)


def check_tie_threshold(value: Any, coefficient: str | None = None, *, param: str = "tie_threshold") -> float:
    """A finite number >= 0; non-zero only for a pairwise coefficient (when ``coefficient`` is given)."""
    try:
        t = float(value)
    except (TypeError, ValueError):
        t = math.nan
    if isinstance(value, bool) or not (math.isfinite(t) and t >= 0.0):
        raise ParameterError(f"`{param}` must be a finite number >= 0; got {value!r}.")
    if t > 0.0 and coefficient is not None and coefficient not in PAIRWISE_COEFFICIENTS:
        raise ParameterError(
            f"`{param}` must be 0 for coefficient {coefficient!r} (it applies to 'accuracy', "
            f"'tau-eq', 'acc-eq'); got {value!r}."
        )
    return t
