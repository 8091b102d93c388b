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

__all__ = ["active_clusters", "cluster_counts", "cluster_types", "cluster_weights", "comparison_counts", "type_weights"]


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


def cluster_types(matrix, active: np.ndarray):
    """The active clusters (rows of a CSR cluster x cell count matrix) grouped by content: a cluster holding a
    single comparison is of the type of its cell; every other cluster is a type of its own.

    Returns ``(type_of, type_matrix, multiplicity)``: the type of each active cluster (k,), the count row of
    each type (CSR, T x cells) and the number of active clusters of each type (T,). Drawing the k active
    clusters with replacement and counting the draws per type is ``Multinomial(k, multiplicity / k)`` over
    the types, so a bootstrap of clusters can draw types: with a million inputs of one comparison each (a
    Chatbot Arena file) there are at most as many types as cells.
    """
    from scipy.sparse import csr_matrix, vstack

    sub = matrix[active].tocsr()
    nnz = np.diff(sub.indptr)
    starts = sub.indptr[:-1]
    single = nnz == 1
    single[single] = sub.data[starts[single]] == 1
    cells = sub.indices[starts[single]]
    single_cells, single_type = np.unique(cells, return_inverse=True)
    multi = np.flatnonzero(~single)
    type_of = np.empty(active.size, dtype=np.int64)
    type_of[single] = single_type.ravel()
    type_of[multi] = single_cells.size + np.arange(multi.size)
    units = csr_matrix((np.ones(single_cells.size), (np.arange(single_cells.size), single_cells)),
                       shape=(single_cells.size, matrix.shape[1]))
    type_matrix = vstack([units, sub[multi]]).tocsr() if multi.size else units
    return type_of, type_matrix, np.bincount(type_of, minlength=single_cells.size + multi.size)


def type_weights(rng: np.random.Generator, type_of: np.ndarray, multiplicity: np.ndarray, size: int) -> np.ndarray:
    """Draw counts (size, T) per type of ``k = len(type_of)`` clusters drawn with replacement: a multinomial on
    the types when they are few (T <= k / 4), otherwise k uniform draws of clusters counted per type."""
    k, n_types = type_of.size, multiplicity.size
    if 4 * n_types <= k:
        return rng.multinomial(k, multiplicity / multiplicity.sum(), size=size).astype(np.float64)
    index = rng.integers(0, k, size=(size, k), dtype=np.int64 if k >= 2**31 else np.int32)
    draws = index if n_types == k and np.array_equal(type_of, np.arange(k)) else type_of[index]
    out = np.empty((size, n_types))
    for row in range(size):
        out[row] = np.bincount(draws[row], minlength=n_types)
    return out
