"""Sentinel metrics: degenerate scorers built from the data, never from the gold (:func:`add_sentinels`).

A sentinel is a scorer that no one would call a good metric; a meta-evaluation measure that ranks a sentinel
high rewards something other than agreement with the human (Perrella, Proietti, Scire, Barba & Navigli 2024,
"Guardians of the Machine Translation Meta-Evaluation: Sentinel Metrics Fall In!", ACL 2024). The sentinels
here are computed from the metric scores (and the candidate texts) only:

- ``sentinel-random``: seeded standard normal noise in every cell the metrics score;
- ``sentinel-system-mean``: each system's mean of a base metric, given to every segment of the system (a
  constant per system: it cannot rank the segments of one system, and it is perfect at system level when
  the base metric is);
- ``sentinel-rounded``: the base metric rounded to a few levels (its range cut into equal steps), a metric
  with many ties;
- ``sentinel-length``: the number of whitespace tokens of the candidate, when the texts are given.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import ParameterError
from ..vocabulary import MT_SENTINELS

__all__ = ["add_sentinels", "sentinel_matrices"]


def sentinel_matrices(metric_scores: Mapping[str, np.ndarray], *, base: str, levels: int, rng: Any,
                      lengths: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """``{sentinel: (N, M) matrix}`` from the metrics' matrices only (the gold is not an argument).

    A cell is scored by a sentinel where some metric scores it; ``lengths`` (N, M) are the candidates'
    token counts (NaN where no text), or None (no ``sentinel-length``)."""
    stack = np.stack([np.asarray(m, dtype=float) for m in metric_scores.values()])
    scored = np.isfinite(stack).any(axis=0)
    x = np.asarray(metric_scores[base], dtype=float)
    gen = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    noise = gen.standard_normal(x.shape)
    out = {"sentinel-random": np.where(scored, noise, np.nan)}
    with np.errstate(invalid="ignore"):
        means = np.nanmean(np.where(np.isfinite(x), x, np.nan), axis=1)
    out["sentinel-system-mean"] = np.where(scored & np.isfinite(means)[:, None], means[:, None], np.nan)
    low, high = np.nanmin(x), np.nanmax(x)
    step = (high - low) / (levels - 1) if high > low else 1.0
    out["sentinel-rounded"] = np.round((x - low) / step)  # levels 0 .. levels-1; NaN stays NaN
    if lengths is not None:
        out["sentinel-length"] = np.where(scored, np.asarray(lengths, dtype=float), np.nan)
    return out


def _lengths(ds: ScoreSet, candidates: Mapping) -> np.ndarray:
    """(N, M) whitespace token counts of ``candidates`` ``{(system, input): text}``; NaN where none."""
    out = np.full(ds.shape, np.nan)
    rows = {s: i for i, s in enumerate(ds.systems)}
    cols = {x: j for j, x in enumerate(ds.inputs)}
    found = 0
    for key, text in candidates.items():
        if not (isinstance(key, tuple) and len(key) == 2) or not isinstance(text, str):
            raise ParameterError(f"`candidates` must map (system, input) to a text; got {key!r}: {text!r}.")
        i, j = rows.get(str(key[0])), cols.get(str(key[1]))
        if i is not None and j is not None:
            out[i, j] = len(text.split())
            found += 1
    if not found:
        raise ParameterError("`candidates` must hold texts of the data's systems and inputs; got none that match.")
    return out


def add_sentinels(ds: ScoreSet, metrics, *, base: str | None = None, levels: int = defaults.MT_SENTINEL_LEVELS,
                  candidates: Mapping | None = None, rng: Any = None) -> tuple[ScoreSet, list[str]]:
    """``ds`` with the sentinel scorers added, and notes naming a sentinel left out.

    Parameters
    ----------
    ds : ScoreSet
    metrics : list of str
        The real metrics; the sentinels are computed from these only (never from a human scorer).
    base : str, optional
        The metric copied by ``sentinel-system-mean`` and ``sentinel-rounded`` (default: the first metric).
    levels : int
        Distinct values of ``sentinel-rounded`` (its range cut into ``levels - 1`` equal steps).
    candidates : mapping, optional
        ``{(system, input): candidate text}``: adds ``sentinel-length`` (whitespace tokens).
    rng : None, int or numpy.random.Generator
        Seeds ``sentinel-random``.
    """
    metrics = list(metrics)
    if not metrics:
        raise ParameterError("`metrics` must name at least one metric to build the sentinels from; got none.")
    for m in metrics:
        ds.require(m, param="metrics")
    base = metrics[0] if base is None else base
    if base not in metrics:
        raise ParameterError(f"`base` must be one of the metrics ({', '.join(map(repr, metrics))}); got {base!r}.")
    if isinstance(levels, bool) or not isinstance(levels, int) or levels < 2:
        raise ParameterError(f"`levels` must be an integer >= 2; got {levels!r}.")
    clash = [s for s in MT_SENTINELS if s in ds.scorers]
    if clash:
        raise ParameterError(f"the data must not hold a scorer named like a sentinel; got {clash[0]!r}.")
    gen, _ = iv.rng_and_seed(rng)
    lengths = None if candidates is None else _lengths(ds, candidates)
    notes = [] if lengths is not None else ["sentinel-length left out: no candidate texts given"]
    if lengths is not None:
        lacking = np.isfinite(np.stack([ds.matrix(m) for m in metrics])).any(axis=0) & np.isnan(lengths)
        if lacking.any():  # a sentinel with holes would make the protocol drop those systems for every metric
            names = ", ".join(repr(ds.systems[i]) for i in np.flatnonzero(lacking.any(axis=1)))
            notes.append(f"sentinel-length left out: the candidate texts lack {int(lacking.sum())} scored cells"
                         f" (systems {names}); the metrics' results keep every system")
            lengths = None
    made = sentinel_matrices({m: ds.matrix(m) for m in metrics}, base=base, levels=levels, rng=gen,
                             lengths=lengths)
    scores = {s: ds.matrix(s) for s in ds.scorers}
    scores.update(made)
    out = ScoreSet.from_matrices(scores, systems=list(ds.systems), inputs=list(ds.inputs), humans=ds.humans,
                                 name=ds.name)
    return out, notes
