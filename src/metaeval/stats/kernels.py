"""Fast exact kernels for resampled level correlations.

The generic path of every resampling procedure materializes the resampled matrices of a batch,
``(b, N, M)``, and calls :func:`metaeval.stats.levels.level_correlation` on them. The kernels here compute
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
  (:class:`metaeval.stats.resampling.PermutationDraws`). A statistic linear in the mask,
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
* **Point estimates.** :func:`point_correlations` equals :func:`metaeval.stats.levels.level_correlation`
  bitwise on 2-D data; for complete data, Pearson and Kendall tau-b at the system and summary levels, it
  evaluates every metric at once and counts Kendall's pairs with one comparison of the dense ranks.

Summation order: floating-point sums run in a fixed order per resample (sequential loops, ``einsum``,
or reductions along a contiguous last axis), never BLAS ``matmul`` on non-integers, whose blocking depends
on the batch shape: results are bitwise identical for any ``batch``. Weighted sums of real scores with
integer weights (bootstrap counts, PERM-INPUTS bits) do go through BLAS, exactly: the scores are split into
fixed-point parts whose weighted sums are exact in float64 (:class:`ExactWeightedSums`), so the sums are
the same for any order, batch size or BLAS.

Ties: signs and tied pairs come from the tie groups of :mod:`metaeval.stats.coefficients` (sorted
neighbours closer than ``TIE_RTOL`` times the larger magnitude; :func:`tie_ranks`), so the kernels count
the generic path's pairs. The summary-level permutation kernel ranks ``X`` and ``Y`` of an input together
and the summary-level Pearson kernels test constancy with the pairwise rule
``|a - b| <= TIE_RTOL * max(|a|, |b|)``; these differ from the groups only when near-ties chain over more
than ``TIE_RTOL``, which real scores never do.

Speed: a batch holds about :data:`KERNEL_BATCH_CELLS` float64 cells of temporaries (k = 1000 resamples of
25 x 100 scores are one or two batches); matrix products run with one BLAS thread
(:func:`single_blas_thread`); :func:`allocator_headroom` lets the C allocator reuse freed temporaries.

Kernels require complete data (no NaN) in the arrays they read; otherwise the factories return None and
the caller uses the generic path, which stays the reference. By-system level is the summary level of the
transposed matrices (with "systems" and "inputs" exchanged).

References
----------
Deutsch, D., Dror, R. and Roth, D. (2021). A Statistical Analysis of Summarization Evaluation Metrics
using Resampling Methods. Transactions of the ACL 9, 1132-1146.
"""
from __future__ import annotations

import ctypes
import threading
from contextlib import contextmanager

import numpy as np

from metaeval.stats import coefficients as _coef
from metaeval.stats import levels as _levels
from metaeval.stats.resampling import BootstrapDraws, PermutationDraws

__all__ = [
    "pair_signs",
    "tie_ranks",
    "kendall_b_rows",
    "permutation_kernel",
    "bootstrap_kernel",
    "point_correlation",
    "point_correlations",
    "BatchCache",
    "ExactWeightedSums",
    "KERNEL_BATCH_CELLS",
    "single_blas_thread",
]


# ----------------------------------------------------------------------------------------------------
# helpers shared with the generic coefficients


def pair_signs(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``sgn(u_a - v_b)`` as int8 of shape ``(..., n, n)``; 0 for ties.

    Ties follow :mod:`metaeval.stats.coefficients`: ``|u_a - v_b| <= TIE_RTOL * max(|u_a|, |v_b|)``.
    """
    ua = u[..., :, None]
    vb = v[..., None, :]
    d = ua - vb
    tie = np.abs(d) <= _coef.TIE_RTOL * np.maximum(np.abs(ua), np.abs(vb))
    return np.where(tie, 0, np.sign(d)).astype(np.int8)


def _ties(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise tie test of :func:`pair_signs`."""
    return np.abs(a - b) <= _coef.TIE_RTOL * np.maximum(np.abs(a), np.abs(b))


def _is_constant(values: np.ndarray, axis: int = -1) -> np.ndarray:
    """Where ``values`` is constant along ``axis``: every value ties with the maximum."""
    vmax = np.max(values, axis=axis, keepdims=True)
    return _ties(values, vmax).all(axis=axis)


def _aggregate(stat: np.ndarray, undefined: str) -> np.ndarray:
    """Mean over the last axis of per-input statistics, ``undefined`` as in ``level_correlation``."""
    stat = np.ascontiguousarray(stat)  # the summation order of a strided reduction depends on the shape
    ok = ~np.isnan(stat)
    total = np.where(ok, stat, 0.0).sum(axis=-1)
    if undefined == "skip":
        n = ok.sum(axis=-1)
    else:
        n = np.full(total.shape, stat.shape[-1])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, total / np.maximum(n, 1), np.nan)


def _weighted_aggregate(stat: np.ndarray, weights: np.ndarray, undefined: str) -> np.ndarray:
    """Count-weighted mean of per-input statistics ``stat`` (b, M) with multiplicities ``weights`` (b, M)."""
    stat = np.ascontiguousarray(stat)
    ok = ~np.isnan(stat)
    total = (np.where(ok, stat, 0.0) * weights).sum(axis=-1)
    n = (weights * ok).sum(axis=-1) if undefined == "skip" else weights.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, total / np.maximum(n, 1), np.nan)


def _tau_b(num: np.ndarray, n0: float, tx: np.ndarray, tz: np.ndarray) -> np.ndarray:
    """tau-b from the numerator (concordant - discordant) and the numbers of pairs tied in x and in z."""
    dx = n0 - tx
    dz = n0 - tz
    ok = (dx > 0) & (dz > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ok, num / np.sqrt(np.where(ok, dx * dz, 1.0)), np.nan)


#: Up to this many systems the system-level Kendall tau-b of resampled means uses the pairwise sign kernel.
PAIRWISE_SYSTEMS_MAX = 64

_PAIR_INDEX: dict = {}


def upper_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Index arrays ``(first, second)`` of the ``n (n - 1) / 2`` pairs ``first < second``."""
    if n not in _PAIR_INDEX:
        first, second = np.triu_indices(n, 1)
        _PAIR_INDEX[n] = (first.astype(np.intp), second.astype(np.intp))
    return _PAIR_INDEX[n]


_INDEX_CACHE: dict = {}


def _index(key, make):
    """Small read-only index arrays (``arange``-like), built once per shape (at most 256 kept)."""
    if key not in _INDEX_CACHE:
        if len(_INDEX_CACHE) >= 256:
            _INDEX_CACHE.clear()
        value = make()
        value.setflags(write=False)
        _INDEX_CACHE[key] = value
    return _INDEX_CACHE[key]


def _rank_dtype(n: int):
    return np.int8 if n <= 127 else np.int16


def _sorted_rows(v: np.ndarray):
    """Flat indices ``(b, n)`` of every row of ``v`` (C-contiguous) in sorted order, and the sorted rows."""
    b, n = v.shape
    flat = v.argsort(axis=1)
    flat += _index(("row-offsets", b, n), lambda: np.arange(0, b * n, n)[:, None])
    return flat, v.reshape(-1).take(flat)


def tie_ranks(v: np.ndarray):
    """Dense ranks of the tie groups of every row of complete ``v`` (b, n), int8 for n <= 127, and the
    number of tied pairs per row.

    The groups are those of :mod:`metaeval.stats.coefficients`: sorted neighbours start a new group
    where ``srt[i] - srt[i-1] > TIE_RTOL * max(|srt[i]|, |srt[i-1]|)``, so rank comparisons give exactly
    the pair signs and tie counts of the generic path.
    """
    b, n = v.shape
    flat, srt = _sorted_rows(np.ascontiguousarray(v))
    ranks = np.empty(b * n, dtype=_rank_dtype(n))
    tied = _group_ranks(srt, flat, ranks)
    return ranks.reshape(b, n), tied


def _group_ranks(srt: np.ndarray, flat: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Write the dense tie-group ranks of sorted rows ``srt`` (b, n) to ``out.flat[flat]``; return the
    number of tied pairs per row (the rule of :func:`tie_ranks`)."""
    b, n = srt.shape
    mag = np.abs(srt)
    new = np.empty((b, n), dtype=bool)
    new[:, 0] = True
    np.greater(srt[:, 1:] - srt[:, :-1], _coef.TIE_RTOL * np.maximum(mag[:, 1:], mag[:, :-1]), out=new[:, 1:])
    pos = _index(("positions", n), lambda: np.arange(n))
    out[flat] = np.add.accumulate(new, axis=1, dtype=out.dtype) - 1
    return np.add.reduce(pos - np.maximum.accumulate(np.where(new, pos, 0), axis=1), axis=1)


def rank_pair_signs(ranks: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """``sgn(r[s, first[p]] - r[s, second[p]])`` as int8 ``(P, b)`` for ranks ``(b, n)`` of :func:`tie_ranks`."""
    rt = ranks.T.copy()
    d = rt[first] - rt[second]
    return np.sign(d, out=d).astype(np.int8, copy=False)


def row_ranks(v: np.ndarray):
    """:func:`tie_ranks` of the rows of complete ``v`` (b, n), computed in full only where a tie is possible.

    A row whose sorted neighbours are all further apart than ``TIE_RTOL`` times its largest magnitude
    has no tie: its ranks are the inverse of the sorting permutation. Returns the ranks, the indices of
    the other rows and their numbers of tied pairs.
    """
    b, n = v.shape
    v = np.ascontiguousarray(v)
    flat, srt = _sorted_rows(v)
    bound = _coef.TIE_RTOL * np.maximum(np.abs(srt[:, 0]), np.abs(srt[:, -1]))  # largest |v| of each row
    near = np.flatnonzero(np.logical_or.reduce(srt[:, 1:] - srt[:, :-1] <= bound[:, None], axis=1))
    dtype = _rank_dtype(n)
    ranks = np.empty(b * n, dtype=dtype)
    ranks[flat] = _index(("positions", n, dtype), lambda: np.arange(n, dtype=dtype))
    tied = np.zeros(0, dtype=np.int64)
    if near.size:  # the exact tie groups of these rows, from the same sorting
        tied = _group_ranks(srt[near], flat[near], ranks)
    return ranks.reshape(b, n), near, tied


def row_pair_signs(v: np.ndarray):
    """Signs of the pairs ``a < b`` of every row of ``v`` (b, n): int8 ``(P, b)`` (tie groups of
    :func:`tie_ranks`), the rows that may have ties and their numbers of tied pairs (see :func:`row_ranks`)."""
    first, second = upper_pairs(v.shape[1])
    ranks, near, tied = row_ranks(v)
    return rank_pair_signs(ranks, first, second), near, tied


def kendall_b_rows(xm: np.ndarray, zm: np.ndarray, z_signs=None) -> np.ndarray:
    """Kendall tau-b of every row of ``xm`` (b, n) with ``zm`` ((b, n), or (n,) for one fixed vector).

    Exact integer pair counts over the tie groups of :mod:`metaeval.stats.coefficients` (see
    :func:`row_ranks`): the numbers of :func:`coefficients.correlation`. ``z_signs`` may pass
    :func:`fixed_pair_signs` of a fixed ``zm`` computed once.
    """
    b, n = xm.shape
    sx, near, tied = row_pair_signs(xm)
    tx = np.zeros(b, dtype=np.int64)
    tx[near] = tied
    if z_signs is None and zm.ndim == 1:
        z_signs = fixed_pair_signs(zm)
    if z_signs is not None:
        sz, tz = z_signs
    else:
        sz, near, tied = row_pair_signs(zm)
        tz = np.zeros(b, dtype=np.int64)
        tz[near] = tied
    num = np.add.reduce(sx * sz, axis=0, dtype=np.int32)
    return _tau_b(num, n * (n - 1) / 2.0, tx, tz)


def kendall_b_weighted(xm: np.ndarray, zm: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Kendall tau-b of bootstrap resamples given as system multiplicities: row ``s`` holds ``w[s, a]``
    copies of system ``a`` with scores ``xm[s, a]`` and ``zm[s, a]`` (b, n each).

    With ``ww = w_a w_b`` over the pairs ``a < b`` of distinct systems, the numerator is
    ``sum ww S_x S_z``. The pairs tied in x are ``(sum_g W_g^2 - n) / 2`` over the tie groups ``g`` of the
    distinct systems, ``W_g`` the number of resampled systems in the group (copies of one system are
    tied; without ties in x this is ``sum_a C(w_a, 2)``): the counts of the resampled vectors.
    """
    b, n = xm.shape
    first, second = upper_pairs(n)
    ranks, near, _ = row_ranks(np.concatenate([xm, zm]))  # x and z ranked in one pass
    signs = rank_pair_signs(ranks, first, second)  # (P, 2b)
    wt = w.T.astype(np.int8 if w.max() <= 11 else np.int16)  # products ww S_x S_z fit the type
    prod = np.multiply(signs[:, :b], signs[:, b:], dtype=wt.dtype)
    prod *= wt[first]
    prod *= wt[second]
    num = np.add.reduce(prod, axis=0, dtype=np.int32)
    base = (np.add.reduce(w * w, axis=1) - n) / 2.0  # pairs of copies of one system
    ties = np.concatenate([base, base])
    if near.size:  # (sum over tie groups of W_g^2 - n) / 2
        groups = (np.arange(near.size)[:, None] * n + ranks[near]).ravel()
        wg = np.bincount(groups, weights=w[near % b].ravel(), minlength=near.size * n)
        ties[near] = (np.add.reduce((wg * wg).reshape(near.size, n), axis=1) - n) / 2.0
    return _tau_b(num, n * (n - 1) / 2.0, ties[:b], ties[b:])


def fixed_pair_signs(zm: np.ndarray):
    """Pair signs ``(P, 1)`` and tied pairs of one vector ``zm`` (n,), for :func:`kendall_b_rows`."""
    first, second = upper_pairs(zm.shape[0])
    rz, tz = tie_ranks(zm[None])
    return rank_pair_signs(rz, first, second), tz


def system_correlation(xm: np.ndarray, zm: np.ndarray, coefficient: str, tie_threshold: float,
                       z_signs=None, z_fixed=None) -> np.ndarray:
    """Correlation of each row of resampled system scores ``xm`` (b, N) with ``zm`` ((b, N) or (N,)).

    Kendall tau-b for small N from pair signs (:func:`kendall_b_rows`), Pearson with the formula of
    :mod:`metaeval.stats.coefficients` without its checks for missing values, everything else through
    :func:`coefficients.correlation_rows`.
    """
    n = xm.shape[-1]
    if coefficient == "kendall-b" and not tie_threshold and n <= PAIRWISE_SYSTEMS_MAX:
        return kendall_b_rows(xm, zm, z_signs)
    if coefficient == "pearson" and n >= 2:
        return pearson_rows(xm, zm, z_fixed)
    zb = np.broadcast_to(zm, xm.shape)
    return _coef.correlation_rows(np.ascontiguousarray(xm), np.ascontiguousarray(zb), coefficient, tie_threshold)


def pearson_rows(xm: np.ndarray, zm: np.ndarray, z_fixed=None) -> np.ndarray:
    """Pearson's r of every row of complete ``xm`` (b, n) with ``zm`` ((b, n) or (n,)), n >= 2.

    ``sum(dx dz) / (sqrt(sum dx^2) sqrt(sum dz^2))`` with every sum along a contiguous row (the same
    summation for any batch), NaN where ``xm`` or ``zm`` is constant (a single tie group). ``z_fixed``
    may pass :func:`fixed_pearson` of a fixed ``zm`` computed once.
    """
    b, n = xm.shape
    xm = np.ascontiguousarray(xm)
    dx = xm - np.add.reduce(xm, axis=1, keepdims=True) / n
    const = _coef._is_constant(xm, None, _index(("full", b, n), lambda: np.full(b, n)))
    if zm.ndim == 1:
        dz, den, z_const = fixed_pearson(zm) if z_fixed is None else z_fixed
        if z_const:
            const[:] = True
    else:
        zm = np.ascontiguousarray(zm)
        dz = zm - np.add.reduce(zm, axis=1, keepdims=True) / n
        const |= _coef._is_constant(zm, None, _index(("full", b, n), lambda: np.full(b, n)))
        den = np.sqrt(np.add.reduce(dz * dz, axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.add.reduce(dx * dz, axis=1) / (np.sqrt(np.add.reduce(dx * dx, axis=1)) * den)
    np.clip(r, -1.0, 1.0, out=r)
    r[const] = np.nan
    return r


def fixed_pearson(zm: np.ndarray):
    """``(zm - mean, sqrt(sum of squares), constant)`` of one vector, for :func:`pearson_rows`."""
    n = zm.shape[0]
    dz = zm - np.add.reduce(zm) / n
    return dz, np.sqrt(np.add.reduce(dz * dz)), bool(_coef._is_constant(zm[None], None, np.array([n]))[0])


def _linear_sums(bits: np.ndarray, lin_t: np.ndarray) -> np.ndarray:
    """``sum_a m[j, s, a] * lin_t[j, a, k]`` -> (b, M, K) for input-major cell masks ``bits`` (M, b, N).

    One two-operand ``einsum`` per component: a fixed summation order (batch-size invariant) and, unlike
    a three-index ``einsum``, fast.
    """
    return np.stack([np.einsum("jbn,jn->bj", bits, np.ascontiguousarray(lin_t[..., k]))
                     for k in range(lin_t.shape[-1])], axis=-1)


def _complete(*arrays: np.ndarray) -> bool:
    return all(bool(np.isfinite(a).all()) for a in arrays)


#: Target size of the temporaries of one kernel batch, in float64 cells (8 MiB): large enough that k = 1000
#: resamples of 25 x 100 scores are one or two batches (each batch costs tens of numpy calls), small enough
#: for the allocator to reuse the memory (see :func:`allocator_headroom`; fresh multi-megabyte arrays cost
#: a page fault per 4 KiB: two live 2.4 MB temporaries measured 2.4 ms, the same arithmetic 0.12 ms).
KERNEL_BATCH_CELLS = 1 << 20

_BLAS_SYMBOLS = (("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
                 ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
                 ("openblas_set_num_threads", "openblas_get_num_threads"))
_blas_state = {"controls": None, "depth": 0, "previous": []}
_blas_lock = threading.Lock()


def _openblas_controls():
    """(setter, getter) of the thread count of every loaded OpenBLAS (empty if none is found)."""
    if _blas_state["controls"] is None:
        controls = []
        try:
            with open("/proc/self/maps", encoding="utf-8") as handle:
                paths = sorted({line.split()[-1] for line in handle if "openblas" in line.split()[-1].lower()})
        except OSError:
            paths = []
        for path in paths:
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for setter, getter in _BLAS_SYMBOLS:
                if hasattr(lib, setter) and hasattr(lib, getter):
                    controls.append((getattr(lib, setter), getattr(lib, getter)))
                    break
        _blas_state["controls"] = controls
    return _blas_state["controls"]


_ALLOCATOR_HEADROOM = {"done": False, "bytes": 16 << 20}


def allocator_headroom() -> None:
    """Let the C allocator keep the kernels' freed temporaries for reuse (best effort, once per process).

    glibc maps blocks above a threshold (128 KiB, raised to the largest mapped block freed so far, at
    most 32 MiB) directly from the system and returns freed heap memory beyond twice that threshold, so
    in a fresh process the multi-megabyte draws and temporaries of every call are first-touched again:
    a page fault per 4 KiB, measured at about 1 ms per bootstrap call. Allocating and freeing one
    untouched 16 MiB block, as any larger numpy array would, raises the thresholds to 16 and 32 MiB.
    Nothing is written, so no memory is used; with other allocators it does nothing.
    """
    if not _ALLOCATOR_HEADROOM["done"]:
        _ALLOCATOR_HEADROOM["done"] = True
        if _ALLOCATOR_HEADROOM["bytes"]:
            np.empty(_ALLOCATOR_HEADROOM["bytes"], dtype=np.uint8)


@contextmanager
def single_blas_thread():
    """Run the body with OpenBLAS limited to one thread (best effort; no-op without OpenBLAS).

    The kernels' matrix products are small; with one BLAS thread per core their worker threads spin and
    wait for cores on a loaded machine (PITFALLS, "Resampling"): a (1000 x 300) @ (300 x 200) float32
    product measured 8-20 ms with 2 threads and 1.2 ms with one on the 2-core development machine. The
    previous setting is restored when the outermost such block exits (nested and concurrent blocks are
    counted). The products are exact, so the thread count never changes a result.
    """
    allocator_headroom()
    with _blas_lock:
        if _blas_state["depth"] == 0:
            controls = _openblas_controls()
            _blas_state["previous"] = [int(getter()) for _, getter in controls]
            for setter, _ in controls:
                setter(1)
        _blas_state["depth"] += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_state["depth"] -= 1
            if _blas_state["depth"] == 0:
                for (setter, _), n in zip(_openblas_controls(), _blas_state["previous"]):
                    setter(n)


class ExactWeightedSums:
    """``sum_j w[s, j] V[a, j]`` for non-negative integer weights ``w`` with ``sum_j w[s, j] <= max_total``.

    ``V`` (N, M) is split once into fixed-point parts ``V = P_1 + P_2 + ...``: ``P_r`` is a multiple of a
    power of two ``u_r`` with ``|P_r| <= 2^B u_r``, ``B = 53 - bitlength(max_total)``, so every product
    and partial sum of ``w P_r`` is an integer multiple of ``u_r`` below ``2^53 u_r``: exact in float64
    whatever the order. The weighted sums therefore come from one BLAS product and do not depend on the
    batch size or the BLAS; the parts are added from the smallest. Up to 4 parts are kept (values below
    ``2^-180 max |V|`` are dropped, a relative error far below rounding).
    """

    MAX_PARTS = 4

    def __init__(self, values: np.ndarray, max_total: int):
        values = np.asarray(values, dtype=np.float64)
        self.n = values.shape[0]
        bits = 53 - int(max_total).bit_length()
        vmax = float(np.abs(values).max()) if values.size else 0.0
        parts = []
        if vmax > 0:
            unit = np.ldexp(1.0, int(np.frexp(vmax)[1]) - bits)
            rest = values
            for _ in range(self.MAX_PARTS):
                part = np.round(rest / unit) * unit
                parts.append(part)
                rest = rest - part
                if not rest.any():
                    break
                unit = np.ldexp(unit, -bits)
        else:
            parts.append(np.zeros_like(values))
        self.n_parts = len(parts)
        self.rhs = np.ascontiguousarray(np.concatenate(parts, axis=0).T)  # (M, parts * N)

    def __call__(self, weights: np.ndarray) -> np.ndarray:
        """Weighted sums ``(b, N)`` for integer weights ``(b, M)``."""
        out = np.matmul(weights.astype(np.float64), self.rhs).reshape(weights.shape[0], self.n_parts, self.n)
        total = out[:, -1]
        for r in range(self.n_parts - 2, -1, -1):
            total = out[:, r] + total
        return total


def byte_tables(coef: np.ndarray) -> np.ndarray:
    """``T[g, a, v] = sum_{t: bit t of v} coef[a, 8 g + t]`` for ``coef`` (N, M): float64 (ceil(M/8), N, 256).

    Each entry is summed in increasing bit order (a fixed order); cells beyond ``M`` count 0. The 256
    entries of one (group, system) are contiguous: a batch's lookups for one system stay in 2 KiB.
    """
    n, m = coef.shape
    g = -(-m // 8)
    padded = np.zeros((8 * g, n))
    padded[:m] = coef.T
    bits = padded.reshape(g, 8, n)
    table = np.empty((256, g, n))
    table[0] = 0.0
    for t in range(8):
        np.add(table[: 1 << t], bits[:, t], out=table[1 << t : 2 << t])
    return np.ascontiguousarray(table.transpose(1, 2, 0))


def table_sums(tables: np.ndarray, packed: np.ndarray) -> np.ndarray:
    """``sum_g T[g, a, packed[g, a, s]]`` -> (N, b) for PERM-BOTH bytes ``packed`` (G, N, b).

    The groups ``g`` are added in order (a fixed order per resample, whatever the batch).
    """
    g, n, _ = packed.shape
    offsets = _index(("table-offsets", n), lambda: np.arange(0, 256 * n, 256)[:, None])
    total = tables[0].reshape(-1).take(packed[0] + offsets)
    for i in range(1, g):
        total += tables[i].reshape(-1).take(packed[i] + offsets)
    return total


class BatchCache:
    """Per-batch transformations of the draws, computed once and shared by every metric pair."""

    def __init__(self, draws, sl: slice):
        self.draws = draws
        self.sl = sl
        self._store: dict = {}

    def get(self, key, make):
        if key not in self._store:
            self._store[key] = make()
        return self._store[key]

    # permutation masks ------------------------------------------------------------------------------
    def mask(self) -> np.ndarray:
        return self.get("mask", lambda: self.draws.mask(self.sl))

    def column_bits_f32(self) -> np.ndarray:
        """Cell masks as float32 ``(M, N, b)`` (or ``(1, N, b)`` for PERM-SYSTEMS)."""

        def make():
            if self.draws.method == "systems":
                return np.ascontiguousarray(self.draws.bits[self.sl].T, dtype=np.float32)[None]
            return self.draws.cell_bits(self.sl).astype(np.float32)

        return self.get("bits32", make)

    def input_major_bits(self) -> np.ndarray:
        """PERM-BOTH cell masks as uint8 ``(M, b, N)`` (C-contiguous)."""
        return self.get("bits8", lambda: np.ascontiguousarray(self.draws.cell_bits(self.sl).transpose(0, 2, 1)))

    def packed(self) -> np.ndarray:
        """PERM-BOTH bytes of the batch, ``(G, N, b)`` (see :class:`metaeval.stats.resampling.PermutationDraws`)."""
        return self.draws.packed[:, :, self.sl]

    # bootstrap weights ------------------------------------------------------------------------------
    def row_weights(self) -> np.ndarray:
        return self.get("w", lambda: self.draws.row_weights(self.sl))

    def col_weights(self, human: bool = False) -> np.ndarray:
        return self.get(("c", human), lambda: self.draws.col_weights(self.sl, human=human))

    def pair_weights(self) -> np.ndarray:
        """``w_a w_b`` for the system pairs ``a < b`` of :func:`upper_pairs`: float32 (b, P)."""

        def make():
            w = self.row_weights()
            first, second = upper_pairs(w.shape[1])
            return (w[:, first] * w[:, second]).astype(np.float32)

        return self.get("ww", make)


# ----------------------------------------------------------------------------------------------------
# permutation kernels: deltas(cache) -> r(X', Z) - r(Y', Z), of shape (b,)


class _PermSystemLevel:
    """System level: permuted system means are linear in the mask (complete data).

    ``X'_a = xbar_a + (1/M) sum_b m_ab (Y_ab - X_ab)``: byte tables for PERM-BOTH, exact weighted sums for
    PERM-INPUTS, a selection for PERM-SYSTEMS; then ``Y' = xbar + ybar - X'``.
    """

    def __init__(self, x, y, z, coefficient, tie_threshold, method):
        n, m = x.shape
        # per resample, for X' and Y' together: table gathers, means and ranks (a few N), int8 pair signs
        self.cells = 16 * n + (n * (n - 1) // 2 if coefficient == "kendall-b" else 0)
        self.xbar = x.mean(axis=1)
        self.ybar = y.mean(axis=1)
        self.zbar = z.mean(axis=1)
        self.m = x.shape[1]
        self.coefficient = coefficient
        self.tie_threshold = tie_threshold
        self.z_signs = fixed_pair_signs(self.zbar) if n <= PAIRWISE_SYSTEMS_MAX else None
        self.z_fixed = fixed_pearson(self.zbar) if n >= 2 else None
        if method == "both":
            self.tables = byte_tables(y - x)
        elif method == "inputs":
            self.sums = ExactWeightedSums(y - x, x.shape[1])

    def permuted_means(self, cache: BatchCache):
        draws = cache.draws
        if draws.method == "systems":
            xp = np.where(draws.bits[cache.sl], self.ybar, self.xbar)
        elif draws.method == "inputs":
            xp = self.xbar + self.sums(draws.bits[cache.sl]) / self.m
        else:
            xp = self.xbar + table_sums(self.tables, cache.packed()).T / self.m
        return xp, self.xbar + self.ybar - xp

    def evaluate(self, cache: BatchCache):
        xp, yp = self.permuted_means(cache)
        b = xp.shape[0]
        # X' and Y' together: one evaluation of 2b rows (the rows are independent)
        r = system_correlation(np.concatenate([xp, yp]), self.zbar, self.coefficient, self.tie_threshold,
                               self.z_signs, self.z_fixed)
        return r[:b], r[b:]

    def deltas(self, cache: BatchCache):
        rx, ry = self.evaluate(cache)
        return rx - ry


class _PermSummaryInputs:
    """Summary level under PERM-INPUTS: each input keeps r(X_b, Z_b) or takes r(Y_b, Z_b)."""

    def __init__(self, x, y, z, coefficient, undefined, tie_threshold):
        kw = dict(axis=0, tie_threshold=tie_threshold)
        self.rx = _coef.correlation(x, z, coefficient, **kw)
        self.ry = _coef.correlation(y, z, coefficient, **kw)
        self.undefined = undefined
        self.cells = 8 * x.shape[1]

    def evaluate(self, cache: BatchCache):
        bits = cache.draws.bits[cache.sl]  # (b, M)
        px = np.where(bits, self.ry, self.rx)
        py = np.where(bits, self.rx, self.ry)
        return _aggregate(px, self.undefined), _aggregate(py, self.undefined)

    def deltas(self, cache: BatchCache):
        rx, ry = self.evaluate(cache)
        return rx - ry


def _sign_tensor(ru: np.ndarray, rv: np.ndarray) -> np.ndarray:
    """``sgn(ru[j, a] - rv[j, b])`` as int8 ``(M, N, N)`` for rank arrays ``(M, N)``."""
    d = ru[:, :, None].astype(np.int16) - rv[:, None, :]
    return np.sign(d).astype(np.int8)


class _PermSummaryKendall:
    """Summary-level Kendall tau-b under PERM-SYSTEMS / PERM-BOTH as quadratic forms in the mask bits.

    Signs and ties are those of the tie groups of each input (:func:`tie_ranks`; ``X`` and ``Y`` are
    ranked together, since ``X'`` mixes their values). Without ties in ``X`` and ``Y`` (no two values of
    different systems tie within an input) the denominators are
    constant and ``tau(X'_j) - tau(Y'_j) = (c_j + l_j . m_j) / sqrt(n0 (n0 - t_j))`` is linear in the
    mask: under PERM-BOTH the whole difference of the two summary-level correlations is a byte-table
    sum. Otherwise the numerators and tied pairs are evaluated per input with float32 matrix products
    (exact on these small integers).
    """

    def __init__(self, x, y, z, undefined, method):
        n, m = x.shape
        off = ~np.eye(n, dtype=bool)
        # signs from the tie ranks of each input: X and Y ranked jointly, Z alone (int8 tensors (M, N, N))
        pool, _ = tie_ranks(np.ascontiguousarray(np.concatenate([x, y]).T))
        rx, ry = pool[:, :n], pool[:, n:]
        rz, tz = tie_ranks(np.ascontiguousarray(z.T))
        sxx, syy = _sign_tensor(rx, rx), _sign_tensor(ry, ry)
        sxy = _sign_tensor(rx, ry)  # sgn(X_a - Y_b)
        syx = -sxy.transpose(0, 2, 1)  # sgn(Y_a - X_b)
        t = _sign_tensor(rz, rz)
        self.n0 = n * (n - 1) / 2.0
        self.tz = tz.astype(np.float64)  # pairs tied in Z, per input
        i32 = np.int32
        qn = t * (sxx - syx - sxy + syy)
        c_x = (t * sxx).sum(axis=(1, 2), dtype=i32) / 2.0
        l_x = (t * (syx - sxx)).sum(axis=2, dtype=i32)
        exx = ((sxx == 0) & off).view(np.int8)
        eyy = ((syy == 0) & off).view(np.int8)
        exy = ((sxy == 0) & off).view(np.int8)
        eyx = exy.transpose(0, 2, 1)
        qe = exx - eyx - exy + eyy
        e_x = exx.sum(axis=(1, 2), dtype=i32) / 2.0
        le_x = (eyx - exx).sum(axis=2, dtype=i32)
        # Y' is X' under 1 - m: f(1 - m) = f(1) - (l + Q 1).m + m^T Q m / 2, same Q.
        c_y = c_x + l_x.sum(axis=1) + qn.sum(axis=(1, 2), dtype=i32) / 2.0
        l_y = -(l_x + qn.sum(axis=2, dtype=i32))
        e_y = e_x + le_x.sum(axis=1) + qe.sum(axis=(1, 2), dtype=i32) / 2.0
        le_y = -(le_x + qe.sum(axis=2, dtype=i32))
        self.tie_free = not (qe.any() or le_x.any() or le_y.any() or e_x.any() or e_y.any())
        self.undefined = undefined
        self.n = n
        self.c_x, self.c_y, self.e_x, self.e_y = c_x, c_y, e_x, e_y
        self.tables = None
        if self.tie_free and method == "both":
            # tau_X - tau_Y per input is linear in m (constant denominators): byte tables
            self._linear_delta(l_x - l_y, c_x - c_y, m)
        elif self.tie_free:
            self.qn = qn.astype(np.float32)  # symmetric
            self.w_t = np.ascontiguousarray(np.stack([l_x, l_y], axis=1), dtype=np.float32)  # (M, 2, N)
        else:
            w = np.concatenate([qn, qe, l_x[..., None], le_x[..., None], l_y[..., None], le_y[..., None]],
                               axis=2)  # (M, N, 2N + 4); qn and qe are symmetric
            self.w_t = np.ascontiguousarray(w.transpose(0, 2, 1), dtype=np.float32)  # (M, K, N)
        self.cells = 8 * n if self.tables is not None else m * (3 * n + 12)

    def _linear_delta(self, dl, dc, m):
        """Tie-free PERM-BOTH: ``delta = const + sum_ab m_ab C_ab`` as byte tables (see the class doc)."""
        dz = self.n0 - self.tz
        defined = dz > 0  # dx = n0 > 0 without ties
        n_agg = int(defined.sum()) if self.undefined == "skip" else m
        if not defined.any():  # every input constant for the humans: NaN ("skip") or 0 - 0 ("zero")
            self.const = np.nan if self.undefined == "skip" else 0.0
            self.tables = byte_tables(np.zeros((self.n, m)))
            return
        scale = np.where(defined, 1.0 / (np.sqrt(self.n0 * np.where(defined, dz, 1.0)) * n_agg), 0.0)  # (M,)
        self.const = float((dc * scale).sum())
        self.tables = byte_tables((dl * scale[:, None]).T)

    def per_input(self, cache: BatchCache):
        """tau-b of X' and of Y' per input, each of shape (b, M).

        With the masks ``m`` as float32 ``(M, N, b)``: ``r = W^T m`` and the quadratic terms
        ``m^T Q m`` (``Q`` symmetric), all exact small integers.
        """
        mf = cache.column_bits_f32()  # (M, N, b) or (1, N, b)
        n = self.n
        r = np.matmul(self.w_t, mf)  # (M, K, b)
        mfb = np.broadcast_to(mf, (r.shape[0], n, r.shape[2]))
        if self.tie_free:
            q = np.einsum("jnb,jnb->jb", np.matmul(self.qn, mf), mfb)
            num_x = self.c_x[:, None] + r[:, 0] + q / 2.0
            num_y = self.c_y[:, None] + r[:, 1] + q / 2.0
            tx = ty = np.zeros(1)
        else:
            q = np.einsum("jnb,jnb->jb", r[:, :n], mfb)
            g = np.einsum("jnb,jnb->jb", r[:, n : 2 * n], mfb)
            num_x = self.c_x[:, None] + r[:, 2 * n] + q / 2.0
            tx = self.e_x[:, None] + r[:, 2 * n + 1] + g / 2.0
            num_y = self.c_y[:, None] + r[:, 2 * n + 2] + q / 2.0
            ty = self.e_y[:, None] + r[:, 2 * n + 3] + g / 2.0
        tz = self.tz[:, None]
        return _tau_b(num_x, self.n0, tx, tz).T, _tau_b(num_y, self.n0, ty, tz).T

    def evaluate(self, cache: BatchCache):
        px, py = self.per_input(cache)
        return _aggregate(px, self.undefined), _aggregate(py, self.undefined)

    def deltas(self, cache: BatchCache):
        if self.tables is not None:
            # per resample: groups g in order, then the N systems along a contiguous axis (batch invariant)
            return self.const + np.ascontiguousarray(table_sums(self.tables, cache.packed()).T).sum(axis=1)
        rx, ry = self.evaluate(cache)
        return rx - ry


class _PermSummaryPearson:
    """Summary-level Pearson under PERM-SYSTEMS / PERM-BOTH: every sum is linear in the mask."""

    def __init__(self, x, y, z, undefined):
        n, _ = x.shape
        zc = z - z.mean(axis=0)
        znorm = np.sqrt((zc * zc).sum(axis=0))
        self.z_const = _is_constant(z, axis=0)
        zt = np.where(self.z_const, 0.0, zc / np.where(znorm > 0, znorm, 1.0))
        # centre with the columns' pooled mean to keep the variance formula well conditioned
        centre = (x.mean(axis=0) + y.mean(axis=0)) / 2.0
        xc, yc = x - centre, y - centre
        d = yc - xc
        self.base = np.stack(
            [xc.sum(0), yc.sum(0), (xc * xc).sum(0), (yc * yc).sum(0), (xc * zt).sum(0), (yc * zt).sum(0)]
        )  # (6, M)
        self.lin = np.stack([d, yc * yc - xc * xc, d * zt], axis=2)  # (N, M, 3)
        self.lin_t = np.ascontiguousarray(self.lin.transpose(1, 0, 2))  # (M, N, 3)
        self.n = n
        self.undefined = undefined
        # inputs where X' can be constant for some mask: all cells take one value of X or Y
        self.x, self.y = x, y
        self.risky = self._risky_columns(x, y)
        self.cells = x.shape[1] * (n // 8 + 24)

    @staticmethod
    def _risky_columns(x, y):
        """Inputs where some mask could make X' constant: every system has X or Y tied with one value."""
        risky = np.zeros(x.shape[1], dtype=bool)
        for v in (x[0], y[0]):
            risky |= (_ties(x, v) | _ties(y, v)).all(axis=0)
        return risky

    def evaluate(self, cache: BatchCache):
        draws = cache.draws
        if draws.method == "systems":
            s = np.einsum("bn,nmk->bmk", draws.bits[cache.sl].astype(np.float64), self.lin)  # (b, M, 3)
        else:
            s = _linear_sums(cache.input_major_bits(), self.lin_t)  # (b, M, 3)
        sx, sy, sxx, syy, sxz, syz = self.base
        n = self.n
        x1 = sx + s[..., 0]
        y1 = sy - s[..., 0]
        x2 = sxx + s[..., 1]
        y2 = syy - s[..., 1]
        xz = sxz + s[..., 2]
        yz = syz - s[..., 2]
        vx = x2 - x1 * x1 / n
        vy = y2 - y1 * y1 / n
        with np.errstate(invalid="ignore", divide="ignore"):
            rx = xz / np.sqrt(vx)
            ry = yz / np.sqrt(vy)
        bad_x = np.broadcast_to(self.z_const, rx.shape).copy()
        bad_y = bad_x.copy()
        if self.risky.any():
            cols = np.flatnonzero(self.risky)
            m = draws.mask(cache.sl)[:, :, cols]
            xp = np.where(m, self.y[:, cols], self.x[:, cols])
            yp = np.where(m, self.x[:, cols], self.y[:, cols])
            bad_x[:, cols] |= _is_constant(xp, axis=1)
            bad_y[:, cols] |= _is_constant(yp, axis=1)
        rx = np.where(bad_x, np.nan, np.clip(rx, -1.0, 1.0))
        ry = np.where(bad_y, np.nan, np.clip(ry, -1.0, 1.0))
        return _aggregate(rx, self.undefined), _aggregate(ry, self.undefined)

    def deltas(self, cache: BatchCache):
        rx, ry = self.evaluate(cache)
        return rx - ry


class PearsonSummaryShared:
    """Summary-level Pearson of every metric pair under shared PERM-SYSTEMS / PERM-BOTH masks.

    The masked sums ``m.X_p``, ``m.X_p^2`` and ``m.(X_p z)`` are computed once per metric and batch; a
    pair's permuted sums are then differences of those (``X' = X_i + m (X_j - X_i)``). All metrics are
    centred per input by one common constant, which leaves every Pearson correlation unchanged.
    """

    def __init__(self, std: np.ndarray, z: np.ndarray, undefined: str):
        p, n, m = std.shape
        zc = z - z.mean(axis=0)
        znorm = np.sqrt((zc * zc).sum(axis=0))
        self.z_const = _is_constant(z, axis=0)
        zt = np.where(self.z_const, 0.0, zc / np.where(znorm > 0, znorm, 1.0))
        xc = std - std.mean(axis=(0, 1))
        self.lin = np.stack([xc, xc * xc, xc * zt], axis=-1)  # (P, N, M, 3)
        self.lin_t = np.ascontiguousarray(self.lin.transpose(0, 2, 1, 3))  # (P, M, N, 3)
        self.base = self.lin.sum(axis=1)  # (P, M, 3)
        self.std = std
        self.n = n
        self.undefined = undefined
        self._risky: dict = {}
        self.cells = m * (n // 8 + 3 * p + 24)

    def sums(self, cache: BatchCache, i: int) -> np.ndarray:
        """``m . (X_i, X_i^2, X_i z)`` per input: (b, M, 3)."""

        def make():
            if cache.draws.method == "systems":
                return np.einsum("bn,nmk->bmk", cache.draws.bits[cache.sl].astype(np.float64), self.lin[i])
            return _linear_sums(cache.input_major_bits(), self.lin_t[i])

        return cache.get(("pearson-sums", i), make)

    def evaluate(self, cache: BatchCache, i: int, j: int):
        ai, aj = self.sums(cache, i), self.sums(cache, j)
        n = self.n
        px = self.base[i] + aj - ai
        py = self.base[j] + ai - aj
        out = []
        for s in (px, py):
            v = s[..., 1] - s[..., 0] * s[..., 0] / n
            with np.errstate(invalid="ignore", divide="ignore"):
                out.append(np.clip(s[..., 2] / np.sqrt(v), -1.0, 1.0))
        rx, ry = out
        bad = np.broadcast_to(self.z_const, rx.shape)
        bad_x, bad_y = bad.copy(), bad.copy()
        if (i, j) not in self._risky:
            self._risky[i, j] = np.flatnonzero(_PermSummaryPearson._risky_columns(self.std[i], self.std[j]))
        cols = self._risky[i, j]
        if cols.size:
            mk = cache.draws.mask(cache.sl)[:, :, cols]
            x, y = self.std[i][:, cols], self.std[j][:, cols]
            bad_x[:, cols] |= _is_constant(np.where(mk, y, x), axis=1)
            bad_y[:, cols] |= _is_constant(np.where(mk, x, y), axis=1)
        rx = np.where(bad_x, np.nan, rx)
        ry = np.where(bad_y, np.nan, ry)
        return _aggregate(rx, self.undefined), _aggregate(ry, self.undefined)


class _Transposed:
    """By-system level = summary level of the transposed matrices; swaps the roles of the axes."""

    def __init__(self, inner):
        self.inner = inner
        self.cells = inner.cells

    def _inner_cache(self, cache: BatchCache) -> BatchCache:
        return cache.get("transposed", lambda: BatchCache(cache.draws.transposed(), cache.sl))

    def evaluate(self, cache: BatchCache):
        return self.inner.evaluate(self._inner_cache(cache))

    def deltas(self, cache: BatchCache):
        return self.inner.deltas(self._inner_cache(cache))


def permutation_kernel(x, y, z, *, level, coefficient, draws: PermutationDraws, undefined="skip",
                       tie_threshold=0.0):
    """A fast kernel for ``r(X', Z)`` and ``r(Y', Z)`` per permutation, or None (use the generic path).

    The kernel's ``deltas(cache)`` gives ``r(X', Z) - r(Y', Z)`` for the resamples of a
    :class:`BatchCache` (``evaluate(cache)`` the two correlations, where they are computed separately),
    and ``cells`` the size of its temporaries per resample (for the default batch size).

    ``x`` and ``y`` must already be standardized. Kernels exist for complete data at the system level
    (every coefficient), and at the summary level for PERM-INPUTS (every coefficient) and for Kendall
    tau-b and Pearson under PERM-SYSTEMS / PERM-BOTH.
    """
    if not _complete(x, y, z) or x.shape != z.shape:
        return None
    if level == "by-system":
        inner = permutation_kernel(x.T, y.T, z.T, level="summary", coefficient=coefficient,
                                   draws=draws.transposed(), undefined=undefined, tie_threshold=tie_threshold)
        return None if inner is None else _Transposed(inner)
    if level == "system":
        return _PermSystemLevel(x, y, z, coefficient, tie_threshold, draws.method)
    if level == "summary":
        if draws.method == "inputs":
            return _PermSummaryInputs(x, y, z, coefficient, undefined, tie_threshold)
        if tie_threshold:
            return None
        if coefficient == "kendall-b":
            return _PermSummaryKendall(x, y, z, undefined, draws.method)
        if coefficient == "pearson":
            return _PermSummaryPearson(x, y, z, undefined)
    return None


# ----------------------------------------------------------------------------------------------------
# bootstrap kernels: evaluate(cache) -> r(X*, Z*) of shape (b,); cells = temporaries per resample


class _BootSystemLevel:
    """System level: means are linear in the column weights; rows are gathered (duplicates kept).

    Column-weighted sums are exact (:class:`ExactWeightedSums`), so resampled means that are equal in
    exact arithmetic are equal here, whatever the summation order.
    """

    def __init__(self, x, z, coefficient, tie_threshold, full_test_set):
        n = x.shape[0]
        # per resample: the column weights and their sums (a few M), means, ranks or moments (a few N),
        # and for Kendall the pair weights and signs
        self.cells = 3 * (x.shape[1] + (z.shape[1] if full_test_set else 0)) + 16 * n
        if coefficient == "kendall-b":
            self.cells += n * (n - 1) // 2
        self.n = n
        self.mx, self.mz = x.shape[1], z.shape[1]
        self.xbar, self.zbar = x.mean(axis=1), z.mean(axis=1)
        self.coefficient = coefficient
        self.tie_threshold = tie_threshold
        self.full = full_test_set
        self.weighted = coefficient == "kendall-b" and not tie_threshold and n <= PAIRWISE_SYSTEMS_MAX
        if full_test_set:
            self.sums = (ExactWeightedSums(x, self.mx), ExactWeightedSums(z, self.mz))
        else:
            self.sums = ExactWeightedSums(np.concatenate([x, z]), self.mx)

    def means(self, cache: BatchCache, gather: bool = True):
        """Resampled system means of X and Z, each (b, N) (of the distinct systems if not ``gather``)."""
        draws = cache.draws
        b = len(range(*cache.sl.indices(draws.n_resamples)))
        if draws.cols is None:
            xm = np.broadcast_to(self.xbar, (b, self.n))
            zm = np.broadcast_to(self.zbar, (b, self.n))
        elif self.full:
            xm = self.sums[0](cache.col_weights()) / self.mx
            zm = self.sums[1](cache.col_weights(human=True)) / self.mz
        else:
            both = self.sums(cache.col_weights()) / self.mx
            xm, zm = both[:, : self.n], both[:, self.n :]
        if gather and draws.rows is not None:
            index = (_index(("rows", b), lambda: np.arange(b)[:, None]), draws.rows[cache.sl])
            xm, zm = xm[index], zm[index]
        return xm, zm

    def evaluate(self, cache: BatchCache):
        if self.weighted:  # Kendall over the distinct systems, duplicates as multiplicities
            xm, zm = self.means(cache, gather=False)
            return kendall_b_weighted(xm, zm, cache.row_weights())
        xm, zm = self.means(cache)
        return system_correlation(xm, zm, self.coefficient, self.tie_threshold)


class _BootSummaryInputs:
    """Summary level under BOOT-INPUTS: count-weighted mean of the per-input correlations."""

    def __init__(self, x, z, coefficient, undefined, tie_threshold):
        self.r = _coef.correlation(x, z, coefficient, axis=0, tie_threshold=tie_threshold)
        self.undefined = undefined
        self.cells = 8 * x.shape[1]

    def evaluate(self, cache: BatchCache):
        c = cache.col_weights()
        return _weighted_aggregate(np.broadcast_to(self.r, c.shape), c, self.undefined)


class _BootSummaryKendall:
    """Summary-level Kendall tau-b with system multiplicities ``w``.

    Over the pairs ``a < b`` of distinct systems, with ``ww_ab = w_a w_b``, the numerator of input ``j``
    is ``sum_ab ww_ab S_jab T_jab`` (signs of the metric and of the humans) and the pairs tied in x are
    ``sum_a w_a (w_a - 1) / 2 + sum_ab ww_ab [S_jab = 0]`` (copies of one system are tied); likewise in z.
    One float32 matrix product ``ww (b, P) @ (P, M + M_x + M_z)`` gives every numerator and, for the inputs
    that have ties, every tie count; it is exact because every operand and partial sum is a small integer.
    """

    def __init__(self, x, z, undefined):
        n, m = x.shape
        first, second = upper_pairs(n)
        rx, tx = tie_ranks(np.ascontiguousarray(x.T))  # one row per input
        rz, tz = tie_ranks(np.ascontiguousarray(z.T))
        sx, sz = rank_pair_signs(rx, first, second), rank_pair_signs(rz, first, second)  # (P, M)
        self.tied_x = np.flatnonzero(tx)
        self.tied_z = np.flatnonzero(tz)
        self.rhs = np.ascontiguousarray(np.concatenate(
            [sx * sz, sx[:, self.tied_x] == 0, sz[:, self.tied_z] == 0], axis=1, dtype=np.float32))
        self.n, self.m = n, m
        self.n0 = n * (n - 1) / 2.0
        self.undefined = undefined
        self.cells = n * (n - 1) // 2 + self.rhs.shape[1] + 16 * m

    def per_input(self, cache: BatchCache):
        w = cache.row_weights()
        out = cache.pair_weights() @ self.rhs  # (b, M + M_x + M_z), exact integers
        m, mx = self.m, self.tied_x.size
        dup = ((w * (w - 1)).sum(axis=1) / 2.0)[:, None]
        num = out[:, :m]
        tx = self._tied(out[:, m : m + mx], self.tied_x, dup)
        tz = self._tied(out[:, m + mx :], self.tied_z, dup)
        return _tau_b(num, self.n0, tx, tz)

    def _tied(self, part, tied, dup):
        """Tied pairs per input: ``dup`` plus the weighted tied pairs ``part`` of the inputs ``tied``."""
        if tied.size == 0:
            return dup
        if tied.size == self.m:  # every input has ties (tied == arange(M))
            return part + dup
        out = np.repeat(dup, self.m, axis=1)
        out[:, tied] += part
        return out

    def evaluate(self, cache: BatchCache):
        tau = self.per_input(cache)
        if cache.draws.cols is None:
            return _aggregate(tau, self.undefined)
        return _weighted_aggregate(tau, cache.col_weights(), self.undefined)


class _BootSummaryPearson:
    """Summary-level Pearson with system multiplicities ``w``: weighted moments from one matrix product."""

    def __init__(self, x, z, undefined):
        n, m = x.shape
        xc = x - x.mean(axis=0)
        zc = z - z.mean(axis=0)
        self.moments = np.concatenate([xc, zc, xc * xc, zc * zc, xc * zc], axis=1)  # (N, 5M)
        self.n, self.m = n, m
        self.cells = m * (n + 24)
        self.x, self.z = x, z
        self.undefined = undefined
        self._group_cache: dict = {}

    @staticmethod
    def _groups(values):
        """One-hot tie-group membership (N, G) of the columns of ``values`` and each group's column."""
        n, m = values.shape
        order = np.argsort(values, axis=0, kind="stable")
        srt = np.take_along_axis(values, order, axis=0)
        new = np.ones((n, m), dtype=bool)
        new[1:] = ~_ties(srt[1:], srt[:-1])
        dense = np.cumsum(new, axis=0) - 1
        ids = np.empty_like(dense)
        np.put_along_axis(ids, order, dense, axis=0)
        offsets = np.concatenate([[0], np.cumsum(dense[-1] + 1)[:-1]])
        onehot = np.zeros((n, int(dense[-1].sum() + m)), dtype=np.float32)
        onehot[np.arange(n)[:, None], ids + offsets] = 1.0
        return onehot, offsets

    def _constant(self, key, values, chosen_f):
        """Columns of ``values`` constant over the chosen systems: a single tie group is present."""
        if key not in self._group_cache:
            self._group_cache[key] = self._groups(values)
        onehot, offsets = self._group_cache[key]
        present = (chosen_f @ onehot) > 0
        return np.add.reduceat(present, offsets, axis=1) <= 1

    def evaluate(self, cache: BatchCache):
        w = cache.row_weights()
        s = np.einsum("bn,nk->bk", w.astype(np.float64), self.moments).reshape(w.shape[0], 5, self.m)
        n = self.n
        sx, sz, sxx, szz, sxz = (s[:, i] for i in range(5))
        vx = sxx - sx * sx / n
        vz = szz - sz * sz / n
        cov = sxz - sx * sz / n
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.clip(cov / np.sqrt(vx * vz), -1.0, 1.0)
        chosen = (w > 0).astype(np.float32)
        bad = self._constant("x", self.x, chosen) | self._constant("z", self.z, chosen)
        r = np.where(bad, np.nan, r)
        if cache.draws.cols is None:
            return _aggregate(r, self.undefined)
        return _weighted_aggregate(r, cache.col_weights(), self.undefined)


def bootstrap_kernel(x, z, *, level, coefficient, draws: BootstrapDraws, undefined="skip",
                     tie_threshold=0.0, full_test_set=False):
    """A fast kernel computing ``r(X*, Z*)`` per bootstrap resample, or None (use the generic path).

    Kernels exist for complete data at the system level (every coefficient, also in full-test-set mode),
    and at the summary level for BOOT-INPUTS (every coefficient) and for Kendall tau-b and Pearson under
    BOOT-SYSTEMS / BOOT-BOTH.
    """
    if not _complete(x, z):
        return None
    if level == "system":
        if x.shape != z.shape and not full_test_set:
            return None
        return _BootSystemLevel(x, z, coefficient, tie_threshold, full_test_set)
    if x.shape != z.shape or full_test_set:
        return None
    if level == "by-system":
        inner = bootstrap_kernel(x.T, z.T, level="summary", coefficient=coefficient, draws=draws.transposed(),
                                 undefined=undefined, tie_threshold=tie_threshold)
        return None if inner is None else _Transposed(inner)
    if level == "summary":
        if draws.method == "inputs":
            return _BootSummaryInputs(x, z, coefficient, undefined, tie_threshold)
        if tie_threshold:
            return None
        if coefficient == "kendall-b":
            return _BootSummaryKendall(x, z, undefined)
        if coefficient == "pearson":
            return _BootSummaryPearson(x, z, undefined)
    return None


# ----------------------------------------------------------------------------------------------------
# point estimates


def point_correlation(x, z, *, level, coefficient, undefined="skip", full_test_set=False, tie_threshold=0.0):
    """:func:`metaeval.stats.levels.level_correlation` of validated 2-D ``x`` and ``z``, bitwise equal.

    See :func:`point_correlations`.
    """
    return point_correlations([x], z, level=level, coefficient=coefficient, undefined=undefined,
                              full_test_set=full_test_set, tie_threshold=tie_threshold)[0]


def point_correlations(xs, z, *, level, coefficient, undefined="skip", full_test_set=False, tie_threshold=0.0):
    """``[level_correlation(x, z) for x in xs]`` for validated 2-D arrays of one shape, bitwise equal.

    For complete data, Pearson and Kendall tau-b at the system and summary levels (Kendall: at most
    :data:`coefficients.PAIRWISE_MAX_N` systems) the statistics are computed here, all metrics at once:
    the same system means, tie groups, sums and formulas as :mod:`metaeval.stats.levels` and
    :mod:`metaeval.stats.coefficients`, with Kendall's pairs counted by one comparison of the dense
    ranks of all vectors (the same integers as the coefficients' loop over offsets). Every other case
    calls ``level_correlation``.
    """
    n, m = z.shape
    fast = (coefficient in ("kendall-b", "pearson") and level in ("system", "summary") and not full_test_set
            and not tie_threshold and 2 <= n and all(x.shape == z.shape for x in xs) and _complete(z, *xs)
            and (coefficient == "pearson" or n <= _coef.PAIRWISE_MAX_N))
    if not fast:
        return [_levels.level_correlation(x, z, level=level, coefficient=coefficient, undefined=undefined,
                                          full_test_set=full_test_set, tie_threshold=tie_threshold) for x in xs]
    rows = _kendall_b_rows if coefficient == "kendall-b" else _pearson_rows
    k = len(xs)
    if level == "system":  # levels._system on complete data
        used = np.broadcast_to(np.ones((1, m), dtype=bool), z.shape)
        count = used.sum(axis=-1)
        xbar = np.stack([np.where(used, x, 0.0).sum(axis=-1) / count for x in xs])
        zbar = np.where(used, z, 0.0).sum(axis=-1) / count
        r = rows(xbar, np.broadcast_to(zbar, xbar.shape))
        zero = np.int64(0)
        return [_levels.LevelCorrelation(r[i], np.int64(n), np.int64(0), zero, zero) for i in range(k)]
    # levels._grouped over the inputs (columns): one row per (metric, input)
    if coefficient == "kendall-b":  # integer counts: any layout
        zt = np.ascontiguousarray(z.T)
        r = rows(np.concatenate([np.ascontiguousarray(x.T) for x in xs]), np.concatenate([zt] * k)).reshape(k, m)
    else:  # the sums of the generic path run over the transposed views: same strides, same rounding
        r = [_pearson_rows(x.T, z.T, contiguous=False) for x in xs]
    out = []
    for ri in r:
        defined = ~np.isnan(ri)
        n_defined = defined.sum(axis=-1)
        n_zeroed = (~defined).sum(axis=-1) if undefined == "zero" else np.zeros_like(n_defined)
        n_used = n_defined + n_zeroed
        with np.errstate(invalid="ignore", divide="ignore"):
            stat = np.where(n_used > 0, np.where(defined, ri, 0.0).sum(axis=-1) / n_used, np.nan)
        fields = (stat, n_used, m - n_defined, n_zeroed, np.zeros_like(n_defined))
        out.append(_levels.LevelCorrelation(*(np.asarray(v)[()] for v in fields)))
    return out


def _kendall_b_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall tau-b of the rows of complete ``x``, ``y`` (B, n), 2 <= n <= PAIRWISE_MAX_N, as
    :func:`coefficients.correlation_rows` computes it (same tie groups, counts and formula)."""
    b, n = x.shape
    nv = np.full(b, n, dtype=np.int64)
    rx, tx = tie_ranks(x)
    ry, ty = tie_ranks(y)
    first, second = upper_pairs(n)
    prod = rank_pair_signs(rx, first, second) * rank_pair_signs(ry, first, second)  # (P, B)
    pos = np.count_nonzero(prod > 0, axis=0)
    neg = np.count_nonzero(prod < 0, axis=0)
    pairs = nv * (nv - 1) // 2
    txy = (pos + neg) - pairs + tx + ty  # C + D = P - Tx_all - Ty_all + Txy
    return _coef._from_counts("kendall-b", nv, pairs, pos - neg, tx, ty, txy,
                              rx.max(axis=1).astype(np.int64) + 1, ry.max(axis=1).astype(np.int64) + 1)


def _pearson_rows(x: np.ndarray, y: np.ndarray, contiguous: bool = True) -> np.ndarray:
    """Pearson's r of the rows of complete ``x``, ``y`` (B, n), n >= 2, as
    :func:`coefficients.correlation_rows` computes it (on these arrays, or C-contiguous copies)."""
    if contiguous:
        x, y = np.ascontiguousarray(x), np.ascontiguousarray(y)
    nv = np.full(x.shape[0], x.shape[1])
    return _coef._pearson(x, y, None, _coef._is_constant(x, None, nv) | _coef._is_constant(y, None, nv))
