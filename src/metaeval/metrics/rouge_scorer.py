"""ROUGE-1.5.5 as a registered scorer: :class:`~metaeval.metrics.rouge.Rouge` with its registry name.

:class:`RougeScorer` adds nothing but the ``name`` attribute that the :class:`~metaeval.metrics.registry.Scorer`
protocol asks for; its options, signature and scores are :class:`Rouge`'s (``RougeScorer.from_flags``
works too).
"""
from __future__ import annotations

from .rouge import Rouge

__all__ = ["RougeScorer"]


class RougeScorer(Rouge):
    """:class:`~metaeval.metrics.rouge.Rouge` registered as ``"rouge"`` (see :data:`metaeval.metrics.METRICS`)."""

    name = "rouge"
