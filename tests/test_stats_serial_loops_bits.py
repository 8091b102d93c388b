"""The compiled loops made serial for a shorter cold start (issue 37 item 5): the numbers of main 2a8ac66, bit for bit.

numba's parallel loops (``prange``) cost about as much to compile as the rest of a function, so the loops on the
benchmark paths are serial (``nogil``) and their callers split independent outputs among threads
(:func:`metaeval.stats.kernels.parts.run_parts`). Each output element is still computed by the same operations in
the same order, so every statistic, p-value, delta and interval is that of 2a8ac66; the expected digests were printed
by 2a8ac66 on the workload below (the tie-heavy recipe of ``tests/test_stats_tied_sweep_bits.py``), each case
asserting that the loop it pins ran. Checked with 1, 2 and 3 threads: the thread count never changes a result.
"""
from __future__ import annotations

import hashlib
import importlib

import numpy as np
import pytest

from metaeval.stats.resampling.bootstrap import bootstrap_interval
from metaeval.stats.significance.pairs import pairwise_tests
from test_stats_tied_sweep_bits import tie_heavy

pytest.importorskip("numba")

# (level, coefficient, systems, inputs) -> (the compiled loop it runs, sha256 of statistics, p-values and deltas as
# float64 bytes)
PAIRS = {
    ("summary", "pearson", 12, 120): ("pearson.summary_pairs_compiled.summary_pearson_sums",
                             "e343a4d229c4d6dfd8206f237dea7219f8f125134a57764b25cdafbaf8246aff"),
    ("summary", "acc-eq", 12, 120): ("kendall.group_counts.tied_group_counts",
                            "c4b133781112a8fd770cf3ab8e501cd7d6832a36f58df35f9345bfd82bd53e7d"),
    ("summary", "spearman", 12, 120): ("kendall.group_counts.tied_group_counts",
                              "def9ac049fbbd7aadeb0670616e3c14c8d1e6821362b3b72447f73c7469de668"),
    ("summary", "kendall-b", 40, 60): ("kendall.group_pairs_compiled.pair_terms",
                                       "ecf88f10bade8042673a08edf9c82032348baea391fc3a3ce32398767b8be9b2"),
    ("summary", "spearman", 40, 60): ("kendall.group_pairs_compiled.pair_terms",
                                      "cea7d1f14b2e918199bd05e78537ca636d74e4ea5215d7abdd2c98c5796a3baf"),
    ("summary", "acc-eq", 7, 120): ("kendall.mask_tables_compiled.mask_table_counts",
                                    "07f8a5854ee8b39d31ee1a165ec5ee8ac2c22e29ecd97c1a47b31a774dfa65e2"),
    ("summary", "kendall-a", 7, 120): ("kendall.mask_tables_compiled.mask_index",
                                       "28dcd44c9cdc4292814a017e9da04a2383b99c43da70d3030fbb8ea472415923"),
}
# undefined -> sha256 of statistics, p-values and deltas: item-grouped Pearson of three zero-inflated metrics on 3
# systems, where a swap can make a permuted input constant (the risky inputs: ``risky_pearson_rows``)
RISKY = {
    "skip": "6acae51fbe58f099d6707ecf2e2c5de45a44836439cf845cddc0fe0743723f4d",
    "zero": "96f8a11690965800164b59777ed7698f43aad091b48b6b2afcc53622f42702e5",
}
# undefined -> the p-value (float.hex) of one pair of those metrics by ``permutation_test`` (its one-pair kernel
# flags the constant permuted inputs with ``permuted_constant``)
ONE_PAIR = {"skip": "0x1.978feb9f34381p-1", "zero": "0x1.73e68701460ccp-1"}
# seed -> sha256 of the interval's ends (global Kendall tau-b BOOT-BOTH, 200 resamples)
BOOT = {
    0: "c160ad1ad6664d1a9acb7b514c108c3a0e817cac1f71427f8a6bfe473c663c09",
    1: "5fc1440469f2d6a2e735b7f977c133d1e699aaf0e47a59aad6bb080899adc963",
}


def _digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
    return h.hexdigest()


def _counted(monkeypatch, dotted: str) -> list:
    """Count the calls of the compiled loop ``stats.kernels.<dotted>`` (patched where it is looked up)."""
    module, name = dotted.rsplit(".", 1)
    mod = importlib.import_module(f"metaeval.stats.kernels.{module}")
    fn = getattr(mod, name)
    calls: list = []
    monkeypatch.setattr(mod, name, lambda *a, **kw: calls.append(1) or fn(*a, **kw))
    return calls


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("case", list(PAIRS), ids=lambda c: "-".join(map(str, c)))
def test_pairs_are_bitwise_those_of_2a8ac66(case, threads, monkeypatch):
    from metaeval.stats.kernels import parts

    monkeypatch.setattr(parts, "THREADS", threads)
    loop, expected = PAIRS[case]
    calls = _counted(monkeypatch, loop)
    xs, z = tie_heavy(seed=1, n=case[2], m=case[3])
    r = pairwise_tests(xs, z, level=case[0], coefficient=case[1], n_resamples=100, rng=0)
    assert calls
    assert _digest(r.statistics, r.pvalues, r.deltas) == expected


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("seed", list(BOOT))
def test_global_kendall_bootstrap_is_bitwise_that_of_2a8ac66(seed, threads, monkeypatch):
    from metaeval.stats.kernels import parts
    from metaeval.stats.kernels.kendall import global_bootstrap

    monkeypatch.setattr(parts, "THREADS", threads)
    xs, z = tie_heavy(seed=1, n=12, m=120)
    compiled = global_bootstrap._compiled()
    calls: list = []
    monkeypatch.setattr(global_bootstrap, "_compiled", lambda: calls.append(1) or compiled)
    r = bootstrap_interval(xs[seed], z, level="global", coefficient="kendall-b", n_resamples=200, rng=seed)
    assert calls
    assert _digest(r.low, r.high, getattr(r, "statistic", 0.0)) == BOOT[seed]


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("level", ["by-system", "global"])
def test_tied_sweep_is_bitwise_that_of_ca7ca60_on_any_thread_count(level, threads, monkeypatch):
    """``tied_sweep_counts`` (its tasks split among the threads): the digests of ``test_stats_tied_sweep_bits``."""
    from metaeval.stats.kernels import parts
    from test_stats_tied_sweep_bits import test_tie_heavy_kendall_perm_both_is_bitwise_that_of_ca7ca60 as pinned

    monkeypatch.setattr(parts, "THREADS", threads)
    pinned(level)


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("undefined", list(RISKY))
def test_risky_pearson_inputs_are_bitwise_those_of_2a8ac66(undefined, threads, monkeypatch):
    from metaeval.stats.kernels import parts

    monkeypatch.setattr(parts, "THREADS", threads)
    calls = _counted(monkeypatch, "pearson.summary_pairs_compiled.risky_pearson_rows")
    xs, z = _zero_inflated()
    r = pairwise_tests(xs, z, level="summary", coefficient="pearson", n_resamples=100, rng=0, undefined=undefined)
    assert calls
    assert _digest(r.statistics, r.pvalues, r.deltas) == RISKY[undefined]


def _zero_inflated() -> tuple[np.ndarray, np.ndarray]:
    """Three zero-inflated metrics on 3 systems x 40 inputs (``test_stats_tied_kernels``' recipe)."""
    rng = np.random.default_rng(5)
    n, m = 3, 40
    q = rng.normal(size=(n, m))
    xs = np.stack([np.where(rng.random((n, m)) < 0.6, 0.0, np.abs(q + rng.normal(size=(n, m)))) for _ in range(3)])
    return xs, np.round(q * 2) / 2


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("undefined", list(ONE_PAIR))
def test_one_pair_pearson_is_bitwise_that_of_2a8ac66(undefined, threads, monkeypatch):
    from metaeval.stats.kernels import parts
    from metaeval.stats.significance.permutation import permutation_test

    monkeypatch.setattr(parts, "THREADS", threads)
    calls = _counted(monkeypatch, "pearson.summary_pairs_compiled.permuted_constant")
    xs, z = _zero_inflated()
    r = permutation_test(xs[0], xs[1], z, level="summary", coefficient="pearson", n_resamples=200, rng=0,
                         undefined=undefined)
    assert calls
    assert float(r.pvalue).hex() == ONE_PAIR[undefined]
