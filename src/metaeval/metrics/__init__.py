"""Text-generation metrics re-implemented exactly: ROUGE-1.5.5 (:class:`Rouge`).

:data:`METRICS` registers every scorer by name (see :mod:`.registry` and ``docs/metrics.md``).
"""
from .registry import METRICS, CorpusScorer, MetricResourceError, Scorer, flatten_scores, get_scorer
from .rouge import Rouge
from .rouge_counts import RougeCounts, RougeStatistics

__all__ = [
    "METRICS",
    "CorpusScorer",
    "MetricResourceError",
    "Rouge",
    "RougeCounts",
    "RougeStatistics",
    "Scorer",
    "flatten_scores",
    "get_scorer",
]
