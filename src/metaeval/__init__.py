"""metaeval: meta-evaluation of automatic evaluation metrics for text generation.

How well does a metric agree with human judgments, how sure are we, and is it really better than
another one? See the README for a tour and ``docs/`` for one page per analysis.
"""
from ._version import __version__
from .analyses.power import PowerResult, load_texts, simulate_power
from .analyses.simulations import CoverageResult, simulate_coverage
from .analyses.systems import CorpusScores, SystemComparisonResult, compare_systems
from .analyses.verdicts import SystemVerdictsResult, system_verdicts
from .analyses.delta import DeltaCorrelationResult, delta_correlations
from .analyses.gap import GapAgreementResult, gap_agreement
from .analyses.normality import NormalityResult, normality
from .analyses.planning import AnnotationPlanResult, plan_annotation
from .analyses.stability import RankingStabilityResult, ranking_stability
from .analyses.topk import TopKResult, topk_correlations
from .analyses.variance import ScoreVarianceResult, score_variance
from .correlation import (
    ComparisonResult,
    CorrelationResult,
    CorrelationTable,
    MetricComparisonResult,
    bootstrap_ci,
    bootstrap_test,
    compare_metrics,
    correlate,
    correlation_table,
    fisher_ci,
    permutation_test,
    williams_test,
)
from .data.datasets import dataset_info, list_datasets, load_dataset
from .data.readers import read_scores
from .data.scoreset import ScoreSet
from .data.writers import write_scores
from .errors import (
    DegenerateDataError,
    DegenerateWarning,
    InputFileError,
    MetaevalError,
    MetaevalWarning,
    ParameterError,
    ScoreSetError,
)
from .metrics.corpus_statistics import BleuStatistic, CorpusStatistic
from . import human
from .human import LitePyramidResult, krippendorff_alpha, litepyramid, sample_documents, weighted_retention
from .report.build import Report, build_report, write_report
from .scoring import ScoredSet, score
from .signature import Signature
from .stats.corrections import adjust_pvalues
from .stats.ranking import ranking_error_rate

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
