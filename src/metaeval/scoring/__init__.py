"""Running metrics over corpora: inputs, batches, local processes or Dask, a crash-safe score cache.

:func:`score` (also ``metaeval.score``) is the entry point; ``docs/scoring.md`` describes the file
formats, the backends, the cache and resuming.
"""
from .cache import ScoreCache
from .engine import score
from .inputs import ScoringInputs, load_inputs, read_candidates, read_references
from .result import MetricRun, ScoredSet, ScoringRun

__all__ = [
    "MetricRun",
    "ScoreCache",
    "ScoredSet",
    "ScoringInputs",
    "ScoringRun",
    "load_inputs",
    "read_candidates",
    "read_references",
    "score",
]
