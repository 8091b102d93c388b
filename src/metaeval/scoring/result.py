"""What :func:`metaeval.score` returns: a ScoreSet that also records its metrics' signatures and its run."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .._version import __version__
from ..data.scoreset import ScoreSet
from ..signature import Signature

__all__ = ["MetricRun", "ScoredSet", "ScoringRun"]


@dataclass(frozen=True)
class MetricRun:
    """How one metric's scores were obtained.

    Attributes
    ----------
    label : str
        The metric's label in the run (its registry name, or the key given in a mapping).
    signature : Signature
        The scorer's signature (the cache key's first part).
    fields : tuple of str
        The scorers of the ScoreSet that this metric produced.
    computed : int
        Distinct (candidate, references) pairs scored in this run.
    cached : int
        Distinct pairs whose scores came from the cache.
    """

    label: str
    signature: Signature
    fields: tuple[str, ...]
    computed: int
    cached: int

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "signature": str(self.signature), "fields": list(self.fields),
                "computed": self.computed, "cached": self.cached}


@dataclass(frozen=True)
class ScoringRun:
    """What a scoring run did.

    Attributes
    ----------
    backend : str
        ``'serial'``, ``'processes(K)'`` or ``'dask(<scheduler address>)'``.
    parallelism : int
        Worker processes, or Dask worker threads.
    batch_size : int
        Pairs per batch.
    cells : int
        Candidates scored (system x input cells that have a candidate).
    pairs : int
        Distinct (candidate, references) pairs among them (each is scored once per metric).
    metrics : tuple of MetricRun
    cache : str or None
        The cache file, if any.
    seconds : float
        Wall-clock time of the run.
    """

    backend: str
    parallelism: int
    batch_size: int
    cells: int
    pairs: int
    metrics: tuple[MetricRun, ...]
    cache: str | None
    seconds: float

    @property
    def computed(self) -> int:
        """Metric calls made in this run (pairs x metrics not found in the cache)."""
        return sum(m.computed for m in self.metrics)

    @property
    def cached(self) -> int:
        """Pairs x metrics read from the cache."""
        return sum(m.cached for m in self.metrics)

    def to_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "parallelism": self.parallelism,
            "batch_size": self.batch_size,
            "cells": self.cells,
            "pairs": self.pairs,
            "computed": self.computed,
            "cached": self.cached,
            "cache": self.cache,
            "seconds": round(self.seconds, 3),
            "metrics": [m.to_dict() for m in self.metrics],
        }


class ScoredSet(ScoreSet):
    """A :class:`~metaeval.data.scoreset.ScoreSet` made by :func:`metaeval.score`.

    Besides the score matrices (one scorer per flattened metric field, e.g. ``rouge-2.recall``), it
    records the signature of the metric behind every scorer (:attr:`signatures`) and what the run did
    (:attr:`run`). Sets derived from it (``subset``, ``with_humans``, ...) are plain ScoreSets.
    """

    def __init__(self, scores: Mapping[str, Any], *, systems: Sequence[str], inputs: Sequence[str],
                 run: ScoringRun, name: str | None = None):
        super().__init__(scores, systems=systems, inputs=inputs, name=name)
        self._run = run
        self._signatures = MappingProxyType({f: m.signature for m in run.metrics for f in m.fields})

    def __repr__(self) -> str:
        name = f"{self.name!r}, " if self.name else ""
        return (f"ScoredSet({name}{len(self.systems)} systems x {len(self.inputs)} inputs, {len(self.scorers)} scorers"
                f" from {len(self._run.metrics)} metric{'' if len(self._run.metrics) == 1 else 's'},"
                f" backend={self._run.backend!r})")

    @property
    def signatures(self) -> Mapping[str, Signature]:
        """Scorer name -> signature of the metric that produced it."""
        return self._signatures

    @property
    def metric_signatures(self) -> Mapping[str, Signature]:
        """Metric label -> its signature."""
        return MappingProxyType({m.label: m.signature for m in self._run.metrics})

    @property
    def run(self) -> ScoringRun:
        return self._run

    def metadata(self) -> dict[str, Any]:
        """What ``metaeval score`` writes beside the score file: signatures, labels and the run."""
        return {
            "metaeval_version": __version__,
            "systems": len(self.systems),
            "inputs": len(self.inputs),
            "signatures": {label: str(signature) for label, signature in self.metric_signatures.items()},
            "scorers": {field: str(signature) for field, signature in self._signatures.items()},
            "run": self._run.to_dict(),
        }
