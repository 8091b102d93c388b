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

# (level, coefficient) -> (the compiled loop it runs, sha256 of statistics, p-values and deltas as float64 bytes)
PAIRS = {
    ("summary", "pearson"): ("pearson.summary_pairs_compiled.summary_pearson_sums",
                             "e343a4d229c4d6dfd8206f237dea7219f8f125134a57764b25cdafbaf8246aff"),
}
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
@pytest.mark.parametrize("case", list(PAIRS), ids="-".join)
def test_pairs_are_bitwise_those_of_2a8ac66(case, threads, monkeypatch):
    from metaeval.stats.kernels import parts

    monkeypatch.setattr(parts, "THREADS", threads)
    loop, expected = PAIRS[case]
    calls = _counted(monkeypatch, loop)
    xs, z = tie_heavy(seed=1, n=12, m=120)
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
