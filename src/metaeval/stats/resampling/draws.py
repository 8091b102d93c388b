"""Random draws for the bootstrap and for permutation tests, generated once and shared.

Every resampling procedure of :mod:`metaeval.stats` works in two steps: the draws (bootstrap indices or
permutation masks) are generated once per call from a :class:`numpy.random.Generator`, then the statistic
is evaluated for every draw. Keeping the draws explicit lets one call share them across all metric pairs
(:mod:`metaeval.stats.significance.pairs`), lets the fast kernels (:mod:`metaeval.stats.kernels`) and the generic path
see exactly the same resamples, and makes results independent of the batch size used to evaluate them.

Resampling schemes (Deutsch, Dror & Roth, 2021), for score matrices of shape ``(N systems, M inputs)``:

``"systems"``
    Bootstrap: ``X*[a, :] = X[I_a, :]`` with ``I_1..I_N`` drawn uniformly with replacement from the N rows.
    Permutation: one bit per system, ``X'[a, :] = Y[a, :] if m_a else X[a, :]``.
``"inputs"``
    Bootstrap: ``X*[:, b] = X[:, J_b]`` with ``J_1..J_M`` drawn with replacement from the M columns.
    Permutation: one bit per input, ``X'[:, b] = Y[:, b] if m_b else X[:, b]``.
``"both"``
    Bootstrap: rows and columns drawn independently, ``X*[a, b] = X[I_a, J_b]``.
    Permutation: one bit per *cell*, ``X'[a, b] = Y[a, b] if m_ab else X[a, b]`` with the ``m_ab``
    independent Bernoulli(1/2) (the paper's Algorithm 2, as in SacreROUGE). nlpstats 0.0.1 instead swaps
    whole rows and then whole columns, so that a cell is swapped iff ``r_a XOR c_b``: its masks have only
    ``N + M - 1`` free bits and its "both" is a different, more conservative, test. The bits are drawn as
    uniform random bytes, one byte for 8 inputs of a system (:attr:`PermutationDraws.packed`).

In full-test-set mode the metric has scores on ``M_test`` inputs and the humans on ``M_jud`` inputs; the
bootstrap over inputs then resamples the metric's inputs and the humans' inputs independently (the two
sets of inputs are different samples), while systems are resampled jointly.

References
----------
Deutsch, D., Dror, R. and Roth, D. (2021). A Statistical Analysis of Summarization Evaluation Metrics
using Resampling Methods. Transactions of the ACL 9, 1132-1146.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from metaeval.errors import DegenerateWarning, ParameterError, check_int
from metaeval.stats.resampling.compact_draws import RegeneratedDraws
from metaeval.vocabulary import RESAMPLING_METHODS, check_method

__all__ = [
    "METHODS",
    "BootstrapDraws",
    "PermutationDraws",
    "bootstrap_draws",
    "permutation_draws",
    "as_generator",
    "check_rng",
    "fresh_seed",
    "count_weights",
    "batch_slices",
    "default_batch",
]

#: Canonical resampling methods (BOOT-* and PERM-* of Deutsch et al. 2021).
METHODS = RESAMPLING_METHODS

#: Target number of float64 cells of the largest temporary array of one batch (about 32 MB).
BATCH_CELLS = 4_000_000


#: A seed drawn for ``rng=None`` is a uniform integer in ``[0, 2**63)`` (an int64, exact in every output format).
FRESH_SEED_BITS = 63


def fresh_seed() -> int:
    """A concrete non-negative integer seed drawn from fresh operating-system entropy.

    ``numpy.random.SeedSequence()`` gathers 128 bits of entropy; its top :data:`FRESH_SEED_BITS` bits
    are the seed, so two fresh runs share a seed with probability about ``2**-63``.
    """
    return int(np.random.SeedSequence().entropy) >> (128 - FRESH_SEED_BITS)


def check_rng(rng: Any) -> tuple[np.random.Generator, Any]:
    """The one validator of ``rng``: a Generator for it, and what a signature records as its seed.

    The library-wide seed rule: ``rng=None`` (the default everywhere) means fresh entropy, but a concrete
    non-negative integer seed is drawn (:func:`fresh_seed`) and returned, so the signature records
    ``seed:<int>`` and passing that int as ``rng`` gives the same numbers. A non-negative int seed is
    recorded as itself; a Generator as ``'generator'`` (its state is not in the signature, so the number
    cannot be rebuilt from the signature alone).

    Returns
    -------
    (numpy.random.Generator, int or 'generator')
        ``default_rng(seed)`` for None or an int, the Generator itself otherwise; and the recorded seed.

    Raises
    ------
    ParameterError
        ``rng`` is not None, a non-negative integer or a Generator.
    """
    if rng is None:
        seed = fresh_seed()
        return np.random.default_rng(seed), seed
    if isinstance(rng, np.random.Generator):
        return rng, "generator"
    if isinstance(rng, (bool, np.bool_)) or not isinstance(rng, (int, np.integer)) or rng < 0:
        raise ParameterError(
            f"`rng` must be None, a non-negative integer seed or a numpy.random.Generator; got {rng!r}."
        )
    return np.random.default_rng(int(rng)), int(rng)


def as_generator(rng: Any) -> np.random.Generator:
    """:func:`check_rng`'s Generator for ``rng``."""
    return check_rng(rng)[0]


def warn_if_fixed(family: str, method: str, n_systems: int, n_inputs: int) -> None:
    """Warn (:class:`~metaeval.errors.DegenerateWarning`) when ``method`` resamples an axis of size 1.

    One input cannot be resampled: BOOT-INPUTS gives the original data every time (a zero-width
    interval), BOOT-BOTH resamples the systems only, PERM-INPUTS has 2 permutations. Likewise for one
    system. The result is still computed; the warning says what it cannot show.
    """
    for axis, size, resampled in (("system", n_systems, ("systems", "both")), ("input", n_inputs, ("inputs", "both"))):
        if size == 1 and method in resampled:
            what = "only the systems vary" if axis == "input" else "only the inputs vary"
            if method != "both":
                what = "every resample is the original data" if family == "BOOT" else "there are 2 permutations"
            warnings.warn(f"{family}-{method.upper()} cannot resample the {axis}s: the data has 1 {axis} ({what}); "
                          f"the result shows no {axis}-to-{axis} variability.", DegenerateWarning, stacklevel=3)


def default_batch(cells_per_resample: int, budget: int = BATCH_CELLS) -> int:
    """Number of resamples per batch so that one batch holds about ``budget`` cells."""
    return max(1, int(budget // max(1, int(cells_per_resample))))


def check_batch(batch: Any, cells_per_resample: int, budget: int = BATCH_CELLS) -> int:
    """Validate ``batch`` (None = automatic, ``budget`` cells per batch) and return the resamples per batch."""
    if batch is None:
        return default_batch(cells_per_resample, budget)
    return check_int("batch", batch, minimum=1)


def batch_slices(n: int, batch: int):
    """Yield ``slice`` objects covering ``range(n)`` in chunks of ``batch``."""
    for start in range(0, n, batch):
        yield slice(start, min(n, start + batch))


#: Input multiplicities of all resamples are kept (and shared by every batch and call) up to this many cells.
_WEIGHTS_CACHED_CELLS = 1 << 22


def count_weights(indices: np.ndarray, size: int) -> np.ndarray:
    """Multiplicities of ``0..size-1`` in each row of ``indices`` (shape ``(k, n)``) -> ``(k, size)`` int."""
    k = indices.shape[0]
    flat = indices + (np.arange(k) * size)[:, None]
    return np.bincount(flat.ravel(), minlength=k * size).reshape(k, size)


@dataclass(frozen=True)
class BootstrapDraws:
    """Bootstrap indices shared by every statistic of one call.

    Attributes
    ----------
    method : str
        ``"systems"``, ``"inputs"`` or ``"both"``.
    n_systems, n_inputs : int
        Shape of the resampled matrices (``n_inputs`` is the metric's ``M_test`` in full-test-set mode).
    rows : ndarray of int, shape (k, n_systems), or None
        Resampled system indices (None when systems are not resampled).
    cols : ndarray of int, shape (k, n_inputs), or None
        Resampled input indices of the metric (and of the humans unless ``cols_human`` is set).
    cols_human : ndarray of int, shape (k, n_inputs_human), or None
        Full-test-set mode: the humans' inputs, resampled independently of the metric's.
    """

    method: str
    n_systems: int
    n_inputs: int
    rows: np.ndarray | None
    cols: np.ndarray | None
    cols_human: np.ndarray | None = None
    n_inputs_human: int | None = None

    @property
    def n_resamples(self) -> int:
        ref = self.rows if self.rows is not None else self.cols
        return int(ref.shape[0])

    def row_indices(self, sl: slice = slice(None)) -> np.ndarray:
        """Row indices of resamples ``sl`` (the identity when systems are not resampled)."""
        if self.rows is not None:
            return self.rows[sl]
        k = len(range(*sl.indices(self.n_resamples)))
        return np.broadcast_to(np.arange(self.n_systems), (k, self.n_systems))

    def col_indices(self, sl: slice = slice(None), *, human: bool = False) -> np.ndarray:
        """Column indices of resamples ``sl`` (of the humans' inputs if ``human``)."""
        if human and self.cols_human is not None:
            return self.cols_human[sl]
        if self.cols is not None and not (human and self.n_inputs_human is not None):
            return self.cols[sl]
        k = len(range(*sl.indices(self.n_resamples)))
        m = self.n_inputs_human if human and self.n_inputs_human is not None else self.n_inputs
        return np.broadcast_to(np.arange(m), (k, m))

    @cached_property
    def _row_weights(self) -> np.ndarray:
        weights = count_weights(self.rows, self.n_systems)
        weights.setflags(write=False)  # shared by every batch (and every call with the same seed)
        return weights

    def row_weights(self, sl: slice = slice(None)) -> np.ndarray:
        """Multiplicity of every system in resamples ``sl``: int array ``(k, n_systems)``."""
        if self.rows is None:
            k = len(range(*sl.indices(self.n_resamples)))
            return np.ones((k, self.n_systems), dtype=np.int64)
        return self._row_weights[sl]

    def col_weights(self, sl: slice = slice(None), *, human: bool = False) -> np.ndarray:
        """Multiplicity of every input in resamples ``sl``: int array ``(k, n_inputs)``."""
        separate = human and self.n_inputs_human is not None  # full-test-set: humans' own inputs
        source = self.cols_human if separate else self.cols
        if isinstance(source, RegeneratedDraws):  # many draws: their counts are kept, not their indices
            return source.counts[sl].astype(np.int64)
        idx = self.col_indices(sl, human=human)
        m = self.n_inputs_human if separate else self.n_inputs
        if source is None:  # the inputs are not resampled
            return np.ones(idx.shape, dtype=np.int64)
        if self.n_resamples * m <= _WEIGHTS_CACHED_CELLS:
            return self._col_weights(separate)[sl]
        return count_weights(idx, m)

    def _col_weights(self, human: bool) -> np.ndarray:
        """Multiplicities of the inputs (the humans' own if ``human``) in every resample, computed once and
        shared by every batch (read-only)."""
        cache = self.__dict__.setdefault("_col_weight_cache", {})
        if human not in cache:
            m = self.n_inputs_human if human else self.n_inputs
            weights = count_weights(self.col_indices(human=human), m)
            weights.setflags(write=False)
            cache[human] = weights
        return cache[human]

    def transposed(self) -> "BootstrapDraws":
        """The same draws for the transposed matrices (systems and inputs exchanged)."""
        return self._transposed

    @cached_property
    def _transposed(self) -> "BootstrapDraws":
        swap = {"systems": "inputs", "inputs": "systems", "both": "both"}[self.method]
        return BootstrapDraws(swap, self.n_inputs, self.n_systems, self.cols, self.rows)

    def distinct_systems(self) -> np.ndarray:
        """Number of distinct systems in every resample (``n_systems`` when rows are not resampled)."""
        if self.rows is None:
            return np.full(self.n_resamples, self.n_systems)
        return (self.row_weights() > 0).sum(axis=1)


def bootstrap_draws(
    n_systems: int,
    n_inputs: int,
    *,
    method: str,
    n_resamples: int,
    rng: Any = None,
    n_inputs_human: int | None = None,
) -> BootstrapDraws:
    """Draw bootstrap indices for BOOT-SYSTEMS, BOOT-INPUTS or BOOT-BOTH.

    Parameters
    ----------
    n_systems, n_inputs : int
        Shape ``(N, M)`` of the score matrices (``M`` = the metric's inputs in full-test-set mode).
    method : {"systems", "inputs", "both"}
        Which axis (or both) is resampled with replacement.
    n_resamples : int
        Number of bootstrap resamples ``k``.
    rng : None, int or numpy.random.Generator
        Source of randomness; the rows are drawn first, then the columns (then the humans' columns).
    n_inputs_human : int, optional
        Full-test-set mode: number of judged inputs ``M_jud``; the humans' inputs are then resampled
        independently of the metric's.

    Returns
    -------
    BootstrapDraws

    Notes
    -----
    An integer seed always gives the same draws, so the draws of the last integer seed are kept and
    returned again (read-only arrays) to a call with the same seed, shape, method and ``k``: the cells of
    a correlation table, which share one seed by design, draw and count the resampled units once.
    A Generator or None draws afresh every time.
    """
    method = check_method(method)
    n_systems = check_int("n_systems", n_systems, minimum=1)
    n_inputs = check_int("n_inputs", n_inputs, minimum=1)
    k = check_int("n_resamples", n_resamples, minimum=1)
    if n_inputs_human is not None:
        n_inputs_human = check_int("n_inputs_human", n_inputs_human, minimum=1)
    warn_if_fixed("BOOT", method, n_systems, n_inputs)
    key = None
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, (bool, np.bool_)):
        # an integer seed always gives the same draws: a table's cells (same shape, method, k and seed)
        # share one set, its multiplicities computed once (read-only arrays)
        key = (method, n_systems, n_inputs, k, int(rng), n_inputs_human)
        if key in _DRAWS_MEMO:
            return _DRAWS_MEMO[key]
    gen = as_generator(rng)
    rows = cols = cols_human = None
    if method in ("systems", "both"):
        rows = gen.integers(0, n_systems, size=(k, n_systems))
    if method in ("inputs", "both"):
        cols = _column_draws(gen, n_inputs, k)
        if n_inputs_human is not None:
            cols_human = _column_draws(gen, n_inputs_human, k)
    draws = BootstrapDraws(method, n_systems, n_inputs, rows, cols, cols_human, n_inputs_human)
    if key is not None:
        for array in (rows, cols, cols_human):
            if array is not None:
                array.setflags(write=False)
        _DRAWS_MEMO.clear()  # one set kept: the last seed's
        _DRAWS_MEMO[key] = draws
    return draws


_DRAWS_MEMO: dict = {}

#: Input draws of this many resamples x inputs and more are generated in blocks of rows and kept as int32.
_COMPACT_CELLS = 1 << 22


def _column_draws(gen: np.random.Generator, m: int, k: int) -> np.ndarray | RegeneratedDraws:
    """``gen.integers(0, m, size=(k, m))``: the same numbers (successive calls continue one stream), generated
    in blocks and, when they are many, kept as their input counts with the indices regenerated on demand
    (:class:`~metaeval.stats.resampling.compact_draws.RegeneratedDraws`; 1000 resamples of 100,000 inputs:
    100 MB instead of 800)."""
    if k * m < _COMPACT_CELLS or m > np.iinfo(np.int32).max:
        return gen.integers(0, m, size=(k, m))
    return RegeneratedDraws(gen, m, k, max(1, _COMPACT_CELLS // m))


class PermutationDraws:
    """Swap masks of a permutation test, shared by every metric pair of one call.

    Parameters / attributes
    -----------------------
    method : str
        ``"systems"``, ``"inputs"`` or ``"both"``.
    n_systems, n_inputs : int
        Shape of the score matrices.
    bits : ndarray of bool
        ``(k, N)`` for "systems", ``(k, M)`` for "inputs", ``(k, N, M)`` for "both"; True = swap. For
        PERM-BOTH draws made by :func:`permutation_draws` it is unpacked from ``packed`` on first access.
    packed : ndarray of uint8, shape (ceil(M / 8), N, k), PERM-BOTH only
        The same bits, eight inputs per byte: bit ``t`` (least significant first) of ``packed[g, a, s]``
        is the bit of cell ``(s, a, 8 g + t)``; bits of cells beyond ``M`` are ignored. Kernels read it
        directly (byte lookup tables, resamples contiguous) or unpack it to ``(M, N, k)``.
    """

    __slots__ = ("method", "n_systems", "n_inputs", "_bits", "_packed", "_transposed")

    def __init__(self, method: str, n_systems: int, n_inputs: int, bits: np.ndarray | None = None, *,
                 packed: np.ndarray | None = None):
        if (bits is None) == (packed is None):
            raise ParameterError("`bits` or `packed` must be given, not both; got "
                                 f"{'neither' if bits is None else 'both'}.")
        if packed is not None and method != "both":
            raise ParameterError(f"`packed` must be None unless `method` is 'both'; got method {method!r}.")
        self.method = method
        self.n_systems = int(n_systems)
        self.n_inputs = int(n_inputs)
        self._bits = None if bits is None else np.asarray(bits, dtype=bool)
        self._packed = packed
        self._transposed = None

    def __repr__(self) -> str:
        return (f"PermutationDraws(method={self.method!r}, n_systems={self.n_systems}, n_inputs={self.n_inputs}, "
                f"n_resamples={self.n_resamples})")

    @property
    def n_resamples(self) -> int:
        if self._packed is not None:
            return int(self._packed.shape[2])
        return int(self._bits.shape[0])

    @property
    def bits(self) -> np.ndarray:
        if self._bits is None:
            # stored (M, N, k) in memory, viewed as (k, N, M)
            self._bits = unpack_cells(self._packed, self.n_inputs).view(bool).transpose(2, 1, 0)
        return self._bits

    @property
    def packed(self) -> np.ndarray:
        """PERM-BOTH bits packed eight inputs per byte, ``(ceil(M / 8), N, k)`` uint8 (see the class doc)."""
        if self.method != "both":
            raise ParameterError(f"`packed` bits exist for method 'both' only; got method {self.method!r}.")
        if self._packed is None:
            k, n, m = self._bits.shape
            g = -(-m // 8)
            padded = np.zeros((g * 8, n, k), dtype=np.uint8)
            padded[:m] = self._bits.transpose(2, 1, 0)
            self._packed = np.packbits(padded.reshape(g, 8, n, k), axis=1, bitorder="little")[:, 0]
        return self._packed

    def transposed(self) -> "PermutationDraws":
        """The same masks for the transposed matrices (systems and inputs exchanged)."""
        if self._transposed is None:
            swap = {"systems": "inputs", "inputs": "systems", "both": "both"}[self.method]
            bits = self.bits.transpose(0, 2, 1) if self.method == "both" else self.bits
            self._transposed = PermutationDraws(swap, self.n_inputs, self.n_systems, bits)
        return self._transposed

    def mask(self, sl: slice = slice(None)) -> np.ndarray:
        """Cell masks of resamples ``sl`` as a read-only bool array ``(k, N, M)`` (True = swap)."""
        if self.method == "both":
            if self._bits is None:
                return unpack_cells(self._packed[:, :, sl], self.n_inputs).view(bool).transpose(2, 1, 0)
            return self._bits[sl]
        b = self._bits[sl]
        shape = (b.shape[0], self.n_systems, self.n_inputs)
        if self.method == "systems":
            return np.broadcast_to(b[:, :, None], shape)
        return np.broadcast_to(b[:, None, :], shape)

    def cell_bits(self, sl: slice = slice(None)) -> np.ndarray:
        """PERM-BOTH bits of resamples ``sl`` as a C-contiguous uint8 array ``(M, N, k)`` (1 = swap)."""
        if self._bits is None:
            return unpack_cells(self._packed[:, :, sl], self.n_inputs)
        return np.ascontiguousarray(self._bits[sl].transpose(2, 1, 0)).view(np.uint8)


def unpack_cells(packed: np.ndarray, n_inputs: int) -> np.ndarray:
    """Unpack ``(G, N, k)`` bytes (eight inputs per byte, least significant bit first) to ``(M, N, k)`` uint8."""
    g, n, k = packed.shape
    out = np.empty((g, 8, n, k), dtype=np.uint8)
    for t in range(8):
        np.bitwise_and(np.right_shift(packed, t), 1, out=out[:, t])
    return out.reshape(g * 8, n, k)[:n_inputs]


def permutation_draws(
    n_systems: int,
    n_inputs: int,
    *,
    method: str,
    n_resamples: int,
    rng: Any = None,
) -> PermutationDraws:
    """Draw swap masks for PERM-SYSTEMS, PERM-INPUTS or PERM-BOTH.

    Every bit is an independent fair coin: one per system ("systems"), one per input ("inputs") or one
    per cell ("both", Algorithm 2 of Deutsch, Dror & Roth 2021; not nlpstats' row-XOR-column masks).

    Parameters
    ----------
    n_systems, n_inputs : int
        Shape ``(N, M)`` of the score matrices.
    method : {"systems", "inputs", "both"}
    n_resamples : int
        Number of random permutations ``k``.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    PermutationDraws
    """
    method = check_method(method)
    n_systems = check_int("n_systems", n_systems, minimum=1)
    n_inputs = check_int("n_inputs", n_inputs, minimum=1)
    k = check_int("n_resamples", n_resamples, minimum=1)
    gen = as_generator(rng)
    if method != "both":  # PERM-BOTH swaps cells: with one input it still swaps each system's cell
        warn_if_fixed("PERM", method, n_systems, n_inputs)
    if method == "both":
        # One random byte holds the bits of 8 inputs (see PermutationDraws.packed): 8 times fewer draws,
        # and byte lookup tables for the kernels whose statistic is linear in the mask.
        packed = gen.integers(0, 256, size=(-(-n_inputs // 8), n_systems, k), dtype=np.uint8)
        return PermutationDraws(method, n_systems, n_inputs, packed=packed)
    shape = (k, n_systems) if method == "systems" else (k, n_inputs)
    bits = gen.integers(0, 2, size=shape, dtype=np.uint8).astype(bool)
    return PermutationDraws(method, n_systems, n_inputs, bits)
