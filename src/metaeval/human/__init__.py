"""Tools for human judgments: LitePyramid from raw votes, agreement, normalization, weighted retention,
and the choice of documents to annotate. See ``docs/human.md``."""
from .agreement import (
    AgreementResult,
    AnnotatorCorrelationResult,
    agreement,
    annotator_correlations,
    group_agreement,
    krippendorff_alpha,
)
from .annotations import PyramidAnnotations, read_scu_list, read_votes
from .pyramid import LitePyramidResult, PyramidMatch, filter_workers, litepyramid, pyramid_match
from .realsumm import check_realsumm_texts, read_realsumm_annotations, read_selected_documents

__all__ = [
    "AgreementResult",
    "AnnotatorCorrelationResult",
    "agreement",
    "annotator_correlations",
    "group_agreement",
    "krippendorff_alpha",
    "LitePyramidResult",
    "PyramidAnnotations",
    "PyramidMatch",
    "check_realsumm_texts",
    "filter_workers",
    "litepyramid",
    "pyramid_match",
    "read_realsumm_annotations",
    "read_scu_list",
    "read_selected_documents",
    "read_votes",
]
