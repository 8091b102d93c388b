"""The vocabulary of the route tables: a pair kernel's protocol, a case, a regime, a route.

A **route** is a fast kernel with the regime where it applies, written as data (:class:`Regime`: levels,
coefficients, methods, tie threshold, numba, a named condition on the shape) and how to build it. The tables that
use them: :data:`metaeval.stats.kernels.routes.PAIR_ROUTES` (the all-pairs permutation matrix),
:data:`metaeval.stats.kernels.permutation.ONE_PAIR_ROUTES` (one pair's own permutation kernel) and
:data:`metaeval.stats.kernels.bootstrap.BOOTSTRAP_ROUTES` (one metric's bootstrap); :mod:`metaeval.stats.kernels.routes`
prints them and says which route each pair takes and why.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

import numpy as np

from metaeval.stats.kernels import compiler

__all__ = ["GLOBAL_COUNTS", "PAIR_COUNTS", "SAME_SHAPE", "Case", "PairKernel", "Regime", "Route", "Shape", "case_of",
           "first_route"]

PAIR_COUNTS = ("kendall-a", "kendall-b", "kendall-c", "accuracy", "acc-eq", "tau-eq", "spearman")
"""The coefficients that are weighted pair counts (Spearman with the human's centred ranks as weights)."""
GLOBAL_COUNTS = PAIR_COUNTS[:-1]
"""The pair counts of the compiled global bootstrap (:mod:`metaeval.stats.kernels.kendall.global_bootstrap`)."""
_LEVELS = ("system", "summary", "by-system", "global")
_METHODS = ("systems", "inputs", "both")


class PairKernel(Protocol):
    """A fast kernel of the all-pairs permutation matrix.

    ``cells``: float64 cells of temporaries per resample (the batch size); ``covers(i, j)``: whether it computes
    pair ``(i, j)``; ``deltas(cache, i, j)``: ``r(X'_i, Z) - r(Y'_j, Z)`` for the resamples of a
    :class:`~metaeval.stats.kernels.batch.BatchCache`, equal to the reference path to rounding (1e-12) and
    bitwise for any batch.
    """

    cells: int

    def covers(self, i: int, j: int) -> bool: ...

    def deltas(self, cache, i: int, j: int) -> np.ndarray: ...


@dataclass(frozen=True)
class Case:
    """What a regime reads: the statistic, the method, the data's shape, and whether numba is installed."""

    level: str
    coefficient: str
    method: str
    tie_threshold: float = 0.0
    systems: int = 0
    inputs: int = 0
    complete: bool = True
    numba: bool = False
    full_test_set: bool = False
    corpus: bool = False
    same_shape: bool = True


@dataclass(frozen=True)
class Shape:
    """A named condition on a case (mostly its shape), with its rule in words for the table."""

    rule: str
    holds: Callable[[Case], bool]


SAME_SHAPE = Shape("X and Z of one shape, not the full test set", lambda c: c.same_shape and not c.full_test_set)


@dataclass(frozen=True)
class Regime:
    """Where a route applies, as data; every fast route also needs complete data (no NaN).

    ``coefficients`` None: every coefficient; ``tie_threshold``: whether the route takes a nonzero tie threshold;
    ``numba``: whether it needs numba; ``shape``: a further named condition; ``pairs``: which pairs of such a
    case it takes (decided pair by pair when it is built: ties are a property of a pair's two metrics).
    """

    levels: tuple[str, ...]
    coefficients: tuple[str, ...] | None = None
    methods: tuple[str, ...] = _METHODS
    tie_threshold: bool = True
    numba: bool = False
    shape: Shape | None = None
    pairs: str = ""
    corpus: bool = False

    def unmet(self, case: Case) -> str | None:
        """The first condition ``case`` does not meet, in words, or None when the route applies."""
        if not case.complete:
            return "data not complete (NaN cells)"
        if case.corpus != self.corpus:
            return "corpus metric" if case.corpus else "not a corpus metric"
        if case.level not in self.levels:
            return f"level {case.level!r} not in {'/'.join(self.levels)}"
        if self.coefficients is not None and case.coefficient not in self.coefficients:
            return f"coefficient {case.coefficient!r} not in {'/'.join(self.coefficients)}"
        if case.method not in self.methods:
            return f"method {case.method!r} not in {'/'.join(self.methods)}"
        if case.tie_threshold and not self.tie_threshold:
            return "a tie threshold"
        if self.numba and not case.numba:
            return "numba not installed"
        if self.shape is not None and not self.shape.holds(case):
            return f"shape: not ({self.shape.rule})"
        return None

    def describe(self) -> str:
        parts = ["corpus metric"] if self.corpus else []
        parts += ["/".join(self.levels), "/".join(self.coefficients) if self.coefficients else "any coefficient",
                 "/".join(self.methods) if self.methods != _METHODS else "any method"]
        if not self.tie_threshold:
            parts.append("tie threshold 0")
        if self.numba:
            parts.append("numba")
        if self.shape is not None:
            parts.append(self.shape.rule)
        if self.pairs:
            parts.append(self.pairs)
        return "; ".join(parts)


@dataclass(frozen=True)
class Route:
    """One fast route: its name, its regime, the kernel class it builds, and how (``build(setup, pairs)``)."""

    name: str
    regime: Regime
    kernel: str
    build: Callable[..., Any] = field(repr=False, compare=False)


def case_of(z, method: str, kw, *, complete: bool = True, same_shape: bool = True, full_test_set: bool = False,
            corpus: bool = False) -> Case:
    """The :class:`Case` of a call on human scores ``z`` (N, M): ``kw`` its level, coefficient and tie threshold,
    ``complete`` whether the arrays the kernels read have no NaN."""
    n, m = np.shape(z)[0], (np.shape(z)[1] if np.ndim(z) > 1 else 1)
    return Case(kw["level"], kw["coefficient"], method, kw.get("tie_threshold", 0.0) or 0.0, int(n), int(m),
                complete, compiler.numba_available(), full_test_set, corpus, same_shape)


def first_route(table, case: Case, build_args: tuple):
    """The kernel of the first route of ``table`` whose regime holds for ``case`` and whose build gives one (or
    None: the reference path), and that route (None with it)."""
    for route in table:
        if route.regime.unmet(case) is None:
            kernel = route.build(*build_args)
            if kernel is not None:
                return kernel, route
    return None, None


