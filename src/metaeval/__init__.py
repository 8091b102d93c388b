"""metaeval: meta-evaluation of automatic evaluation metrics for text generation.

How well does a metric agree with human judgments, how sure are we, and is it really better than
another one? See the README for a tour and ``docs/`` for one page per analysis.

Public names load on first use (PEP 562), so ``import metaeval`` stays light: numpy, pandas and scipy
are imported by the first function that needs them.
"""
from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from ._version import __version__
from .analyses import registry as _analyses

# public name -> module that defines it; the analyses' names come from their registry
_EXPORTS = {
    "BleuStatistic": "metaeval.metrics.corpus_statistics",
    "ComparisonResult": "metaeval.correlation",
    "CrossComprehensionResult": "metaeval.human",
    "CorpusStatistic": "metaeval.metrics.corpus_statistics",
    "CorrelationResult": "metaeval.correlation",
    "CorrelationTable": "metaeval.correlation",
    "DegenerateDataError": "metaeval.errors",
    "DegenerateWarning": "metaeval.errors",
    "DataWarning": "metaeval.errors",
    "InputFileError": "metaeval.errors",
    "JackknifeResult": "metaeval.human",
    "LitePyramidResult": "metaeval.human",
    "MetaevalError": "metaeval.errors",
    "MetaevalWarning": "metaeval.errors",
    "MissingDependencyError": "metaeval.errors",
    "MetricComparisonResult": "metaeval.correlation",
    "PaperProcedureWarning": "metaeval.errors",
    "MtEvaluationResult": "metaeval.correlation",
    "ParameterError": "metaeval.errors",
    "Report": "metaeval.report.build",
    "ScoreSet": "metaeval.data.scoreset",
    "SignificanceWarning": "metaeval.errors",
    "ScoreSetError": "metaeval.errors",
    "ScoredSet": "metaeval.scoring",
    "Signature": "metaeval.signature",
    "adjust_pvalues": "metaeval.stats.significance.corrections",
    "bootstrap_ci": "metaeval.correlation",
    "bootstrap_test": "metaeval.correlation",
    "build_report": "metaeval.report.build",
    "compare_metrics": "metaeval.correlation",
    "mt_evaluate": "metaeval.correlation",
    "load_protocol": "metaeval.correlation.mt_protocol",
    "Protocol": "metaeval.stats.mt.protocol",
    "correlate": "metaeval.correlation",
    "correlation_table": "metaeval.correlation",
    "cross_comprehension": "metaeval.human",
    "dataset_info": "metaeval.data.datasets",
    "familywise_error": "metaeval.stats.significance.familywise",
    "fisher_ci": "metaeval.correlation",
    "human": "metaeval.human",
    "jackknife_scores": "metaeval.human",
    "krippendorff_alpha": "metaeval.human",
    "list_datasets": "metaeval.data.datasets",
    "litepyramid": "metaeval.human",
    "load_dataset": "metaeval.data.datasets",
    "nugget_f": "metaeval.stats.frameworks.nugget",
    "pairwise_comparisons": "metaeval.stats.significance.familywise",
    "per_comparison_level": "metaeval.stats.significance.familywise",
    "permutation_test": "metaeval.correlation",
    "ranking_error_rate": "metaeval.stats.correlations.ranking",
    "read_mt_metrics_eval": "metaeval.data.wmt",
    "read_scores": "metaeval.data.readers",
    "read_wmt_mqm": "metaeval.data.wmt",
    "sample_documents": "metaeval.human",
    "score": "metaeval.scoring",
    "scoring": "metaeval.scoring",
    "weighted_retention": "metaeval.human",
    "williams_test": "metaeval.correlation",
    "write_report": "metaeval.report.build",
    "write_scores": "metaeval.data.writers",
}
_EXPORTS.update(_analyses.exports())

__all__ = [
    "AnnotationPlanResult",
    "BleuStatistic",
    "ComparisonResult",
    "CorpusScores",
    "CorpusStatistic",
    "CorrelationResult",
    "CorrelationTable",
    "CoverageResult",
    "CrossComprehensionResult",
    "DataWarning",
    "DegenerateDataError",
    "DegenerateWarning",
    "DeltaCorrelationResult",
    "GapAgreementResult",
    "InputFileError",
    "JackknifeResult",
    "LitePyramidResult",
    "MetaevalError",
    "MetaevalWarning",
    "MetricComparisonResult",
    "MissingDependencyError",
    "MtEvaluationResult",
    "NormalityResult",
    "NuggetScoresResult",
    "PaperProcedureWarning",
    "PaperSummaryLevelResult",
    "ParameterError",
    "PartitionCorrelationResult",
    "PowerResult",
    "Protocol",
    "QarlaResult",
    "QarlaSimilarities",
    "RankingStabilityResult",
    "RelevanceAgreementResult",
    "Report",
    "ScoreSet",
    "ScoreSetError",
    "ScoreVarianceResult",
    "ScoredSet",
    "Signature",
    "SignificanceWarning",
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
    "cross_comprehension",
    "dataset_info",
    "delta_correlations",
    "extrinsic_correlation",
    "familywise_error",
    "fisher_ci",
    "gap_agreement",
    "human",
    "jackknife_scores",
    "krippendorff_alpha",
    "list_datasets",
    "litepyramid",
    "litepyramid_nuggets",
    "load_dataset",
    "load_protocol",
    "load_texts",
    "match_nuggets",
    "mt_evaluate",
    "normality",
    "nugget_f",
    "nugget_scores",
    "pairwise_comparisons",
    "paper_summary_level",
    "partition_correlation",
    "per_comparison_level",
    "permutation_test",
    "plan_annotation",
    "qarla",
    "qarla_similarities",
    "ranking_error_rate",
    "ranking_stability",
    "read_mt_metrics_eval",
    "read_qarla_texts",
    "read_scores",
    "read_wmt_mqm",
    "realsumm_nugget_tables",
    "relevance_agreement",
    "sample_documents",
    "score",
    "score_variance",
    "scoreset_partition_correlation",
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
    module = _EXPORTS.get(name)
    if module is None:  # a subpackage, as `import metaeval.report` would give (me.report.formats, ...)
        if name.startswith("_") or importlib.util.find_spec(f"{__name__}.{name}") is None:
            raise AttributeError(f"module 'metaeval' has no attribute {name!r}")
        module = f"{__name__}.{name}"
    loaded = importlib.import_module(module)
    value = loaded if module == f"metaeval.{name}" else getattr(loaded, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)
