"""Fast exact kernels for resampled level correlations.

The generic path of every resampling procedure materializes the resampled matrices of a batch,
``(b, N, M)``, and calls :func:`metaeval.stats.levels.level_correlation` on them. The kernels here compute
*the same numbers* (to rounding, 1e-12 in the tests) without materializing the resamples, by exploiting
how the statistics depend on the draws:

* **System level.** System means are linear in the permutation mask and in the bootstrap column weights:
  ``xbar'_a = xbar_a + (1/M) sum_b m_ab (Y_ab - X_ab)`` and ``xbar*_a = (1/M) sum_b c_b X_ab``. The
  ``(k, N)`` resampled means are then gathered by the bootstrap row indices (duplicated systems stay
  duplicated, so Kendall sees them as ties and Pearson as extra points) and fed to the batched
  :func:`metaeval.stats.coefficients.correlation`.
* **Summary level, Kendall tau-b.** For one input with swap bits ``m`` (one per system), the sign of
  ``X'_a - X'_b`` is bilinear in ``(m_a, m_b)`` over the four sign matrices ``sgn(X_a - X_b)``,
  ``sgn(Y_a - X_b)``, ``sgn(X_a - Y_b)``, ``sgn(Y_a - Y_b)``; the tau-b numerator ``sum_{a<b} s'_ab t_ab``
  (``t`` the human's signs) and the number of tied pairs are therefore quadratic forms
  ``c + l.m + m^T Q m / 2`` with integer coefficients precomputed once per pair. Since ``Y' = X'`` under
  ``1 - m``, the forms of ``Y'`` share ``Q``. When no tie is possible the denominators are constant and the
  difference of the two coefficients is linear in ``m``. Under the bootstrap with system multiplicities
  ``w`` the numerator is ``w^T (S*T) w / 2`` and the tied pairs ``w^T E w / 2 + sum_a w_a (w_a - 1) / 2``
  (two copies of one system are tied in both variables). All forms are evaluated with float32 matrix
  products, which are exact here because every operand and partial sum is a small integer.
* Floating-point sums use ``einsum`` (a fixed summation order per resample), never BLAS ``matmul``, whose
  blocking depends on the batch shape: results are bitwise identical for any ``batch``.
* **Summary level, Pearson.** Sums of ``X'``, ``X'^2`` and ``X' z`` are linear in the mask; under the
  bootstrap the weighted moments are linear in ``w``: one matrix product gives every numerator and
  denominator.
* **Inputs-only resampling at summary level** (any coefficient): the per-input correlations are computed
  once; PERM-INPUTS selects ``r(X_b)`` or ``r(Y_b)`` per input, BOOT-INPUTS takes count-weighted means.

Ties: signs use the pairwise rule of :mod:`metaeval.stats.coefficients`
(``|a - b| <= TIE_RTOL * max(|a|, |b|)``) and tie groups its sorted-neighbour rule; the two differ only
when near-ties chain over more than ``TIE_RTOL``, which real scores never do.

Kernels require complete data (no NaN) in the arrays they read; otherwise the factories return None and
the caller uses the generic path, which stays the reference. By-system level is the summary level of the
transposed matrices (with "systems" and "inputs" exchanged).

References
----------
Deutsch, D., Dror, R. and Roth, D. (2021). A Statistical Analysis of Summarization Evaluation Metrics
using Resampling Methods. Transactions of the ACL 9, 1132-1146.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats import coefficients as _coef
from metaeval.stats.resampling import BootstrapDraws, PermutationDraws

__all__ = [
    "pair_signs",
    "permutation_kernel",
    "bootstrap_kernel",
    "BatchCache",
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


def system_correlation(xm: np.ndarray, zm: np.ndarray, coefficient: str, tie_threshold: float) -> np.ndarray:
    """Correlation of each row of resampled system scores ``xm`` (b, N) with ``zm`` ((b, N) or (N,)).

    Kendall tau-b for small N from pairwise signs (the numbers of :func:`coefficients.correlation`),
    everything else through :func:`coefficients.correlation_rows`.
    """
    n = xm.shape[-1]
    if coefficient == "kendall-b" and not tie_threshold and n <= PAIRWISE_SYSTEMS_MAX:
        off = ~np.eye(n, dtype=bool)
        sx = pair_signs(xm, xm)
        sz = pair_signs(zm, zm)
        num = np.einsum("...ij,...ij->...", sx, sz, dtype=np.int64) / 2.0
        tx = (((sx == 0) & off).sum(axis=(-2, -1)) / 2.0)
        tz = (((sz == 0) & off).sum(axis=(-2, -1)) / 2.0)
        return np.broadcast_to(_tau_b(num, n * (n - 1) / 2.0, tx, tz), xm.shape[:-1]).copy()
    zb = np.broadcast_to(zm, xm.shape)
    return _coef.correlation_rows(np.ascontiguousarray(xm), np.ascontiguousarray(zb), coefficient, tie_threshold)


def _linear_sums(bits: np.ndarray, lin_t: np.ndarray) -> np.ndarray:
    """``sum_a m[s, a, j] * lin_t[j, a, k]`` -> (b, M, K) for cell masks ``bits`` (b, N, M) stored input-major.

    One two-operand ``einsum`` per component: a fixed summation order (batch-size invariant) and, unlike
    a three-index ``einsum``, fast.
    """
    bt = bits.transpose(2, 0, 1)  # (M, b, N), contiguous for PERM-BOTH draws
    return np.stack([np.einsum("jbn,jn->bj", bt, np.ascontiguousarray(lin_t[..., k]))
                     for k in range(lin_t.shape[-1])], axis=-1)


def _complete(*arrays: np.ndarray) -> bool:
    return all(bool(np.isfinite(a).all()) for a in arrays)


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
        """Cell masks as float32 ``(M, b, N)`` (or ``(1, b, N)`` for PERM-SYSTEMS)."""

        def make():
            bits = self.draws.bits[self.sl]
            if self.draws.method == "systems":
                return bits.astype(np.float32)[None]
            return bits.transpose(2, 0, 1).astype(np.float32)

        return self.get("bits32", make)

    # bootstrap weights ------------------------------------------------------------------------------
    def row_weights(self) -> np.ndarray:
        return self.get("w", lambda: self.draws.row_weights(self.sl))

    def col_weights(self, human: bool = False) -> np.ndarray:
        return self.get(("c", human), lambda: self.draws.col_weights(self.sl, human=human))


# ----------------------------------------------------------------------------------------------------
# permutation kernels: evaluate(cache) -> (r(X', Z), r(Y', Z)), each of shape (b,)


class _PermSystemLevel:
    """System level: permuted system means are linear in the mask (complete data)."""

    def __init__(self, x, y, z, coefficient, tie_threshold):
        self.xbar = x.mean(axis=1)
        self.ybar = y.mean(axis=1)
        self.zbar = z.mean(axis=1)
        self.d = y - x
        self.d_t = np.ascontiguousarray(self.d.T)
        self.m = x.shape[1]
        self.coefficient = coefficient
        self.tie_threshold = tie_threshold

    def evaluate(self, cache: BatchCache):
        draws = cache.draws
        bits = draws.bits[cache.sl]
        if draws.method == "systems":
            xp = np.where(bits, self.ybar, self.xbar)
        elif draws.method == "inputs":
            xp = self.xbar + np.einsum("bm,nm->bn", bits.astype(np.float64), self.d) / self.m
        else:
            # the bits are stored input-major: (M, b, N) is the contiguous view
            xp = self.xbar + np.einsum("jbn,jn->bn", bits.transpose(2, 0, 1), self.d_t) / self.m
        yp = self.xbar + self.ybar - xp
        rx = system_correlation(xp, self.zbar, self.coefficient, self.tie_threshold)
        ry = system_correlation(yp, self.zbar, self.coefficient, self.tie_threshold)
        return rx, ry


class _PermSummaryInputs:
    """Summary level under PERM-INPUTS: each input keeps r(X_b, Z_b) or takes r(Y_b, Z_b)."""

    def __init__(self, x, y, z, coefficient, undefined, tie_threshold):
        kw = dict(axis=0, tie_threshold=tie_threshold)
        self.rx = _coef.correlation(x, z, coefficient, **kw)
        self.ry = _coef.correlation(y, z, coefficient, **kw)
        self.undefined = undefined

    def evaluate(self, cache: BatchCache):
        bits = cache.draws.bits[cache.sl]  # (b, M)
        px = np.where(bits, self.ry, self.rx)
        py = np.where(bits, self.rx, self.ry)
        return _aggregate(px, self.undefined), _aggregate(py, self.undefined)


class _PermSummaryKendall:
    """Summary-level Kendall tau-b under PERM-SYSTEMS / PERM-BOTH as quadratic forms in the mask bits."""

    def __init__(self, x, y, z, undefined):
        n, _ = x.shape
        xt, yt, zt = x.T, y.T, z.T  # (M, N)
        off = ~np.eye(n, dtype=bool)
        sxx = pair_signs(xt, xt).astype(np.int16)
        syy = pair_signs(yt, yt).astype(np.int16)
        sxy = pair_signs(xt, yt).astype(np.int16)  # sgn(X_a - Y_b)
        syx = -sxy.transpose(0, 2, 1)  # sgn(Y_a - X_b)
        t = pair_signs(zt, zt).astype(np.int16)
        self.n0 = n * (n - 1) / 2.0
        self.tz = ((t == 0) & off).sum(axis=(1, 2)) / 2.0  # (M,)
        qn = t * (sxx - syx - sxy + syy)
        c_x = (t * sxx).sum(axis=(1, 2)) / 2.0
        l_x = (t * (syx - sxx)).sum(axis=2)
        exx = ((sxx == 0) & off).astype(np.int16)
        eyy = ((syy == 0) & off).astype(np.int16)
        exy = ((sxy == 0) & off).astype(np.int16)
        eyx = exy.transpose(0, 2, 1)
        qe = exx - eyx - exy + eyy
        e_x = exx.sum(axis=(1, 2)) / 2.0
        le_x = (eyx - exx).sum(axis=2)
        # Y' is X' under 1 - m: f(1 - m) = f(1) - (l + Q 1).m + m^T Q m / 2, same Q.
        c_y = c_x + l_x.sum(axis=1) + qn.sum(axis=(1, 2)) / 2.0
        l_y = -(l_x + qn.sum(axis=2))
        e_y = e_x + le_x.sum(axis=1) + qe.sum(axis=(1, 2)) / 2.0
        le_y = -(le_x + qe.sum(axis=2))
        self.tie_free = not (qe.any() or le_x.any() or le_y.any() or e_x.any() or e_y.any())
        self.undefined = undefined
        self.n = n
        self.c_x, self.c_y, self.e_x, self.e_y = c_x, c_y, e_x, e_y
        if self.tie_free:
            # tau_X - tau_Y per input is linear in m (constant denominators).
            self.w = np.stack([l_x, l_y], axis=2).astype(np.float32)  # (M, N, 2)
            self.qn = qn.astype(np.float32)
        else:
            self.w = np.concatenate(
                [qn, qe, l_x[..., None], le_x[..., None], l_y[..., None], le_y[..., None]], axis=2
            ).astype(np.float32)  # (M, N, 2N + 4)

    def per_input(self, cache: BatchCache):
        """tau-b of X' and of Y' per input, each of shape (b, M)."""
        mf = cache.column_bits_f32()  # (M, b, N) or (1, b, N)
        n = self.n
        r = np.matmul(mf, self.w)  # (M, b, K)
        if self.tie_free:
            q = np.einsum("jbn,jbn->jb", np.matmul(mf, self.qn), np.broadcast_to(mf, r.shape[:2] + (n,)))
            num_x = self.c_x[:, None] + r[..., 0] + q / 2.0
            num_y = self.c_y[:, None] + r[..., 1] + q / 2.0
            tx = ty = np.zeros(1)
        else:
            mfb = np.broadcast_to(mf, r.shape[:2] + (n,))
            q = np.einsum("jbn,jbn->jb", r[..., :n], mfb)
            g = np.einsum("jbn,jbn->jb", r[..., n : 2 * n], mfb)
            num_x = self.c_x[:, None] + r[..., 2 * n] + q / 2.0
            tx = self.e_x[:, None] + r[..., 2 * n + 1] + g / 2.0
            num_y = self.c_y[:, None] + r[..., 2 * n + 2] + q / 2.0
            ty = self.e_y[:, None] + r[..., 2 * n + 3] + g / 2.0
        tz = self.tz[:, None]
        return _tau_b(num_x, self.n0, tx, tz).T, _tau_b(num_y, self.n0, ty, tz).T

    def evaluate(self, cache: BatchCache):
        px, py = self.per_input(cache)
        return _aggregate(px, self.undefined), _aggregate(py, self.undefined)


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

    @staticmethod
    def _risky_columns(x, y):
        """Inputs where some mask could make X' constant: every system has X or Y tied with one value."""
        risky = np.zeros(x.shape[1], dtype=bool)
        for v in (x[0], y[0]):
            risky |= (_ties(x, v) | _ties(y, v)).all(axis=0)
        return risky

    def evaluate(self, cache: BatchCache):
        draws = cache.draws
        bits = draws.bits[cache.sl]
        if draws.method == "systems":
            s = np.einsum("bn,nmk->bmk", bits.astype(np.float64), self.lin)  # (b, M, 3)
        else:
            s = _linear_sums(bits, self.lin_t)  # (b, M, 3)
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

    def sums(self, cache: BatchCache, i: int) -> np.ndarray:
        """``m . (X_i, X_i^2, X_i z)`` per input: (b, M, 3)."""

        def make():
            bits = cache.draws.bits[cache.sl]
            if cache.draws.method == "systems":
                return np.einsum("bn,nmk->bmk", bits.astype(np.float64), self.lin[i])
            return _linear_sums(bits, self.lin_t[i])

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

    def evaluate(self, cache: BatchCache):
        inner = cache.get("transposed", lambda: BatchCache(cache.draws.transposed(), cache.sl))
        return self.inner.evaluate(inner)


def permutation_kernel(x, y, z, *, level, coefficient, draws: PermutationDraws, undefined="skip",
                       tie_threshold=0.0):
    """A fast kernel computing ``(r(X', Z), r(Y', Z))`` per permutation, or None (use the generic path).

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
        return _PermSystemLevel(x, y, z, coefficient, tie_threshold)
    if level == "summary":
        if draws.method == "inputs":
            return _PermSummaryInputs(x, y, z, coefficient, undefined, tie_threshold)
        if tie_threshold:
            return None
        if coefficient == "kendall-b":
            return _PermSummaryKendall(x, y, z, undefined)
        if coefficient == "pearson":
            return _PermSummaryPearson(x, y, z, undefined)
    return None


# ----------------------------------------------------------------------------------------------------
# bootstrap kernels: evaluate(cache) -> r(X*, Z*) of shape (b,)


class _BootSystemLevel:
    """System level: means are linear in the column weights; rows are gathered (duplicates kept)."""

    def __init__(self, x, z, coefficient, tie_threshold, full_test_set):
        self.x, self.z = x, z
        self.xbar, self.zbar = x.mean(axis=1), z.mean(axis=1)
        self.coefficient = coefficient
        self.tie_threshold = tie_threshold
        self.full = full_test_set

    def means(self, cache: BatchCache, values, human: bool):
        draws = cache.draws
        if (draws.cols_human if (human and self.full) else draws.cols) is None:
            b = len(range(*cache.sl.indices(draws.n_resamples)))
            means = np.broadcast_to(values.mean(axis=1), (b, values.shape[0]))
        else:
            c = cache.col_weights(human=human and self.full).astype(np.float64)
            means = np.einsum("bm,nm->bn", c, values) / values.shape[1]
        if draws.rows is not None:
            means = np.take_along_axis(means, draws.rows[cache.sl], axis=1)
        return means

    def evaluate(self, cache: BatchCache):
        xm = self.means(cache, self.x, False)
        zm = self.means(cache, self.z, True)
        return system_correlation(xm, zm, self.coefficient, self.tie_threshold)


class _BootSummaryInputs:
    """Summary level under BOOT-INPUTS: count-weighted mean of the per-input correlations."""

    def __init__(self, x, z, coefficient, undefined, tie_threshold):
        self.r = _coef.correlation(x, z, coefficient, axis=0, tie_threshold=tie_threshold)
        self.undefined = undefined

    def evaluate(self, cache: BatchCache):
        c = cache.col_weights()
        return _weighted_aggregate(np.broadcast_to(self.r, c.shape), c, self.undefined)


class _BootSummaryKendall:
    """Summary-level Kendall tau-b with system multiplicities ``w``.

    Per input, the numerator is the quadratic form ``w^T (S * T) w / 2`` (one float32 matrix product for
    all inputs, exact on integers). The pairs tied in x are ``sum_g C(W_g, 2)`` over the tie groups ``g`` of
    the input, with ``W_g`` the number of resampled systems in the group (copies of one system are tied):
    a product with the one-hot group matrix, needed only for inputs that have ties.
    """

    def __init__(self, x, z, undefined):
        n, m = x.shape
        s = pair_signs(x.T, x.T).astype(np.float32)
        t = pair_signs(z.T, z.T).astype(np.float32)
        self.forms = np.ascontiguousarray((s * t).transpose(1, 0, 2)).reshape(n, m * n)
        self.n, self.m = n, m
        self.n0 = n * (n - 1) / 2.0
        self.undefined = undefined
        self.groups = [self._tie_groups(v) for v in (x, z)]

    @staticmethod
    def _tie_groups(values):
        onehot, offsets = _BootSummaryPearson._groups(values)
        sizes = np.diff(np.append(offsets, onehot.shape[1]))
        tied = np.flatnonzero(sizes < values.shape[0])
        if tied.size == 0:
            return None
        keep = np.concatenate([np.arange(offsets[j], offsets[j] + sizes[j]) for j in tied])
        sub_offsets = np.concatenate([[0], np.cumsum(sizes[tied])[:-1]])
        return tied, np.ascontiguousarray(onehot[:, keep]), sub_offsets

    def _tied_pairs(self, groups, wf, dup):
        out = np.broadcast_to(dup, (wf.shape[0], self.m)).copy()
        if groups is not None:
            tied, onehot, offsets = groups
            counts = wf @ onehot
            out[:, tied] = np.add.reduceat(counts * (counts - 1), offsets, axis=1) / 2.0
        return out

    def per_input(self, cache: BatchCache):
        w = cache.row_weights()
        wf = w.astype(np.float32)
        r = (wf @ self.forms).reshape(w.shape[0], self.m, self.n)
        num = np.einsum("bjn,bn->bj", r, wf) / 2.0  # (b, M)
        dup = ((w * (w - 1)).sum(axis=1) / 2.0)[:, None]
        tx = self._tied_pairs(self.groups[0], wf, dup)
        tz = self._tied_pairs(self.groups[1], wf, dup)
        return _tau_b(num.astype(np.float64), self.n0, tx, tz)

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
