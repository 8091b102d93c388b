"""Rater waves: multi-rater human scores split into independent human scorers (docs/mt.md, "Human baselines").

With several raters per segment (the WMT23 side-by-side MQM release has three), the raters of each segment
are split at random into ``N`` *waves*; each wave's scores, averaged over its raters, are a human scorer of
their own. One wave can then serve as the gold and another be scored against it as if it were a metric: the
human baseline of Proietti, Perrella & Navigli (2025), who ask whether metrics reach the agreement of a second
human annotation (mt-metrics-eval's ``human1`` / ``human2`` score versions are two such annotations).

The assignment rule
    For each segment (input) separately: its raters (the per-rater scorers ``<human>.<rater>`` with a score
    on that segment) are put in a random order (a seeded permutation, one per segment, in the order of the
    inputs) and dealt round-robin: the first to wave 1, the second to wave 2, ..., the ``N+1``-th to wave 1
    again. With 3 raters and 2 waves, wave 1 averages two raters and wave 2 one. A rater keeps its wave for
    every system of the segment (as a side-by-side rater rates them all), and different segments draw
    different assignments, so a wave mixes raters across segments.
What a wave scores
    ``<human>.wave<w>`` (``mqm.wave1``, ``mqm.wave2``, ...) of a (system, segment) is the mean of its raters'
    scores there; the waves are added to the ScoreSet as human scorers.
Refused
    A segment whose raters cannot give every wave a rater on every system they rated: fewer raters than
    waves (one rater and two waves), or raters who rated different systems of the segment (WMT21 TED: one
    rater per system). The error counts such segments and names the first ones; nothing is dropped
    silently. A per-rater scorer without any score (a rater seen only in attention checks, or on systems
    left out) takes no part and is named in a :class:`~metaeval.errors.DataWarning`.

References
----------
Proietti, L., Perrella, S. and Navigli, R. (2025). Has Machine Translation Evaluation Achieved Human Parity?
The Human Reference and the Limits of Progress. ACL 2025.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import rng_and_seed
from ..data.scoreset import ScoreSet
from ..errors import DataWarning, ParameterError, check_int

__all__ = ["RaterWaves", "rater_waves", "wave_names"]

#: How many segments an error names before "...".
SHOWN = 3


def wave_names(human: str, waves: int) -> tuple[str, ...]:
    """``('mqm.wave1', 'mqm.wave2', ...)``: the names of the waves of ``human``."""
    return tuple(f"{human}.wave{w}" for w in range(1, waves + 1))


@dataclass(frozen=True)
class RaterWaves:
    """What :func:`rater_waves` returns.

    Attributes
    ----------
    scores : ScoreSet
        The input's scorers and the waves (``names``); the waves and the per-rater scorers are marked human
        (so that no default list of metrics takes them).
    names : tuple of str
        ``<human>.wave1``, ..., ``<human>.wave<N>``.
    assignment : dict
        ``segment -> ((raters of wave 1), (raters of wave 2), ...)``, raters by their scorer's suffix, for
        every segment with a rating.
    raters_left_out : tuple of str
        Per-rater scorers without any score (they take no part).
    seed : int or str
        The seed of the assignment (``'generator'`` for a Generator given by the caller without ``recorded_seed``).
    """

    scores: ScoreSet
    names: tuple
    assignment: dict
    raters_left_out: tuple
    seed: Any

    def counts(self) -> dict[str, int]:
        """Segments per number of raters in each wave, e.g. ``{'2+1': 104}`` for 3 raters and 2 waves."""
        out: dict[str, int] = {}
        for waves in self.assignment.values():
            key = "+".join(str(len(w)) for w in waves)
            out[key] = out.get(key, 0) + 1
        return out


def _waves_iv(scores, waves, human, param):
    if not isinstance(scores, ScoreSet):
        scores = getattr(scores, "scores", scores)  # an MQMRatings gives its ScoreSet
    if not isinstance(scores, ScoreSet):
        raise ParameterError(f"`scores` must be a ScoreSet or MQM ratings; got {type(scores).__name__}.")
    waves = check_int(param, waves, minimum=2)
    if not isinstance(human, str) or not human:
        raise ParameterError(f"`human` must be the name of the averaged human scorer; got {human!r}.")
    wave = f"{human}.wave"  # the names are built once the data bound the number of waves
    taken = [s for s in scores.scorers if s.startswith(wave) and s[len(wave):].isdigit()
             and 1 <= int(s[len(wave):]) <= waves]
    if taken:
        raise ParameterError(f"`{param}`: the scorer {taken[0]!r} exists already in {scores.name or 'the data'!r}; "
                             f"split the ratings once.")
    prefix = human + "."
    raters = [s for s in scores.scorers if s.startswith(prefix) and not s[len(prefix):].startswith("wave")]
    if not raters:
        raise ParameterError(f"`{param}` needs the per-rater scorers '{human}.<rater>' (MQM ratings with several "
                             f"raters per segment); got none among the scorers of {scores.name or 'the data'!r}.")
    return scores, waves, raters


def rater_waves(scores: Any, waves: int, *, rng: Any = None, human: str = "mqm", param: str = "waves",
                recorded_seed: int | None = None) -> RaterWaves:
    """Split each segment's raters at random into ``waves`` waves, each averaged into a human scorer.

    Parameters
    ----------
    scores : ScoreSet or MQMRatings
        Per-rater scorers ``<human>.<rater>`` (what :func:`metaeval.read_mqm_ratings` gives for a file with
        several raters per segment, or ``per_rater=True``).
    waves : int
        The number of waves, at least 2.
    rng : None, int or numpy.random.Generator
        Seed of the assignment.
    recorded_seed : int, optional
        With a Generator ``rng`` that the caller drew from a seed it records: that seed, named in the note
        (``seed <int>, stream (<int>, 1)``) instead of ``seed generator``; :func:`metaeval.mt_evaluate` passes
        its seed, whose stream ``numpy.random.default_rng((seed, 1))`` splits the waves.
    human : str
        The averaged human scorer's name; the raters are ``<human>.<rater>`` and the waves
        ``<human>.wave1`` ... ``<human>.wave<waves>``.
    param : str
        How messages name ``waves`` (a command line passes its flag).

    Returns
    -------
    RaterWaves

    Raises
    ------
    ParameterError
        ``waves`` not an integer >= 2, no per-rater scorers, the wave names taken, or segments that cannot
        give every wave a rater on every system they rated (the message counts them and names the first).

    Warns
    -----
    DataWarning
        Per-rater scorers without any score, named; they take no part.

    Notes
    -----
    The assignment rule is in the module docstring: per segment, a seeded random order of its raters dealt
    round-robin to the waves; a wave's score of a cell is the mean of its raters' scores there.

    References
    ----------
    Proietti, L., Perrella, S. and Navigli, R. (2025). Has Machine Translation Evaluation Achieved Human
    Parity? The Human Reference and the Limits of Progress. ACL 2025.

    Examples
    --------
    >>> r = read_mqm_ratings("../shared/data/wmt/mqm_ratings/sxs_mqm_generalMT2023_ende.3ratings.tsv.gz")  # doctest: +SKIP
    >>> rater_waves(r, 2, rng=0).counts()                                                                     # doctest: +SKIP
    {'2+1': 104}
    """
    scores, waves, raters = _waves_iv(scores, waves, human, param)
    gen, seed = rng_and_seed(rng)
    stack = np.stack([scores.matrix(r) for r in raters])  # (R, N, M)
    rated = np.isfinite(stack)
    empty = [r for r, any_score in zip(raters, rated.any(axis=(1, 2))) if not any_score]
    if empty:
        shown = ", ".join(map(repr, empty[:SHOWN])) + (f" and {len(empty) - SHOWN} more" if len(empty) > SHOWN else "")
        warnings.warn(f"rater waves: left out {len(empty)} rater(s) with no ratings: {shown}.", DataWarning,
                      stacklevel=2)
    cell_rated = rated.any(axis=0)  # (N, M)
    bad = []
    for j in range(stack.shape[2]):
        who = rated[:, :, j]                                   # (R, N)
        present = who.any(axis=1)
        if not present.any():
            continue
        rows = cell_rated[:, j]
        complete = who[present][:, rows].all()
        if present.sum() < waves or not complete:
            bad.append(scores.inputs[j])
    if bad:
        shown = ", ".join(map(repr, bad[:SHOWN])) + (", ..." if len(bad) > SHOWN else "")
        raise ParameterError(f"`{param}` must leave every wave a rater on every system of a segment; got {len(bad)} "
                             f"of {int(cell_rated.any(axis=0).sum())} segments with fewer than {waves} raters on "
                             f"some system they rated (first: {shown}).")
    names = wave_names(human, waves)  # waves <= raters of a segment here
    prefix = len(human) + 1
    sums = np.zeros((waves, *stack.shape[1:]))
    counts = np.zeros((waves, *stack.shape[1:]))
    assignment = {}
    for j in range(stack.shape[2]):
        present = np.flatnonzero(rated[:, :, j].any(axis=1))
        if present.size == 0:
            continue
        order = present[gen.permutation(present.size)]
        members = [order[w::waves] for w in range(waves)]
        for w, idx in enumerate(members):
            values = stack[idx, :, j]
            sums[w, :, j] = np.nansum(values, axis=0)
            counts[w, :, j] = np.isfinite(values).sum(axis=0)
        assignment[scores.inputs[j]] = tuple(tuple(raters[i][prefix:] for i in idx) for idx in members)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    matrices = {s: scores.annotations(s) for s in scores.scorers}
    matrices.update({name: means[w] for w, name in enumerate(names)})
    if recorded_seed is not None and seed == "generator":
        seed = recorded_seed
        note = f"{waves} rater waves (seed {seed}, stream ({seed}, 1))"
    else:
        note = f"{waves} rater waves (seed {seed})"
    humans = tuple(dict.fromkeys((*scores.humans, *raters, *names)))  # raters are human judgments too
    out = ScoreSet(matrices, systems=scores.systems, inputs=scores.inputs, humans=humans,
                   name=scores.name, aggregation=scores.aggregation,
                   description="; ".join(p for p in (scores.description, note) if p))
    return RaterWaves(out, names, assignment, tuple(empty), seed)
