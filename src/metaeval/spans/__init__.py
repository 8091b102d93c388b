"""Error spans and binary decisions: spans as data, span measures, their statistics and human agreement."""
from .baselines import BASELINES, baseline_spans
from .evaluate import SpanEvaluationResult, evaluate_spans
from .measures import AVERAGINGS, MEASURES, SEVERITY_MODES, cell_counts
from .detector_files import read_detector_spans, write_detector_spans
from .model import Span, SpanAnnotations, align, gold_from_ratings, pool_golds, rater_spans

__all__ = ["AVERAGINGS", "BASELINES", "MEASURES", "SEVERITY_MODES", "Span", "SpanAnnotations",
           "SpanEvaluationResult", "align", "baseline_spans", "cell_counts", "evaluate_spans", "gold_from_ratings",
           "pool_golds", "rater_spans", "read_detector_spans", "write_detector_spans"]
from .agreement import SpanAgreementResult, span_agreement  # noqa: E402

__all__ += ["SpanAgreementResult", "span_agreement"]
from .binary import SpanBinaryResult, evaluate_binary  # noqa: E402

__all__ += ["SpanBinaryResult", "evaluate_binary"]
from .pairs import SpanPairsResult, evaluate_spans_by_pair  # noqa: E402

__all__ += ["SpanPairsResult", "evaluate_spans_by_pair"]
