"""Tools for human judgments: LitePyramid from raw votes, agreement, normalization, weighted retention,
and the choice of documents to annotate. See ``docs/human.md``."""
from .agreement import (
    AgreementResult,
    AnnotatorCorrelationResult,
    GroupAgreementResult,
    agreement,
    annotator_correlations,
    group_agreement,
    krippendorff_alpha,
)
from .annotations import PyramidAnnotations, read_scu_list, read_votes
from .cross import (
    CrossComprehensionLabelsResult,
    CrossComprehensionResult,
    cross_comprehension,
    cross_comprehension_labels,
)
from .jackknife import JackknifeResult, jackknife_scores, read_summary_texts
from .normalize import HumanScoresResult, combine_criteria, normalize, read_judgments
from .pyramid import LitePyramidResult, PyramidMatch, filter_workers, litepyramid, pyramid_match
from .raters import MQMRatersResult, mqm_raters
from .realsumm import check_realsumm_texts, read_realsumm_annotations, read_selected_documents
from .retention import (
    RetentionResult,
    count_rankings,
    performance_groups,
    read_coverage,
    weighted_retention,
)
from .sampling import SampleResult, sample_documents
from .waves import RaterWaves, rater_waves

__all__ = [
    "AgreementResult",
    "AnnotatorCorrelationResult",
    "CrossComprehensionLabelsResult",
    "CrossComprehensionResult",
    "GroupAgreementResult",
    "HumanScoresResult",
    "JackknifeResult",
    "LitePyramidResult",
    "MQMRatersResult",
    "PyramidAnnotations",
    "PyramidMatch",
    "RaterWaves",
    "RetentionResult",
    "SampleResult",
    "agreement",
    "annotator_correlations",
    "check_realsumm_texts",
    "combine_criteria",
    "count_rankings",
    "cross_comprehension",
    "cross_comprehension_labels",
    "filter_workers",
    "group_agreement",
    "jackknife_scores",
    "krippendorff_alpha",
    "litepyramid",
    "mqm_raters",
    "normalize",
    "performance_groups",
    "pyramid_match",
    "rater_waves",
    "read_coverage",
    "read_judgments",
    "read_realsumm_annotations",
    "read_scu_list",
    "read_selected_documents",
    "read_summary_texts",
    "read_votes",
    "sample_documents",
    "weighted_retention",
]
