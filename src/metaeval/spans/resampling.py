"""Resampling per-cell sufficient counts: bootstrap intervals and paired permutation tests for many detectors.

Every span or binary measure is a function of channel sums ``S[d, c] = sum_cells C[d, c, a, b]`` over the
(system a, segment b) cells (and of the number of cells). The resampling therefore never touches spans:

Bootstrap (BOOT-SYSTEMS / INPUTS / BOTH, the draws of :func:`metaeval.stats.resampling.draws.bootstrap_draws`,
shared by every detector): a resample with system multiplicities ``u_a`` and segment multiplicities ``v_b``
has sums ``S*[d, c] = sum_a u_a sum_b v_b C[d, c, a, b]`` - one matrix product per batch of resamples.

Paired permutation test of detectors i and j (PERM-SYSTEMS / INPUTS / BOTH masks of
:func:`metaeval.stats.resampling.draws.permutation_draws`, shared by every pair): swapping the two detectors'
cells under a mask ``m`` gives ``S'_i = S_i + M_j - M_i`` and ``S'_j = S_j + M_i - M_j`` with
``M_d = sum_cells m C_d``, so one product ``mask @ C`` serves every pair (linear in the detectors). The
statistic is ``delta = F(S_i) - F(S_j)``, the p-value ``(1 + #{|delta'| >= |delta|}) / (1 + k)`` (two-sided;
``>=`` with the relative tolerance of :func:`metaeval.stats.significance.permutation.count_extreme`).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..stats.resampling.bootstrap import percentile_interval
from ..stats.resampling.draws import BootstrapDraws, PermutationDraws, batch_slices
from ..stats.significance.permutation import monte_carlo_pvalue

__all__ = ["bootstrap_statistics", "permutation_pvalues", "intervals"]

#: Float cells per batch of resamples (bounds the memory of one product to about 64 MB).
BATCH_CELLS = 8_000_000


def bootstrap_statistics(channels: np.ndarray, present: np.ndarray, draws: BootstrapDraws,
                         finish: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """``finish(S*, n*)`` for every resample of ``draws``.

    Parameters
    ----------
    channels : ndarray (D, K, N, M)
        Per-cell channels of D detectors (0 on cells not rated).
    present : ndarray (N, M) of bool
        The rated cells.
    finish : callable
        ``(sums (k, D, K), n_cells (k,)) -> (k, D, Q)`` statistics.

    Returns
    -------
    ndarray (k, D, Q)
    """
    d, kc, n, m = channels.shape
    flat = np.concatenate([channels.reshape(d * kc, n, m), present[None].astype(np.float64)]).reshape(-1, m)
    per = (d * kc + 1) * n
    batch = max(1, BATCH_CELLS // max(per, m))
    out = []
    for sl in batch_slices(draws.n_resamples, batch):
        wc = draws.col_weights(sl).astype(np.float64)          # (kb, M)
        wr = draws.row_weights(sl).astype(np.float64)          # (kb, N)
        t = (flat @ wc.T).reshape(d * kc + 1, n, -1)           # (P, N, kb)
        sums = np.einsum("pnk,kn->kp", t, wr)                  # (kb, P)
        out.append(finish(sums[:, :-1].reshape(-1, d, kc), sums[:, -1]))
    return np.concatenate(out)


def intervals(samples: np.ndarray, confidence_level: float) -> np.ndarray:
    """Percentile intervals ``(D, Q, 2)`` of bootstrap statistics ``(k, D, Q)``."""
    k, d, q = samples.shape
    out = np.empty((d, q, 2))
    for i in range(d):
        for j in range(q):
            out[i, j] = percentile_interval(samples[:, i, j], confidence_level)
    return out


def permutation_pvalues(channels: np.ndarray, present: np.ndarray, draws: PermutationDraws,
                        finish: Callable[[np.ndarray, np.ndarray], np.ndarray], *, column: int = -1,
                        pairs=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Paired permutation tests of every pair of detectors on statistic ``finish(...)[..., column]``.

    Returns
    -------
    delta : ndarray (D, D)
        ``F_i - F_j`` on the data.
    two_sided : ndarray (D, D)
        p-value of ``H0: F_i = F_j`` (symmetric; NaN on the diagonal).
    greater : ndarray (D, D)
        p-value of ``H1: F_i > F_j`` (the input of significance clusters).
    """
    d, kc, n, m = channels.shape
    flat = channels.reshape(d * kc, n * m).T                   # (NM, P)
    total = flat.sum(axis=0).reshape(d, kc)
    n_cells = float(present.sum())
    observed = finish(total[None], np.array([n_cells]))[0, :, column]
    if pairs is None:
        pairs = [(i, j) for i in range(d) for j in range(i + 1, d)]
    batch = max(1, BATCH_CELLS // max(1, n * m))
    nulls = {p: [] for p in pairs}
    for sl in batch_slices(draws.n_resamples, batch):
        mask = draws.mask(sl).reshape(-1, n * m).astype(np.float64)
        moved = (mask @ flat).reshape(-1, d, kc)              # M_d per resample
        kb = moved.shape[0]
        for i, j in pairs:
            si = total[i] + moved[:, j] - moved[:, i]
            sj = total[j] + moved[:, i] - moved[:, j]
            both = finish(np.stack([si, sj], axis=1), np.full(kb, n_cells))[..., column]
            nulls[(i, j)].append(both[:, 0] - both[:, 1])
    delta = observed[:, None] - observed[None, :]
    two = np.full((d, d), np.nan)
    greater = np.full((d, d), np.nan)
    for (i, j), parts in nulls.items():
        null = np.concatenate(parts)
        obs = float(delta[i, j])
        two[i, j] = two[j, i] = monte_carlo_pvalue(null, obs, "two-sided")
        greater[i, j] = monte_carlo_pvalue(null, obs, "greater")
        greater[j, i] = monte_carlo_pvalue(-null, -obs, "greater")
    return delta, two, greater
