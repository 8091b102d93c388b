"""Partition-averaged correlation (Dorr, Monz, President, Schwartz & Zajic 2005, sec. 5.1).

To damp the noise of single binary judgments, Dorr et al. randomly partition the n data points into
``c = n // p`` cells of ``p`` points, average the metric and the agreement within each cell, and take
Pearson's r over the c cell means; they repeat this with 10,000 random partitions and report the
correlation over partitions (Table 5, p = 1, 2, 4; Figure 1 shows its spread). Here, for repetition t::

    pi_t          a uniformly random permutation of the n points
    cell_j        points pi_t[j p], ..., pi_t[j p + p - 1]   (j = 0 .. c - 1)
    xbar_j        sum_{i in cell_j} w_i x_i / sum_{i in cell_j} w_i    (w = 1 unless weights are given)
    ybar_j        likewise
    r_t           Pearson(xbar, ybar) over the c cells

Decisions: when ``p`` does not divide ``n`` the ``n - c p`` points that the permutation puts last are left
out of that repetition (a different random subset each time; the count is reported); a repetition whose
cell means are constant in x or y has no r (NaN), and these are counted, never replaced by 0. With
``p = 1`` every repetition gives the plain Pearson r of the points.

Vectorized over repetitions: the permutations of one batch are an index array (b, n) drawn with
``Generator.permuted``; the cell means are one reshape and sum; Pearson is a row-wise centred product.
The draws depend on the batch size only through the row order, which is the same for any batch size (a
test pins it).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from metaeval.errors import ParameterError, check_int

__all__ = ["MIN_CELLS", "partition_correlations", "partition_indices", "row_pearson"]

MIN_CELLS = 3
"""Fewest cells a partition must have (Pearson over 2 points is +-1 by construction)."""

_BATCH_ELEMENTS = 1 << 22


def _vector(name: str, value: Any) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"`{name}` must be a 1-D array of numbers; got {type(value).__name__}.") from None
    if array.ndim != 1:
        raise ParameterError(f"`{name}` must be a 1-D array of numbers; got shape {array.shape}.")
    if not np.isfinite(array).all():
        raise ParameterError(f"`{name}` must hold finite numbers; got {float(array[~np.isfinite(array)][0])!r}.")
    return array


def _partition_iv(x, y, size, n_partitions, weights, batch):
    x = _vector("x", x)
    y = _vector("y", y)
    if x.shape != y.shape:
        raise ParameterError(f"`x` and `y` must have the same length; got {x.size} and {y.size}.")
    size = check_int("size", size, minimum=1)
    n_partitions = check_int("n_partitions", n_partitions, minimum=1)
    if x.size // size < MIN_CELLS:
        raise ParameterError(f"`size` must leave at least {MIN_CELLS} cells of the {x.size} points "
                             f"(size <= {x.size // MIN_CELLS}); got {size}.")
    if weights is not None:
        weights = _vector("weights", weights)
        if weights.shape != x.shape:
            raise ParameterError(f"`weights` must have one value per point ({x.size}); got {weights.size}.")
        if (weights <= 0).any():
            raise ParameterError(f"`weights` must be > 0; got {float(weights[weights <= 0][0])!r}.")
    if batch is None:
        batch = max(1, _BATCH_ELEMENTS // max(x.size, 1))
    batch = check_int("batch", batch, minimum=1)
    return x, y, size, n_partitions, weights, batch


def partition_indices(n: int, size: int, n_repeats: int, rng: np.random.Generator) -> np.ndarray:
    """Random partitions: (n_repeats, n // size, size) point indices, one uniform permutation per row."""
    rows = np.broadcast_to(np.arange(n), (n_repeats, n))
    perms = rng.permuted(rows, axis=1)
    cells = n // size
    return perms[:, : cells * size].reshape(n_repeats, cells, size)


def row_pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson r of each row pair of (k, c) arrays; NaN where a row of ``a`` or ``b`` is constant, 0 where
    ``|r| < 1e-12`` (rounding of an exactly zero covariance)."""
    ac = a - a.mean(axis=1, keepdims=True)
    bc = b - b.mean(axis=1, keepdims=True)
    saa = np.einsum("ij,ij->i", ac, ac)
    sbb = np.einsum("ij,ij->i", bc, bc)
    sab = np.einsum("ij,ij->i", ac, bc)
    # a row is constant when its spread is at rounding level of its magnitude
    scale_a = np.abs(a).max(axis=1) ** 2 * a.shape[1] * 1e-24
    scale_b = np.abs(b).max(axis=1) ** 2 * b.shape[1] * 1e-24
    ok = (saa > scale_a) & (sbb > scale_b)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(ok, sab / np.sqrt(saa * sbb), np.nan)
    # an exactly uncorrelated pair gives |r| of rounding size (1e-17); report it as 0
    r = np.where(np.abs(r) < 1e-12, 0.0, r)
    return np.clip(r, -1.0, 1.0)


def partition_correlations(x, y, *, size: int, n_partitions: int, rng: np.random.Generator,
                           weights=None, batch: int | None = None) -> np.ndarray:
    """Pearson r of cell means under ``n_partitions`` random partitions into cells of ``size`` points.

    Parameters
    ----------
    x, y : array of shape (n,)
        The data points' metric scores and agreement (or human) scores.
    size : int
        ``p``, points per cell (1 = no averaging).
    n_partitions : int
        Random partitions (10,000 in Dorr et al. 2005).
    rng : numpy.random.Generator
    weights : array of shape (n,), optional
        Positive weight of each point in its cell's means (e.g. its number of judgments, so that a cell's
        agreement is pooled over its judgments); equal weights by default.
    batch : int, optional
        Partitions per vectorized batch (memory bound); the result does not depend on it.

    Returns
    -------
    numpy.ndarray of shape (n_partitions,)
        r of each partition, NaN where a partition's cell means are constant.

    References
    ----------
    B. Dorr, C. Monz, S. President, R. Schwartz and D. Zajic (2005). A Methodology for Extrinsic Evaluation
    of Text Summarization: Does ROUGE Correlate? ACL 2005 Workshop on Intrinsic and Extrinsic Evaluation
    Measures for MT and/or Summarization, sec. 5.1 and Table 5.
    """
    x, y, size, n_partitions, weights, batch = _partition_iv(x, y, size, n_partitions, weights, batch)
    if not isinstance(rng, np.random.Generator):
        raise ParameterError(f"`rng` must be a numpy.random.Generator; got {type(rng).__name__}.")
    out = np.empty(n_partitions)
    for start in range(0, n_partitions, batch):
        stop = min(start + batch, n_partitions)
        cells = partition_indices(x.size, size, stop - start, rng)
        if weights is None:
            xm = x[cells].mean(axis=2)
            ym = y[cells].mean(axis=2)
        else:
            w = weights[cells]
            total = w.sum(axis=2)
            xm = (w * x[cells]).sum(axis=2) / total
            ym = (w * y[cells]).sum(axis=2) / total
        out[start:stop] = row_pearson(xm, ym)
    return out
