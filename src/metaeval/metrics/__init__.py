"""Text-generation metrics re-implemented exactly: ROUGE-1.5.5 (:class:`Rouge`)."""
from .rouge import Rouge
from .rouge_counts import RougeCounts, RougeStatistics

__all__ = ["Rouge", "RougeCounts", "RougeStatistics"]
