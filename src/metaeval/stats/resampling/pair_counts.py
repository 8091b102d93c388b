"""Bootstrap draws of per-pair count arrays (arrays in, arrays out): the resamples of pairwise comparisons.

A Bradley-Terry ranking depends on its comparisons only through the counts per unordered system pair (wins
of each side, ties), so a resample is a count array ``(P, 3)``:

- comparisons drawn with replacement (:func:`comparison_counts`): ``Multinomial(n, c / n)`` over the 3P
  cells, exactly the distribution of a resample of the n rows, at the cost of 3P draws instead of n;
- clusters (inputs, judges) drawn with replacement, each bringing all its comparisons: multiplicities
  (:func:`cluster_weights`) times the per-cluster count matrix (:func:`cluster_counts`).
"""
from __future__ import annotations

import numpy as np

__all__ = ["active_clusters", "cluster_counts", "cluster_weights", "comparison_counts"]


def cluster_weights(rng: np.random.Generator, n_groups: int, size: int, active: np.ndarray | None = None) -> np.ndarray:
    """Multiplicities (size, n_groups) of clusters drawn with replacement: ``len(active)`` draws among the
    ``active`` clusters (default: all); the others (clusters without any comparison) get 0."""
    if active is None:
        return rng.multinomial(n_groups, np.full(n_groups, 1.0 / n_groups), size=size).astype(np.float64)
    out = np.zeros((size, n_groups))
    k = len(active)
    out[:, active] = rng.multinomial(k, np.full(k, 1.0 / k), size=size)
    return out


def active_clusters(codes: np.ndarray, n_groups: int) -> np.ndarray:
    """The clusters (inputs, judges) that hold at least one comparison."""
    return np.flatnonzero(np.bincount(codes, minlength=n_groups) > 0)


def cluster_counts(matrix, weights: np.ndarray) -> np.ndarray:
    """Counts (B, P, 3) of the resamples with cluster multiplicities ``weights`` (B, clusters)."""
    out = np.asarray((matrix.T @ weights.T).T)
    return out.reshape(weights.shape[0], -1, 3)


def comparison_counts(rng: np.random.Generator, counts: np.ndarray, size: int) -> np.ndarray:
    """Counts (size, P, 3) of resamples of the ``counts.sum()`` comparisons drawn with replacement."""
    flat = counts.ravel()
    total = int(round(flat.sum()))
    used = np.flatnonzero(flat > 0)
    draws = rng.multinomial(total, flat[used] / total, size=size)
    out = np.zeros((size, flat.size))
    out[:, used] = draws
    return out.reshape(size, -1, 3)
