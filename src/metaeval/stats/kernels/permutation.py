"""Permutation kernels: ``deltas(cache)`` -> ``r(X', Z) - r(Y', Z)`` per resample of a batch."""
from __future__ import annotations

import numpy as np

from metaeval.stats.correlations import coefficients as _coef
from metaeval.stats.kernels.batch import BatchCache, Transposed
from metaeval.stats.kernels.regimes import Regime, Route, case_of, first_route
from metaeval.stats.kernels.exact_sums import ExactWeightedSums, byte_tables, table_sums
from metaeval.stats.kernels import compiler
from metaeval.stats.correlations import ties
from metaeval.stats.kernels.ranks import (
    is_constant_along,
    fixed_pair_signs,
    tie_ranks,
)
from metaeval.stats.kernels.rows import (
    PAIRWISE_SYSTEMS_MAX,
    mean_over_inputs,
    all_finite,
    linear_sums,
    tau_b_from_ties,
    fixed_pearson,
    system_correlation,
)
from metaeval.stats.resampling.draws import PermutationDraws
from metaeval.stats.correlations.ties import TIE_RTOL

__all__ = ["ONE_PAIR_ROUTES", "PearsonSummaryShared", "PermSummaryInputs", "PermSummaryKendall", "PermSummaryPearson",
           "PermSystemLevel", "pearson_terms", "permutation_kernel", "risky_columns"]

# ----------------------------------------------------------------------------------------------------
# permutation kernels: deltas(cache) -> r(X', Z) - r(Y', Z), of shape (b,)


class PermSystemLevel:
    """System level: permuted system means are linear in the mask (complete data).

    ``X'_a = xbar_a + (1/M) sum_b m_ab (Y_ab - X_ab)``: byte tables for PERM-BOTH, exact weighted sums for
    PERM-INPUTS, a selection for PERM-SYSTEMS; then ``Y' = xbar + ybar - X'``.
    """

    def __init__(self, x, y, z, coefficient, tie_threshold, method, rtol):
        n, m = x.shape
        self.rtol = rtol
        # per resample, for X' and Y' together: table gathers, means and ranks (a few N), int8 pair signs
        self.cells = 16 * n + (n * (n - 1) // 2 if coefficient == "kendall-b" else 0)
        self.xbar = x.mean(axis=1)
        self.ybar = y.mean(axis=1)
        self.zbar = z.mean(axis=1)
        self.m = x.shape[1]
        self.coefficient = coefficient
        self.tie_threshold = tie_threshold
        self.z_signs = fixed_pair_signs(self.zbar, rtol=rtol) if n <= PAIRWISE_SYSTEMS_MAX else None
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
                               self.z_signs, self.z_fixed, rtol=self.rtol)
        return r[:b], r[b:]

    def deltas(self, cache: BatchCache):
        rx, ry = self.evaluate(cache)
        return rx - ry


class PermSummaryInputs:
    """Summary level under PERM-INPUTS: each input keeps r(X_b, Z_b) or takes r(Y_b, Z_b)."""

    def __init__(self, x, y, z, coefficient, undefined, tie_threshold, rtol):
        kw = dict(axis=0, tie_threshold=tie_threshold, rtol=rtol)
        self.rx = _coef.correlation(x, z, coefficient, **kw)
        self.ry = _coef.correlation(y, z, coefficient, **kw)
        self.undefined = undefined
        self.cells = 8 * x.shape[1]

    def evaluate(self, cache: BatchCache):
        bits = cache.draws.bits[cache.sl]  # (b, M)
        px = np.where(bits, self.ry, self.rx)
        py = np.where(bits, self.rx, self.ry)
        return mean_over_inputs(px, self.undefined), mean_over_inputs(py, self.undefined)

    def deltas(self, cache: BatchCache):
        rx, ry = self.evaluate(cache)
        return rx - ry


def _sign_tensor(ru: np.ndarray, rv: np.ndarray) -> np.ndarray:
    """``sgn(ru[j, a] - rv[j, b])`` as int8 ``(M, N, N)`` for rank arrays ``(M, N)``."""
    d = ru[:, :, None].astype(np.int16) - rv[:, None, :]
    return np.sign(d).astype(np.int8)


class PermSummaryKendall:
    """Summary-level Kendall tau-b under PERM-SYSTEMS / PERM-BOTH as quadratic forms in the mask bits.

    Signs and ties are those of the tie groups of each input (:func:`tie_ranks`; ``X`` and ``Y`` are
    ranked together, since ``X'`` mixes their values). Without ties in ``X`` and ``Y`` (no two values of
    different systems tie within an input) the denominators are
    constant and ``tau(X'_j) - tau(Y'_j) = (c_j + l_j . m_j) / sqrt(n0 (n0 - t_j))`` is linear in the
    mask: under PERM-BOTH the whole difference of the two summary-level correlations is a byte-table
    sum. Otherwise the numerators and tied pairs are evaluated per input with float32 matrix products
    (exact on these small integers).
    """

    def __init__(self, x, y, z, undefined, method, rtol):
        n, m = x.shape
        off = ~np.eye(n, dtype=bool)
        # signs from the tie ranks of each input: X and Y ranked jointly, Z alone (int8 tensors (M, N, N))
        pool, _ = tie_ranks(np.ascontiguousarray(np.concatenate([x, y]).T), rtol=rtol)
        rx, ry = pool[:, :n], pool[:, n:]
        rz, tz = tie_ranks(np.ascontiguousarray(z.T), rtol=rtol)
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
        return tau_b_from_ties(num_x, self.n0, tx, tz).T, tau_b_from_ties(num_y, self.n0, ty, tz).T

    def evaluate(self, cache: BatchCache):
        px, py = self.per_input(cache)
        return mean_over_inputs(px, self.undefined), mean_over_inputs(py, self.undefined)

    def deltas(self, cache: BatchCache):
        if self.tables is not None:
            # per resample: groups g in order, then the N systems along a contiguous axis (batch invariant)
            return self.const + np.ascontiguousarray(table_sums(self.tables, cache.packed()).T).sum(axis=1)
        rx, ry = self.evaluate(cache)
        return rx - ry


def risky_columns(x, y, rtol: float = TIE_RTOL):
    """Inputs where some mask could make X' constant: every system has X or Y tied with one value.

    Ties with the tolerance of the input's column of ``X`` and ``Y`` together, at least the Pearson
    constancy floor ``2^-46 max|v|`` (:func:`metaeval.stats.correlations.ties.is_constant`, which decides these
    inputs), so that under ``tie_tolerance=0`` no input a mask can make constant is missed."""
    both = np.concatenate([x, y])
    with np.errstate(over="ignore"):
        floor = ties.NOISE_RTOL * np.abs(both).max(axis=0, keepdims=True)
    tol = np.maximum(ties.tie_tolerances(both, axis=0, rtol=rtol), floor)
    risky = np.zeros(x.shape[1], dtype=bool)
    with np.errstate(invalid="ignore", over="ignore"):
        for v in (x[0], y[0]):  # |a - v| <= tol (are_tied, which compares exactly under rtol = 0)
            risky |= ((np.abs(x - v) <= tol) | (np.abs(y - v) <= tol)).all(axis=0)
    return risky


class PermSummaryPearson:
    """Summary-level Pearson under PERM-SYSTEMS / PERM-BOTH: every sum is linear in the mask."""

    def __init__(self, x, y, z, undefined, rtol=TIE_RTOL):
        n, _ = x.shape
        zc = z - z.mean(axis=0)
        znorm = np.sqrt((zc * zc).sum(axis=0))
        self.z_const = is_constant_along(z, axis=0)
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
        self.risky = risky_columns(x, y, rtol)
        cols = np.flatnonzero(self.risky)
        self.xr, self.yr = np.ascontiguousarray(x[:, cols]), np.ascontiguousarray(y[:, cols])
        self.complete = bool(np.isfinite(self.xr).all() and np.isfinite(self.yr).all())
        self.cells = x.shape[1] * (n // 8 + 24)

    _risky_columns = staticmethod(risky_columns)

    def evaluate(self, cache: BatchCache):
        draws = cache.draws
        if draws.method == "systems":
            s = np.einsum("bn,nmk->bmk", draws.bits[cache.sl].astype(np.float64), self.lin)  # (b, M, 3)
        else:
            s = linear_sums(cache.input_major_bits(), self.lin_t)  # (b, M, 3)
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
            if self.complete and compiler.numba_available():
                from metaeval.stats.kernels import parts
                from metaeval.stats.kernels.pearson.summary_pairs_compiled import permuted_constant

                m = np.ascontiguousarray(m)
                cx, cy = np.zeros(m.shape[::2], dtype=np.bool_), np.zeros(m.shape[::2], dtype=np.bool_)
                cuts = np.linspace(0, m.shape[0], min(parts.threads(), max(m.shape[0], 1)) + 1).astype(int)

                def part(lo, hi):  # the resamples split among the threads (each one's flags alike in any thread)
                    permuted_constant(m[lo:hi], self.xr, self.yr, ties.NOISE_RTOL, cx[lo:hi])
                    permuted_constant(m[lo:hi], self.yr, self.xr, ties.NOISE_RTOL, cy[lo:hi])

                parts.run_parts(part, [(int(lo), int(hi)) for lo, hi in zip(cuts[:-1], cuts[1:]) if hi > lo])
                bad_x[:, cols] |= cx
                bad_y[:, cols] |= cy
            else:
                xp = np.where(m, self.y[:, cols], self.x[:, cols])
                yp = np.where(m, self.x[:, cols], self.y[:, cols])
                bad_x[:, cols] |= is_constant_along(xp, axis=1)
                bad_y[:, cols] |= is_constant_along(yp, axis=1)
        rx = np.where(bad_x, np.nan, np.clip(rx, -1.0, 1.0))
        ry = np.where(bad_y, np.nan, np.clip(ry, -1.0, 1.0))
        return mean_over_inputs(rx, self.undefined), mean_over_inputs(ry, self.undefined)

    def deltas(self, cache: BatchCache):
        rx, ry = self.evaluate(cache)
        return rx - ry


def pearson_terms(std: np.ndarray, z: np.ndarray):
    """The per-cell terms of summary-level Pearson under swaps: ``(z constant per input, (P, N, M, 3))``.

    With ``xc`` the metrics centred on their common mean and ``zt`` each input's centred, unit-norm
    human scores (0 where constant), the terms are ``xc``, ``xc^2`` and ``xc * zt``: every swapped
    numerator and variance is a sum of them over the cells each metric keeps.
    """
    zc = z - z.mean(axis=0)
    znorm = np.sqrt((zc * zc).sum(axis=0))
    z_const = is_constant_along(z, axis=0)
    zt = np.where(z_const, 0.0, zc / np.where(znorm > 0, znorm, 1.0))
    xc = std - std.mean(axis=(0, 1))
    return z_const, np.stack([xc, xc * xc, xc * zt], axis=-1)


class PearsonSummaryShared:
    """Summary-level Pearson of every metric pair under shared PERM-SYSTEMS / PERM-BOTH masks.

    The masked sums ``m.X_p``, ``m.X_p^2`` and ``m.(X_p z)`` are computed once per metric and batch; a
    pair's permuted sums are then differences of those (``X' = X_i + m (X_j - X_i)``). All metrics are
    centred per input by one common constant, which leaves every Pearson correlation unchanged.
    """

    def __init__(self, std: np.ndarray, z: np.ndarray, undefined: str):
        p, n, m = std.shape
        self.z_const, self.lin = pearson_terms(std, z)
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
            return linear_sums(cache.input_major_bits(), self.lin_t[i])

        return cache.get(("pearson-sums", i), make)

    def covers(self, i: int, j: int) -> bool:
        """Every pair."""
        return True

    def deltas(self, cache: BatchCache, i: int, j: int) -> np.ndarray:
        rx, ry = self.evaluate(cache, i, j)
        return rx - ry

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
            self._risky[i, j] = np.flatnonzero(risky_columns(self.std[i], self.std[j]))
        cols = self._risky[i, j]
        if cols.size:
            mk = cache.draws.mask(cache.sl)[:, :, cols]
            x, y = self.std[i][:, cols], self.std[j][:, cols]
            bad_x[:, cols] |= is_constant_along(np.where(mk, y, x), axis=1)
            bad_y[:, cols] |= is_constant_along(np.where(mk, x, y), axis=1)
        rx = np.where(bad_x, np.nan, rx)
        ry = np.where(bad_y, np.nan, ry)
        return mean_over_inputs(rx, self.undefined), mean_over_inputs(ry, self.undefined)


def permutation_kernel(x, y, z, *, level, coefficient, draws: PermutationDraws, undefined="skip",
                       tie_threshold=0.0, rtol=TIE_RTOL):
    """A fast kernel for ``r(X', Z)`` and ``r(Y', Z)`` per permutation, or None (use the generic path).

    The kernel's ``deltas(cache)`` gives ``r(X', Z) - r(Y', Z)`` for the resamples of a
    :class:`BatchCache` (``evaluate(cache)`` the two correlations, where they are computed separately),
    and ``cells`` the size of its temporaries per resample (for the default batch size).

    ``x`` and ``y`` must already be standardized. Kernels exist for complete data at the system level
    (every coefficient), and at the summary level for PERM-INPUTS (every coefficient) and for Kendall
    tau-b and Pearson under PERM-SYSTEMS / PERM-BOTH. ``rtol``: the relative tie tolerance of the rank statistics.
    """
    if not all_finite(x, y, z) or x.shape != z.shape:
        return None
    options = dict(level=level, coefficient=coefficient, undefined=undefined, tie_threshold=tie_threshold, rtol=rtol)
    if level == "by-system":  # the summary level of the transposed matrices
        inner = permutation_kernel(x.T, y.T, z.T, draws=draws.transposed(), **dict(options, level="summary"))
        return None if inner is None else Transposed(inner)
    kernel, _ = first_route(ONE_PAIR_ROUTES, case_of(z, draws.method, options), (x, y, z, draws, options))
    return kernel


_ITEM = ("summary", "by-system")  # by-system: the summary-level kernel of the transposed matrices
ONE_PAIR_ROUTES = (
    Route("one-pair-system", Regime(("system",)), "PermSystemLevel",
          lambda x, y, z, draws, o: PermSystemLevel(x, y, z, o["coefficient"], o["tie_threshold"], draws.method,
                                                    o["rtol"])),
    Route("one-pair-inputs", Regime(_ITEM, methods=("inputs",)), "PermSummaryInputs",
          lambda x, y, z, draws, o: PermSummaryInputs(x, y, z, o["coefficient"], o["undefined"], o["tie_threshold"],
                                                      o["rtol"])),
    Route("one-pair-kendall-b", Regime(_ITEM, ("kendall-b",), ("systems", "both"), tie_threshold=False),
          "PermSummaryKendall",
          lambda x, y, z, draws, o: PermSummaryKendall(x, y, z, o["undefined"], draws.method, o["rtol"])),
    Route("one-pair-pearson", Regime(_ITEM, ("pearson",), ("systems", "both"), tie_threshold=False),
          "PermSummaryPearson", lambda x, y, z, draws, o: PermSummaryPearson(x, y, z, o["undefined"], o["rtol"])),
)
"""One pair's own permutation kernel (``deltas(cache)``), in order of preference
(:mod:`metaeval.stats.kernels.regimes`); the reference path takes what none builds."""
