"""metaeval: meta-evaluation of automatic evaluation metrics for text generation.

How well does a metric agree with human judgments, how sure are we, and is it really better than
another one? See the README for a tour and ``docs/`` for one page per analysis.

Public names load on first use (PEP 562), so ``import metaeval`` stays light: numpy, pandas and scipy
are imported by the first function that needs them.
"""
from __future__ import annotations

import importlib
from typing import Any

from ._version import __version__

# public name -> module that defines it; one line per name, sorted
_EXPORTS = {
    "AnnotationPlanResult": "metaeval.analyses.planning",
    "BleuStatistic": "metaeval.metrics.corpus_statistics",
    "ComparisonResult": "metaeval.correlation",
    "CorpusScores": "metaeval.analyses.systems",
    "CorpusStatistic": "metaeval.metrics.corpus_statistics",
    "CorrelationResult": "metaeval.correlation",
    "CorrelationTable": "metaeval.correlation",
    "CoverageResult": "metaeval.analyses.simulations",
    "DegenerateDataError": "metaeval.errors",
    "DegenerateWarning": "metaeval.errors",
    "DeltaCorrelationResult": "metaeval.analyses.delta",
    "GapAgreementResult": "metaeval.analyses.gap",
    "InputFileError": "metaeval.errors",
    "LitePyramidResult": "metaeval.human",
    "MetaevalError": "metaeval.errors",
    "MetaevalWarning": "metaeval.errors",
    "MissingDependencyError": "metaeval.errors",
    "MetricComparisonResult": "metaeval.correlation",
    "NormalityResult": "metaeval.analyses.normality",
    "ParameterError": "metaeval.errors",
    "PowerResult": "metaeval.analyses.power",
    "RankingStabilityResult": "metaeval.analyses.stability",
    "Report": "metaeval.report.build",
    "ScoreSet": "metaeval.data.scoreset",
    "ScoreSetError": "metaeval.errors",
    "ScoreVarianceResult": "metaeval.analyses.variance",
    "ScoredSet": "metaeval.scoring",
    "Signature": "metaeval.signature",
    "SystemComparisonResult": "metaeval.analyses.systems",
    "SystemVerdictsResult": "metaeval.analyses.verdicts",
    "TopKResult": "metaeval.analyses.topk",
    "adjust_pvalues": "metaeval.stats.corrections",
    "bootstrap_ci": "metaeval.correlation",
    "bootstrap_test": "metaeval.correlation",
    "build_report": "metaeval.report.build",
    "compare_metrics": "metaeval.correlation",
    "compare_systems": "metaeval.analyses.systems",
    "correlate": "metaeval.correlation",
    "correlation_table": "metaeval.correlation",
    "dataset_info": "metaeval.data.datasets",
    "delta_correlations": "metaeval.analyses.delta",
    "fisher_ci": "metaeval.correlation",
    "gap_agreement": "metaeval.analyses.gap",
    "human": "metaeval.human",
    "krippendorff_alpha": "metaeval.human",
    "list_datasets": "metaeval.data.datasets",
    "litepyramid": "metaeval.human",
    "load_dataset": "metaeval.data.datasets",
    "load_texts": "metaeval.analyses.power",
    "normality": "metaeval.analyses.normality",
    "permutation_test": "metaeval.correlation",
    "plan_annotation": "metaeval.analyses.planning",
    "ranking_error_rate": "metaeval.stats.ranking",
    "ranking_stability": "metaeval.analyses.stability",
    "read_scores": "metaeval.data.readers",
    "sample_documents": "metaeval.human",
    "score": "metaeval.scoring",
    "score_variance": "metaeval.analyses.variance",
    "scoring": "metaeval.scoring",
    "simulate_coverage": "metaeval.analyses.simulations",
    "simulate_power": "metaeval.analyses.power",
    "system_verdicts": "metaeval.analyses.verdicts",
    "topk_correlations": "metaeval.analyses.topk",
    "weighted_retention": "metaeval.human",
    "williams_test": "metaeval.correlation",
    "write_report": "metaeval.report.build",
    "write_scores": "metaeval.data.writers",
}

__all__ = [
    "AnnotationPlanResult",
    "BleuStatistic",
    "ComparisonResult",
    "CorpusScores",
    "CorpusStatistic",
    "CorrelationResult",
    "CorrelationTable",
    "CoverageResult",
    "DegenerateDataError",
    "DegenerateWarning",
    "DeltaCorrelationResult",
    "GapAgreementResult",
    "InputFileError",
    "LitePyramidResult",
    "MetaevalError",
    "MetaevalWarning",
    "MetricComparisonResult",
    "MissingDependencyError",
    "NormalityResult",
    "ParameterError",
    "PowerResult",
    "RankingStabilityResult",
    "Report",
    "ScoreSet",
    "ScoreSetError",
    "ScoreVarianceResult",
    "ScoredSet",
    "Signature",
    "SystemComparisonResult",
    "SystemVerdictsResult",
    "TopKResult",
    "__version__",
    "adjust_pvalues",
    "bootstrap_ci",
    "bootstrap_test",
    "build_report",
    "compare_metrics",
    "compare_systems",
    "correlate",
    "correlation_table",
    "dataset_info",
    "delta_correlations",
    "fisher_ci",
    "gap_agreement",
    "human",
    "krippendorff_alpha",
    "list_datasets",
    "litepyramid",
    "load_dataset",
    "load_texts",
    "normality",
    "permutation_test",
    "plan_annotation",
    "ranking_error_rate",
    "ranking_stability",
    "read_scores",
    "sample_documents",
    "score",
    "score_variance",
    "scoring",
    "simulate_coverage",
    "simulate_power",
    "system_verdicts",
    "topk_correlations",
    "weighted_retention",
    "williams_test",
    "write_report",
    "write_scores",
]


def __getattr__(name: str) -> Any:
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'metaeval' has no attribute {name!r}") from None
    loaded = importlib.import_module(module)
    value = loaded if module == f"metaeval.{name}" else getattr(loaded, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)
