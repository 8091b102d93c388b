"""Fast exact kernels for resampled level correlations.

The generic path of every resampling procedure materializes the resampled matrices of a batch,
``(b, N, M)``, and calls :func:`metaeval.stats.correlations.levels.level_correlation` on them. The kernels here compute
*the same numbers* (to rounding, 1e-12 in the tests) without materializing the resamples, by exploiting
how the statistics depend on the draws:

* **System level.** System means are linear in the permutation mask and in the bootstrap column weights:
  ``xbar'_a = xbar_a + (1/M) sum_b m_ab (Y_ab - X_ab)`` and ``xbar*_a = (1/M) sum_b c_b X_ab``. Kendall
  tau-b of the ``(k, N)`` resampled means comes from int8 signs of the ``N (N - 1) / 2`` pairs, read off
  tie ranks (:func:`row_ranks`); under the bootstrap the pairs are those of the distinct systems,
  weighted by ``w_a w_b`` with the system multiplicities ``w`` (copies of one system are tied pairs, as
  in the resampled vector). Pearson uses the coefficients' formula on the means gathered by the
  bootstrap row indices (duplicated systems are extra points).
* **PERM-BOTH and byte tables.** PERM-BOTH draws one random byte per 8 cells
  (:class:`metaeval.stats.resampling.draws.PermutationDraws`). A statistic linear in the mask,
  ``sum_ab m_ab C_ab``, is then a sum of table entries: ``T[v, g, a] = sum_{t in v} C[a, 8 g + t]`` is
  precomputed for the 256 byte values ``v``, and each resample gathers ``ceil(M / 8) N`` entries instead of
  multiplying ``N M`` bits. This gives the permuted system means and, when the metrics have no ties, the
  whole summary-level Kendall difference ``tau(X') - tau(Y')``, which is then linear in the mask.
* **Summary level, Kendall tau-b, permutations.** For one input with swap bits ``m`` (one per system),
  the sign of ``X'_a - X'_b`` is bilinear in ``(m_a, m_b)`` over the four sign matrices ``sgn(X_a - X_b)``,
  ``sgn(Y_a - X_b)``, ``sgn(X_a - Y_b)``, ``sgn(Y_a - Y_b)``; the tau-b numerator ``sum_{a<b} s'_ab t_ab``
  (``t`` the human's signs) and the number of tied pairs are therefore quadratic forms
  ``c + l.m + m^T Q m / 2`` with integer coefficients precomputed once per pair (int8 sign tensors from
  the tie ranks of each input). Since ``Y' = X'`` under ``1 - m``, the forms of ``Y'`` share ``Q``. When
  no tie is possible the denominators are constant and the difference of the two coefficients is linear
  in ``m`` (byte tables under PERM-BOTH); otherwise the forms are evaluated with float32 matrix
  products, exact here because every operand and partial sum is a small integer.
* **Summary level, Kendall tau-b, bootstrap.** With system multiplicities ``w`` the numerator of input
  ``j`` is ``sum_{a<b} w_a w_b S_jab T_jab`` and its tied pairs ``sum_a C(w_a, 2) + sum_{a<b tied} w_a w_b``:
  one float32 product ``(w_a w_b) (b, P) @ (P, M + ...)``, exact on these integers.
* **Summary level, Pearson.** Sums of ``X'``, ``X'^2`` and ``X' z`` are linear in the mask; under the
  bootstrap the weighted moments are linear in ``w``: one matrix product gives every numerator and
  denominator.
* **Inputs-only resampling at summary level** (any coefficient): the per-input correlations are computed
  once; PERM-INPUTS selects ``r(X_b)`` or ``r(Y_b)`` per input, BOOT-INPUTS takes count-weighted means.
* **Point estimates.** :func:`point_correlations` equals :func:`metaeval.stats.correlations.levels.level_correlation`
  bitwise on 2-D data; for complete data, Pearson and Kendall tau-b at the system and summary levels, it
  evaluates every metric at once and counts Kendall's pairs with one comparison of the dense ranks.

Summation order: floating-point sums run in a fixed order per resample (sequential loops, ``einsum``,
or reductions along a contiguous last axis), never BLAS ``matmul`` on non-integers, whose blocking depends
on the batch shape: results are bitwise identical for any ``batch``. Weighted sums of real scores with
integer weights (bootstrap counts, PERM-INPUTS bits) do go through BLAS, exactly: the scores are split into
fixed-point parts whose weighted sums are exact in float64 (:class:`ExactWeightedSums`), so the sums are
the same for any order, batch size or BLAS.

Ties: signs and tied pairs come from the tie groups of :mod:`metaeval.stats.correlations.ties` (sorted neighbours of a
vector ``v`` closer than ``tol(v) = max(rtol * (max v - min v), 2^-46 max|v|)``, each row with its own
tolerance; :func:`tie_ranks`), so the kernels count the generic path's pairs. The summary-level
permutation kernel ranks ``X`` and ``Y`` of an input together, which differs from the groups only when
near-ties chain over more than ``tol``, which real scores never do. Pearson does not rank: every Pearson
kernel tests a resampled vector's constancy with :func:`metaeval.stats.correlations.ties.is_constant`
(``max v - min v <= 2^-46 max|v|``, independent of the tie tolerance), as the generic path does.

Speed: a batch holds about :data:`KERNEL_BATCH_CELLS` float64 cells of temporaries (k = 1000 resamples of
25 x 100 scores are one or two batches); matrix products run with one BLAS thread
(:func:`single_blas_thread`); :func:`allocator_headroom` lets the C allocator reuse freed temporaries.

Which kernel serves a call is decided by the route tables (:mod:`metaeval.stats.kernels.routes`: the all-pairs
matrix; ``ONE_PAIR_ROUTES`` of :mod:`~metaeval.stats.kernels.permutation`, ``BOOTSTRAP_ROUTES`` of
:mod:`~metaeval.stats.kernels.bootstrap`): each route's regime is data (:mod:`metaeval.stats.kernels.regimes`), and
``print(route_table())`` shows them. The rooms: ``kendall/`` (the pair-count coefficients), ``pearson/``,
``many_inputs/``, each compiled loop ``X_compiled.py`` beside its numpy twin; ``compiler/`` is the one home of numba.

Kernels require complete data (no NaN) in the arrays they read; otherwise no route applies and
the caller uses the generic path, which stays the reference. By-system level is the summary level of the
transposed matrices (with "systems" and "inputs" exchanged).

References
----------
Deutsch, D., Dror, R. and Roth, D. (2021). A Statistical Analysis of Summarization Evaluation Metrics
using Resampling Methods. Transactions of the ACL 9, 1132-1146.
"""
from metaeval.stats._runtime import allocator_headroom, single_blas_thread
from metaeval.stats.kernels.batch import KERNEL_BATCH_CELLS, BatchCache
from metaeval.stats.kernels.bootstrap import bootstrap_kernel
from metaeval.stats.kernels.exact_sums import ExactWeightedSums, byte_tables, table_sums
from metaeval.stats.kernels.permutation import PearsonSummaryShared, permutation_kernel
from metaeval.stats.kernels.point import point_correlation, point_correlations
from metaeval.stats.kernels.ranks import (
    fixed_pair_signs,
    pair_signs,
    tie_ranks,
    upper_pairs,
)
from metaeval.stats.kernels.rows import (
    PAIRWISE_SYSTEMS_MAX,
    fixed_pearson,
    kendall_b_rows,
    pearson_rows,
    system_correlation,
)

__all__ = [
    "KERNEL_BATCH_CELLS",
    "PAIRWISE_SYSTEMS_MAX",
    "BatchCache",
    "ExactWeightedSums",
    "PearsonSummaryShared",
    "allocator_headroom",
    "bootstrap_kernel",
    "byte_tables",
    "fixed_pair_signs",
    "fixed_pearson",
    "kendall_b_rows",
    "pair_signs",
    "pearson_rows",
    "permutation_kernel",
    "point_correlation",
    "point_correlations",
    "single_blas_thread",
    "system_correlation",
    "table_sums",
    "tie_ranks",
    "upper_pairs",
]
