"""The route tables: which fast kernel computes a statistic under a resampling method, and why.

A **route** is a fast kernel with the regime where it applies, written as data (:class:`Regime`: levels,
coefficients, methods, tie threshold, numba, a named condition on the shape), and how to build it. The routes of
one call are tried in the order of their table; the first route whose regime holds and whose kernel takes a pair
computes it; what no route takes goes to the reference path (materialised resamples), the oracle every route is
tested against. There is no other dispatch: the tables below are the whole decision.

* :data:`PAIR_ROUTES` - the all-pairs permutation matrix (PERM-SYSTEMS / INPUTS / BOTH over every metric pair,
  :func:`metaeval.stats.significance.pair_permutations.permutation_pairs`). Each route builds a
  :class:`PairKernel`: ``covers(i, j)`` says which pairs it computes (a kernel may take only the pairs without a
  metric tie, or only those with one), ``deltas(cache, i, j)`` gives ``r(X'_i) - r(Y'_j)`` for a batch of draws.
* :data:`ONE_PAIR_ROUTES` - one pair's own kernel (:func:`metaeval.stats.kernels.permutation_kernel`), also the
  ``one-pair`` route of the all-pairs table.
* :data:`BOOTSTRAP_ROUTES` - one metric's bootstrap (:func:`metaeval.stats.kernels.bootstrap_kernel`).

:func:`route_table` prints a table (``print(route_table())``); :func:`choose_pair_routes` says which route each pair
takes and why (the verdict of every route tried). Each route's reference test and benchmark row are listed in
docs/dev/ARCHITECTURE.md; the measurements that keep each route are in BENCHMARKS.md.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from metaeval.stats.correlations.ties import TIE_RTOL
from metaeval.stats.kernels.bootstrap import BOOTSTRAP_ROUTES
from metaeval.stats.kernels.permutation import ONE_PAIR_ROUTES, permutation_kernel
from metaeval.stats.kernels.regimes import PAIR_COUNTS, Case, Regime, Route, Shape, case_of

__all__ = ["PAIR_ROUTES", "TABLES", "TIED_SHARE", "PairRouting", "PairSetup", "choose_pair_routes", "route_table"]

def _dense(case: Case) -> bool:
    from metaeval.stats.kernels.kendall.summary_pairs import SummaryPairsShared

    return SummaryPairsShared.applicable(case.systems, case.inputs)


def _blocks(case: Case) -> bool:
    from metaeval.stats.kernels.kendall.blocks import KendallBlockPairs

    return KendallBlockPairs.applicable(case.systems, case.inputs)


DENSE = Shape("N <= 32, integer products exact (8 (N-1)^2 N M < 2^53)", _dense)
NOT_DENSE = Shape("by-system or global; at summary level N > 32 or products inexact",
                  lambda c: c.level != "summary" or not _dense(c))
BLOCKS = Shape("3 <= N <= 32 and the dense products exact", _blocks)
TIED_SUMMARY_COUNTS = tuple(c for c in PAIR_COUNTS if c != "kendall-b")
"""The coefficients of ``summary-pair-counts-tied``: its shape (dense, N >= 3) is that of the block tables, which
take Kendall tau-b there (``kendall-blocks``, before it in the table). ``group-pair-counts-tied`` (not dense) takes
tau-b too: the block tables never apply there."""


# ---- the all-pairs permutation matrix --------------------------------------------------------------------------


class PairSetup:
    """What the all-pairs routes are built from: the standardized metrics ``std`` (P, N, M), the human ``z``, the
    draws, the options ``kw`` (level, coefficient, undefined, tie_threshold) and the tie tolerance; the tie chains
    of the metrics are made once, on first use, and shared by the routes that ask which pairs tie where."""

    def __init__(self, std, z, draws, kw, rtol: float = TIE_RTOL, chains=None):
        self.std, self.z, self.draws, self.kw, self.rtol = std, z, draws, kw, rtol
        self._chains = chains

    @property
    def chains(self):
        if self._chains is None:
            from metaeval.stats.kernels.kendall.summary_pairs import TieChains

            self._chains = TieChains(self.std, self.rtol)
        return self._chains

    def tie_free(self, level: str | None = None):
        from metaeval.stats.kernels.kendall.summary_pairs import tie_free_pairs

        return tie_free_pairs(self.std, level or self.kw["level"], rtol=self.rtol, chains=self.chains)

    def tied(self, level: str | None = None):
        from metaeval.stats.kernels.kendall.summary_pairs import tied_groups

        return tied_groups(self.std, level or self.kw["level"], rtol=self.rtol, chains=self.chains)


def _exact(kernel):
    return kernel if kernel.products.exact else None


def _system_means(s: PairSetup, pairs):
    from metaeval.stats.kernels.system_means import SharedSystemMeans

    return SharedSystemMeans(s.std, s.z, s.draws, s.rtol, coefficient=s.kw["coefficient"],
                             tie_threshold=s.kw["tie_threshold"])


def _global_pearson(s: PairSetup, pairs):
    from metaeval.stats.kernels.kendall.summary_pairs import GlobalPearsonShared

    return GlobalPearsonShared(s.std, s.z)


def _summary_pearson_compiled(s: PairSetup, pairs):
    from metaeval.stats.kernels.pearson.summary_pairs import PearsonSummaryCompiled

    return PearsonSummaryCompiled(s.std, s.z, s.kw["undefined"], pairs, rtol=s.rtol)


def _summary_pearson_sums(s: PairSetup, pairs):
    from metaeval.stats.kernels.permutation import PearsonSummaryShared

    return PearsonSummaryShared(s.std, s.z, s.kw["undefined"])


def _by_system_pearson(s: PairSetup, pairs):
    from metaeval.stats.kernels.pearson.by_system_pairs import BySystemPearsonShared

    ok = s.tie_free()
    return BySystemPearsonShared(s.std, s.z, s.kw["undefined"], ok) if any(ok[pair] for pair in pairs) else None


def _summary_pair_counts(s: PairSetup, pairs):
    from metaeval.stats.kernels.kendall.summary_pairs import SummaryPairsShared

    ok = s.tie_free()
    pairs = [pair for pair in pairs if ok[pair]]
    if not pairs:
        return None
    kernel = SummaryPairsShared(s.std, s.z, s.kw["coefficient"], s.kw["undefined"], rtol=s.rtol)
    kernel.prepare(pairs)
    return _exact(kernel)


def _group_pair_counts(s: PairSetup, pairs):
    from metaeval.stats.kernels.kendall.group_pairs import GroupPairsCompiled

    level, (n, m) = s.kw["level"], s.std.shape[1:]
    ok = s.tie_free()
    # by-system and global: a pair's groups with a metric tie are counted per resample (compiled)
    size = {"by-system": m, "global": n * m}.get(level, 0)
    tied = s.tied() if size > 2 else {}
    pairs = [pair for pair in pairs if ok[pair] or pair in tied]
    if not pairs:
        return None
    kernel = GroupPairsCompiled(s.std, s.z, s.kw["coefficient"], s.kw["undefined"], level, tied, rtol=s.rtol)
    kernel.prepare(pairs)
    return _exact(kernel)


def _kendall_blocks(s: PairSetup, pairs):
    from metaeval.stats.kernels.kendall.blocks import KendallBlockPairs

    wanted = set(pairs)
    tied = {pair: groups for pair, groups in s.tied("summary").items() if pair in wanted}
    pairs = [pair for pair in pairs if pair in tied]
    if not pairs:
        return None
    kernel = KendallBlockPairs(s.std, s.z, s.kw["undefined"], tied, rtol=s.rtol)
    kernel.prepare(pairs)
    return kernel


TIED_SHARE = 0.25
"""Summary-level Kendall tau-b with more systems than the block tables take
(:data:`metaeval.stats.kernels.kendall.blocks.MAX_SYSTEMS`): a pair whose metrics tie within more than this share
of the inputs takes its own kernel (the ``one-pair`` route: quadratic forms in the mask of every input), which
costs less there than counting each tied input per resample (measured on the tie-heavy workload of
``benchmarks/bench_kendall_ties.py``: about 0.13 us per input and resample against 0.3 us per tied input)."""


def _few_tied(s: PairSetup, pairs):
    wanted = set(pairs)
    most = s.std.shape[2] * TIED_SHARE if s.kw["coefficient"] == "kendall-b" else s.std.shape[2]
    tied = {pair: groups for pair, groups in s.tied("summary").items() if pair in wanted and len(groups) <= most}
    return tied, [pair for pair in pairs if pair in tied]


def _summary_pair_counts_tied(s: PairSetup, pairs):
    from metaeval.stats.kernels.kendall.summary_pairs import SummaryPairsShared

    tied, pairs = _few_tied(s, pairs)
    if not pairs:
        return None
    kernel = SummaryPairsShared(s.std, s.z, s.kw["coefficient"], s.kw["undefined"], tied, rtol=s.rtol)
    kernel.prepare(pairs)
    return _exact(kernel)


def _group_pair_counts_tied(s: PairSetup, pairs):
    from metaeval.stats.kernels.kendall.group_pairs import GroupPairsCompiled

    tied, pairs = _few_tied(s, pairs)
    if not pairs:
        return None
    kernel = GroupPairsCompiled(s.std, s.z, s.kw["coefficient"], s.kw["undefined"], "summary", tied, rtol=s.rtol)
    kernel.prepare(pairs)
    return _exact(kernel)


class OnePairKernels:
    """The ``one-pair`` route: each pair's own kernel (:data:`ONE_PAIR_ROUTES`), as one :class:`PairKernel`."""

    def __init__(self, kernels: dict):
        self.kernels = kernels
        self.cells = max(kernel.cells for kernel in kernels.values())

    def covers(self, i: int, j: int) -> bool:
        return (i, j) in self.kernels

    def deltas(self, cache, i: int, j: int) -> np.ndarray:
        return self.kernels[i, j].deltas(cache)

    def kernel_name(self, i: int, j: int) -> str:
        return _kernel_name(self.kernels[i, j])


def _one_pair(s: PairSetup, pairs):
    kernels = {}
    for i, j in pairs:
        kernel = permutation_kernel(s.std[i], s.std[j], s.z, draws=s.draws, **s.kw)
        if kernel is not None:
            kernels[i, j] = kernel
    return OnePairKernels(kernels) if kernels else None


_ANY_LEVEL_BUT_SYSTEM = ("summary", "by-system", "global")
PAIR_ROUTES = (
    Route("system-means", Regime(("system",), pairs="every pair"), "SharedSystemMeans", _system_means),
    Route("global-pearson", Regime(("global",), ("pearson",), ("both",), pairs="every pair"), "GlobalPearsonShared", _global_pearson),
    Route("summary-pearson-compiled", Regime(("summary",), ("pearson",), ("both",), numba=True, pairs="every pair"),
          "PearsonSummaryCompiled", _summary_pearson_compiled),
    Route("summary-pearson-sums", Regime(("summary",), ("pearson",), ("systems", "both"), pairs="every pair"),
          "PearsonSummaryShared", _summary_pearson_sums),
    Route("by-system-pearson", Regime(("by-system",), ("pearson",), ("both",),
                                      pairs="pairs without a metric tie within a row"),
          "BySystemPearsonShared", _by_system_pearson),
    Route("summary-pair-counts", Regime(("summary",), PAIR_COUNTS, ("both",), tie_threshold=False, shape=DENSE,
                                        pairs="pairs without a metric tie within an input"),
          "SummaryPairsShared", _summary_pair_counts),
    Route("group-pair-counts", Regime(_ANY_LEVEL_BUT_SYSTEM, PAIR_COUNTS, ("both",), tie_threshold=False,
                                      numba=True, shape=NOT_DENSE,
                                      pairs="tie-free pairs; by-system / global also pairs with tied groups"),
          "GroupPairsCompiled", _group_pair_counts),
    Route("kendall-blocks", Regime(("summary",), ("kendall-b",), ("both",), tie_threshold=False, numba=True,
                                   shape=BLOCKS, pairs="pairs whose metrics tie within some input"),
          "KendallBlockPairs", _kendall_blocks),
    Route("summary-pair-counts-tied", Regime(("summary",), TIED_SUMMARY_COUNTS, ("both",), tie_threshold=False,
                                             numba=True, shape=Shape(f"{DENSE.rule}; N >= 3",
                                                                     lambda c: _dense(c) and c.systems >= 3),
                                             pairs="pairs tied within some inputs"),
          "SummaryPairsShared(tied)", _summary_pair_counts_tied),
    Route("group-pair-counts-tied", Regime(("summary",), PAIR_COUNTS, ("both",), tie_threshold=False, numba=True,
                                           shape=Shape("N > 32 or products inexact; N >= 3",
                                                       lambda c: not _dense(c) and c.systems >= 3),
                                           pairs="pairs tied within some inputs (tau-b: at most 25% of them)"),
          "GroupPairsCompiled(tied)", _group_pair_counts_tied),
    Route("one-pair", Regime(("summary", "by-system"), pairs="each pair's own kernel (ONE_PAIR_ROUTES)"),
          "ONE_PAIR_ROUTES", _one_pair),
)
"""The routes of the all-pairs permutation matrix, in order of preference (the reference path takes the rest)."""

REFERENCE = "reference"


def _kernel_name(kernel) -> str:
    inner = getattr(kernel, "inner", None)
    return type(kernel).__name__ if inner is None else f"{type(kernel).__name__}({type(inner).__name__})"


@dataclass(frozen=True)
class PairRouting:
    """Which route computes each metric pair of an all-pairs permutation matrix, and why.

    Attributes
    ----------
    case : Case
        What the regimes read.
    routes : dict
        ``(i, j) -> route name`` (``"reference"``: the reference path).
    kernels : dict
        ``(i, j) -> kernel class`` (for the ``one-pair`` route, the pair's own kernel).
    verdicts : tuple
        ``(route name, verdict)`` for every route of the table, in order: why it took the pairs it took, or
        why it took none.
    built : tuple
        ``(route, kernel)`` of the routes that took pairs, in order (the dispatch's kernels).
    """

    case: Case
    routes: dict
    kernels: dict
    verdicts: tuple
    built: tuple = field(repr=False)

    def kernel_for(self, pair):
        """The kernel that computes ``pair`` (None: the reference path)."""
        return next((kernel for route, kernel in self.built if kernel.covers(*pair)), None)

    def rows(self, names=None) -> list[dict]:
        """One dict per pair: ``pair``, ``route``, ``kernel`` (``names``: the metrics' labels)."""
        label = (lambda i: names[i]) if names is not None else (lambda i: i)
        return [{"x": label(i), "y": label(j), "route": self.routes[i, j], "kernel": self.kernels[i, j]}
                for i, j in self.routes]

    def text(self, names=None) -> str:
        """The routes tried with their verdicts, then the route and kernel of each pair, as plain text."""
        c = self.case
        lines = [f"routes for {c.level} {c.coefficient}, PERM-{c.method.upper()}, N = {c.systems}, M = {c.inputs}"
                 f", numba {'yes' if c.numba else 'no'}, data {'complete' if c.complete else 'with NaN'}:"]
        lines += [f"  {name:<26} {verdict}" for name, verdict in self.verdicts]
        lines.append("pairs:")
        for row in self.rows(names):
            lines.append(f"  {row['x']} - {row['y']}: {row['route']} ({row['kernel']})")
        return "\n".join(lines)


def choose_pair_routes(std, z, draws, kw, engine: str = "auto", rtol: float = TIE_RTOL,
                       routes=None) -> PairRouting:
    """Build the kernels of an all-pairs permutation matrix from :data:`PAIR_ROUTES` (or ``routes``).

    ``std`` (P, N, M): the standardized metrics; ``z`` (N, M) the human; ``draws`` the shared permutation draws;
    ``kw``: ``level``, ``coefficient``, ``undefined``, ``tie_threshold``. Every route whose regime holds is
    built, in order, over the pairs no earlier route took; a route takes the pairs its kernel covers.
    ``engine="reference"``: every pair to the reference path.
    """
    p = std.shape[0]
    pairs = [(i, j) for i in range(p) for j in range(i + 1, p)]
    case = case_of(z, draws.method, kw, complete=bool(np.isfinite(std).all() and np.isfinite(z).all()))
    setup = PairSetup(std, z, draws, kw, rtol)
    left = list(pairs)
    chosen, kinds, verdicts, built = {}, {}, [], []
    for route in PAIR_ROUTES if routes is None else routes:
        if engine != "auto":
            verdicts.append((route.name, f"not used: engine {engine!r}"))
            continue
        unmet = route.regime.unmet(case)
        if unmet is not None:
            verdicts.append((route.name, f"not used: {unmet}"))
            continue
        if not left:
            verdicts.append((route.name, "not needed: every pair taken"))
            continue
        kernel = route.build(setup, left)
        taken = [] if kernel is None else [pair for pair in left if kernel.covers(*pair)]
        if not taken:
            verdicts.append((route.name, f"took no pair ({route.regime.pairs})"))
            continue
        built.append((route, kernel))
        for pair in taken:
            chosen[pair] = route.name
            kinds[pair] = kernel.kernel_name(*pair) if isinstance(kernel, OnePairKernels) else _kernel_name(kernel)
        left = [pair for pair in left if pair not in chosen]
        verdicts.append((route.name, f"took {len(taken)} of {len(taken) + len(left)} pairs ({route.regime.pairs})"))
    for pair in left:
        chosen[pair], kinds[pair] = REFERENCE, "reference_deltas"
    verdicts.append((REFERENCE, f"took {len(left)} pairs" if left else "took no pair"))
    return PairRouting(case, {pair: chosen[pair] for pair in pairs}, {pair: kinds[pair] for pair in pairs},
                       tuple(verdicts), tuple(built))


TABLES = {"pairs": PAIR_ROUTES, "one-pair": ONE_PAIR_ROUTES, "bootstrap": BOOTSTRAP_ROUTES}


def route_table(level: str | None = None, coefficient: str | None = None, method: str | None = None) -> str:
    """The route tables as plain text, optionally only the routes whose regime admits ``level``,
    ``coefficient`` and ``method`` (the table of one statistic and resampling method)."""
    lines = []
    for title, table in TABLES.items():
        rows = [route for route in table
                if (level is None or level in route.regime.levels)
                and (coefficient is None or route.regime.coefficients is None
                     or coefficient in route.regime.coefficients)
                and (method is None or method in route.regime.methods)]
        lines.append(f"{title} ({len(rows)} routes, then the reference path):")
        for k, route in enumerate(rows, 1):
            lines.append(f"  {k}. {route.name} -> {route.kernel}")
            lines.append(f"       {route.regime.describe()}")
    return "\n".join(lines)
