"""Bootstrap kernels: ``evaluate(cache)`` -> ``r(X*, Z*)`` per resample of a batch."""
from __future__ import annotations

import numpy as np

from metaeval.stats.correlations import coefficients as _coef
from metaeval.stats.corpus import CorpusScores
from metaeval.stats.kernels.batch import BatchCache, Transposed
from metaeval.stats.kernels.regimes import GLOBAL_COUNTS, SAME_SHAPE, Regime, Route, Shape, case_of, first_route
from metaeval.stats.kernels.exact_sums import ExactWeightedSums
from metaeval.stats.kernels.ranks import (
    cached_index,
    near_constant_groups,
    rank_pair_signs,
    tie_ranks,
    upper_pairs,
)
from metaeval.stats.kernels.rows import (
    PAIRWISE_SYSTEMS_MAX,
    mean_over_inputs,
    all_finite,
    tau_b_from_ties,
    weighted_mean_over_inputs,
    kendall_b_weighted,
    system_correlation,
)
from metaeval.stats.resampling.draws import BootstrapDraws
from metaeval.stats.correlations.ties import TIE_RTOL, is_constant

# ----------------------------------------------------------------------------------------------------
# bootstrap kernels: evaluate(cache) -> r(X*, Z*) of shape (b,); cells = temporaries per resample

#: From this many inputs on, the system level takes its resampled sums from :mod:`~metaeval.stats.kernels.many_inputs.system_sums`.
SHARED_SUMS_INPUTS = 4096


class BootSystemLevel:
    """System level: means are linear in the column weights; rows are gathered (duplicates kept).

    Column-weighted sums are exact (:class:`ExactWeightedSums`), so resampled means that are equal in
    exact arithmetic are equal here, whatever the summation order.
    """

    def __init__(self, x, z, coefficient, tie_threshold, full_test_set, rtol):
        n = x.shape[0]
        self.rtol = rtol
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
        self.shared = None
        if full_test_set:
            self.sums = (ExactWeightedSums(x, self.mx), ExactWeightedSums(z, self.mz))
        elif self.mx >= SHARED_SUMS_INPUTS:  # many inputs: the sums of x and of z, shared by the calls (shared_sums)
            self.shared = (x, z)
        else:
            self.sums = ExactWeightedSums(np.concatenate([x, z]), self.mx)

    def _resampled_inputs(self, cache: BatchCache):
        """System scores of X and Z under the batch's input counts, each (b, N)."""
        if self.full:
            return (self.sums[0](cache.col_weights()) / self.mx,
                    self.sums[1](cache.col_weights(human=True)) / self.mz)
        if self.shared is not None:
            from metaeval.stats.kernels.many_inputs.system_sums import resampled_sums

            return tuple(resampled_sums(v, cache.draws)[cache.sl] / self.mx for v in self.shared)
        both = self.sums(cache.col_weights()) / self.mx
        return both[:, : self.n], both[:, self.n :]

    def means(self, cache: BatchCache, gather: bool = True):
        """Resampled system means of X and Z, each (b, N) (of the distinct systems if not ``gather``)."""
        draws = cache.draws
        b = len(range(*cache.sl.indices(draws.n_resamples)))
        if draws.cols is None:
            xm = np.broadcast_to(self.xbar, (b, self.n))
            zm = np.broadcast_to(self.zbar, (b, self.n))
        else:
            xm, zm = self._resampled_inputs(cache)
        if gather and draws.rows is not None:
            index = (cached_index(("rows", b), lambda: np.arange(b)[:, None]), draws.rows[cache.sl])
            xm, zm = xm[index], zm[index]
        return xm, zm

    def evaluate(self, cache: BatchCache):
        if self.weighted:  # Kendall over the distinct systems, duplicates as multiplicities
            xm, zm = self.means(cache, gather=False)
            return kendall_b_weighted(xm, zm, cache.row_weights(), rtol=self.rtol)
        xm, zm = self.means(cache)
        units = None if cache.draws.rows is None else cache.draws.rows[cache.sl]
        return system_correlation(xm, zm, self.coefficient, self.tie_threshold, units=units, rtol=self.rtol)


class BootSystemCorpus(BootSystemLevel):
    """System level of a corpus metric (:class:`CorpusScores`): the metric's system scores of a resample
    are ``aggregate(sum_m c_m stats[:, m])`` with its input counts ``c``; the human's means as above."""

    def __init__(self, x: CorpusScores, z, coefficient, tie_threshold, full_test_set, rtol):
        n, mx, s = x.statistics.shape
        self.rtol = rtol
        self.cells = 3 * z.shape[1] + (s + 16) * n + (n * (n - 1) // 2 if coefficient == "kendall-b" else 0)
        self.n, self.mx, self.mz = n, mx, z.shape[1]
        self.x = x
        self.xbar, self.zbar = x.system_scores(), z.mean(axis=1)
        self.coefficient = coefficient
        self.tie_threshold = tie_threshold
        self.full = full_test_set
        self.weighted = coefficient == "kendall-b" and not tie_threshold and n <= PAIRWISE_SYSTEMS_MAX
        self.zsums = ExactWeightedSums(z, self.mz)

    def _resampled_inputs(self, cache: BatchCache):
        return (self.x.system_scores(cache.col_weights()),
                self.zsums(cache.col_weights(human=self.full)) / self.mz)


class BootSummaryInputs:
    """Summary level under BOOT-INPUTS: count-weighted mean of the per-input correlations."""

    def __init__(self, x, z, coefficient, undefined, tie_threshold, rtol):
        self.r = _coef.correlation(x, z, coefficient, axis=0, tie_threshold=tie_threshold, rtol=rtol)
        self.undefined = undefined
        self.cells = 8 * x.shape[1]

    def evaluate(self, cache: BatchCache):
        c = cache.col_weights()
        return weighted_mean_over_inputs(np.broadcast_to(self.r, c.shape), c, self.undefined)


class BootSummaryKendall:
    """Summary-level Kendall tau-b with system multiplicities ``w``.

    Over the pairs ``a < b`` of distinct systems, with ``ww_ab = w_a w_b``, the numerator of input ``j``
    is ``sum_ab ww_ab S_jab T_jab`` (signs of the metric and of the humans) and the pairs tied in x are
    ``sum_a w_a (w_a - 1) / 2 + sum_ab ww_ab [S_jab = 0]`` (copies of one system are tied); likewise in z.
    One float32 matrix product ``ww (b, P) @ (P, M + M_x + M_z)`` gives every numerator and, for the inputs
    that have ties, every tie count; it is exact because every operand and partial sum is a small integer.
    """

    def __init__(self, x, z, undefined, rtol):
        n, m = x.shape
        first, second = upper_pairs(n)
        rx, tx = tie_ranks(np.ascontiguousarray(x.T), rtol=rtol)  # one row per input
        rz, tz = tie_ranks(np.ascontiguousarray(z.T), rtol=rtol)
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
        return tau_b_from_ties(num, self.n0, tx, tz)

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
            return mean_over_inputs(tau, self.undefined)
        return weighted_mean_over_inputs(tau, cache.col_weights(), self.undefined)


class BootSummaryPearson:
    """Summary-level Pearson with system multiplicities ``w``: weighted moments from one matrix product."""

    def __init__(self, x, z, undefined):
        n, m = x.shape
        xc = x - x.mean(axis=0)
        zc = z - z.mean(axis=0)
        self.moments = np.concatenate([xc, zc, xc * xc, zc * zc, xc * zc], axis=1)  # (N, 5M)
        self.n, self.m = n, m
        self.cells = m * (n + 24)
        self.undefined = undefined
        self.tied = (near_constant_groups(x), near_constant_groups(z))

    @staticmethod
    def _constant(tied, chosen, count, m):
        """(b, M): the columns whose chosen values are constant for Pearson's r. Candidates: the chosen
        systems all lie in one group of :func:`~metaeval.stats.kernels.ranks.near_constant_groups`, i.e. their dense ranks have zero variance,
        ``n_c sum r^2 = (sum r)^2`` over the ``n_c`` chosen systems (integers below ``N^4``, exact in float64
        for any summation order); each candidate with two or more systems is then decided by
        :func:`metaeval.stats.correlations.ties.is_constant` of its chosen values (rare: near-copies of one value)."""
        moments, cols, values = tied
        out = np.repeat(count[:, None] == 1, m, axis=1)
        if cols.size:
            s = chosen @ moments
            k = cols.size
            one_group = (count[:, None] * s[:, k:] == s[:, :k] * s[:, :k]) & (count[:, None] > 1)
            rows, which = np.nonzero(one_group)
            if rows.size:
                picked = np.where(chosen[rows] > 0, values[:, which].T, np.nan)  # (K, N)
                one_group[rows, which] = is_constant(picked, axis=1)
            out[:, cols] |= one_group
        return out

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
        chosen = (w > 0).astype(np.float64)
        count = chosen.sum(axis=1)
        bad = self._constant(self.tied[0], chosen, count, self.m)
        bad |= self._constant(self.tied[1], chosen, count, self.m)
        r = np.where(bad, np.nan, r)
        if cache.draws.cols is None:
            return mean_over_inputs(r, self.undefined)
        return weighted_mean_over_inputs(r, cache.col_weights(), self.undefined)


#: The summary-level Spearman kernel holds ``2 N^2 M`` rank coefficients and multiplies ``N^2 M`` per
#: resample; beyond this many (e.g. by-system level over thousands of inputs) the reference path, which
#: sorts, is used.
SPEARMAN_KERNEL_MAX = 1 << 23


class BootSummarySpearman:
    """Summary-level Spearman with system multiplicities ``w`` (BOOT-SYSTEMS / BOOT-BOTH).

    In the resampled vector of input ``j`` system ``a`` appears ``w_a`` times, and its average rank is
    ``R_a = (V_a + 1) / 2`` with ``V_a = sum_c w_c H_jac`` and ``H_jac = 2, 1, 0`` as ``x_jc`` is below,
    tied with (``c = a`` included: copies are tied) or above ``x_ja``. One product ``w (b, N) @ H (N, M N)``
    per score gives every resampled rank, exactly (small integers). Since ``H_ac + H_ca = 2`` for ``a != c``
    and ``H_aa = 1``, ``sum_a w_a V_a = N^2`` (``N = sum_a w_a``), and the centred sums of Spearman's
    Pearson-of-ranks reduce to ``4 S_xz = sum_a w_a V^x_a V^z_a - N^3`` (likewise ``S_xx``, ``S_zz``):
    integers, summed exactly. ``r = S_xz / (sqrt(S_xx) sqrt(S_zz))`` is NaN where a resampled vector is
    constant (``S_xx = 0``), as in :func:`metaeval.stats.correlations.coefficients.correlation`, and equals the generic
    path's value bitwise per input (its centred ranks are exact half-integers too). The tie groups are
    those of :func:`tie_ranks` (under the tolerance ``rtol``), so exact and tolerant ties give the generic ranks.
    """

    def __init__(self, x, z, undefined, rtol):
        n, m = x.shape
        # float32 holds every integer below 2^24: V <= 2 N^2 and sum_a w_a V_a^2 <= 4 N^3 are exact for
        # N <= 160; larger N uses float64 (exact to 2^53)
        self.dtype = np.float32 if 4 * n**3 < 2**24 else np.float64
        self.hx = self._h(tie_ranks(np.ascontiguousarray(x.T), rtol=rtol)[0], self.dtype)
        self.hz = self._h(tie_ranks(np.ascontiguousarray(z.T), rtol=rtol)[0], self.dtype)
        self.n, self.m = n, m
        self.undefined = undefined
        self.cells = 3 * m * n + 16 * m  # V^x, V^z and their products (float32 or 64), in float64 cells

    @staticmethod
    def _h(ranks, dtype):
        """``H`` as (N, M N) from dense ranks (M, N): column ``j N + a`` holds ``2 [r_jc < r_ja] + [r_jc = r_ja]``."""
        ra = ranks[:, :, None].astype(np.int16)
        rc = ranks[:, None, :].astype(np.int16)
        h = 2 * (rc < ra) + (rc == ra)  # (M, a, c)
        return np.ascontiguousarray(h.transpose(2, 0, 1).reshape(ranks.shape[1], -1), dtype=dtype)

    def per_input(self, cache: BatchCache):
        w = cache.row_weights()
        b, n, m = w.shape[0], self.n, self.m
        wf = w.astype(self.dtype)
        vx = (wf @ self.hx).reshape(b, m, n)
        vz = (wf @ self.hz).reshape(b, m, n)
        wcol = wf[:, :, None]
        cube = float(n) ** 3
        prod = vx * vz  # sums over systems as batched matrix-vector products with w: exact integers
        sxz = np.matmul(prod, wcol)[..., 0].astype(np.float64) - cube
        np.multiply(vx, vx, out=prod)
        sxx = np.matmul(prod, wcol)[..., 0].astype(np.float64) - cube
        np.multiply(vz, vz, out=prod)
        szz = np.matmul(prod, wcol)[..., 0].astype(np.float64) - cube
        r = _coef.pearson_r(sxz / 4.0, sxx / 4.0, np.sqrt(szz / 4.0))
        r[(sxx <= 0) | (szz <= 0)] = np.nan
        return r

    def evaluate(self, cache: BatchCache):
        r = self.per_input(cache)
        if cache.draws.cols is None:
            return mean_over_inputs(r, self.undefined)
        return weighted_mean_over_inputs(r, cache.col_weights(), self.undefined)

def bootstrap_kernel(x, z, *, level, coefficient, draws: BootstrapDraws, undefined="skip",
                     tie_threshold=0.0, full_test_set=False, rtol=TIE_RTOL):
    """A fast kernel computing ``r(X*, Z*)`` per bootstrap resample, or None (use the generic path).

    Kernels exist for complete data at the system level (every coefficient, also in full-test-set mode),
    and at the summary level for BOOT-INPUTS (every coefficient) and for Kendall tau-b, Pearson and Spearman under
    BOOT-SYSTEMS / BOOT-BOTH. ``rtol``: the relative tie tolerance of the rank statistics.
    """
    options = dict(level=level, coefficient=coefficient, undefined=undefined, tie_threshold=tie_threshold,
                   full_test_set=full_test_set, rtol=rtol)
    if isinstance(x, CorpusScores):
        complete = bool(x.present.all() and all_finite(z))
        case = case_of(z, draws.method, options, complete=complete, full_test_set=full_test_set, corpus=True)
    else:
        if level == "by-system" and x.shape == z.shape and not full_test_set and all_finite(x, z):
            inner = bootstrap_kernel(x.T, z.T, draws=draws.transposed(), **dict(options, level="summary"))
            return None if inner is None else Transposed(inner)
        case = case_of(z, draws.method, options, complete=all_finite(x, z), same_shape=x.shape == z.shape,
                       full_test_set=full_test_set)
    kernel, _ = first_route(BOOTSTRAP_ROUTES, case, (x, z, draws, options))
    return kernel


def _many_inputs(case) -> bool:
    from metaeval.stats.kernels.many_inputs.summary_bootstrap import MIN_INPUTS

    return case.inputs >= MIN_INPUTS


def _global_pairs(x, z, draws, o):
    from metaeval.stats.kernels.kendall.global_bootstrap import GlobalPairsBootstrap

    return None if draws.cols_human is not None else GlobalPairsBootstrap(x, z, o["coefficient"], rtol=o["rtol"])


def _input_chunks(x, z, draws, o):
    from metaeval.stats.kernels.many_inputs.summary_bootstrap import INPUT_KERNELS

    return INPUT_KERNELS[o["coefficient"]](x, z, o["undefined"], o["rtol"])


_ITEM = ("summary", "by-system")  # by-system: the summary-level kernel of the transposed matrices
_RESAMPLED_SYSTEMS = ("systems", "both")
SYSTEM_SHAPE = Shape("X and Z of one shape, or the full test set", lambda c: c.same_shape or c.full_test_set)
MANY_INPUTS = Shape("M >= 4096 inputs; X and Z of one shape", lambda c: _many_inputs(c) and SAME_SHAPE.holds(c))
SPEARMAN_SMALL = Shape("N^2 M <= 2^23; X and Z of one shape",
                       lambda c: c.systems ** 2 * c.inputs <= SPEARMAN_KERNEL_MAX and SAME_SHAPE.holds(c))
BOOTSTRAP_ROUTES = (
    Route("boot-corpus-system", Regime(("system",), corpus=True), "BootSystemCorpus",
          lambda x, z, draws, o: BootSystemCorpus(x, z, o["coefficient"], o["tie_threshold"], o["full_test_set"],
                                                  o["rtol"])),
    Route("boot-system", Regime(("system",), shape=SYSTEM_SHAPE), "BootSystemLevel",
          lambda x, z, draws, o: BootSystemLevel(x, z, o["coefficient"], o["tie_threshold"], o["full_test_set"],
                                                 o["rtol"])),
    Route("boot-global-pair-counts", Regime(("global",), GLOBAL_COUNTS, ("both",), tie_threshold=False, numba=True,
                                            shape=SAME_SHAPE), "GlobalPairsBootstrap", _global_pairs),
    Route("boot-inputs", Regime(_ITEM, methods=("inputs",), shape=SAME_SHAPE), "BootSummaryInputs",
          lambda x, z, draws, o: BootSummaryInputs(x, z, o["coefficient"], o["undefined"], o["tie_threshold"],
                                                   o["rtol"])),
    Route("boot-many-inputs", Regime(_ITEM, ("spearman", "kendall-b", "pearson"), _RESAMPLED_SYSTEMS,
                                     tie_threshold=False, numba=True, shape=MANY_INPUTS),
          "KendallInputs / PearsonInputs / SpearmanInputs", _input_chunks),
    Route("boot-kendall-b", Regime(_ITEM, ("kendall-b",), _RESAMPLED_SYSTEMS, tie_threshold=False, shape=SAME_SHAPE),
          "BootSummaryKendall", lambda x, z, draws, o: BootSummaryKendall(x, z, o["undefined"], o["rtol"])),
    Route("boot-pearson", Regime(_ITEM, ("pearson",), _RESAMPLED_SYSTEMS, tie_threshold=False, shape=SAME_SHAPE),
          "BootSummaryPearson", lambda x, z, draws, o: BootSummaryPearson(x, z, o["undefined"])),
    Route("boot-spearman", Regime(_ITEM, ("spearman",), _RESAMPLED_SYSTEMS, tie_threshold=False,
                                  shape=SPEARMAN_SMALL),
          "BootSummarySpearman", lambda x, z, draws, o: BootSummarySpearman(x, z, o["undefined"], o["rtol"])),
)
"""One metric's bootstrap kernel (``evaluate(cache)``), in order of preference
(:mod:`metaeval.stats.kernels.regimes`); the reference path takes what none builds."""
