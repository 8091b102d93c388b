"""By-system and global Kendall tau-b PERM-BOTH on tie-heavy metrics: the numbers of ca7ca60, bit for bit.

The compiled sweep (`stats/kernels/compiled_ties.py`: `tied_sweep_inputs`, `tied_sweep_counts`,
`tied_sweep_corrections`) counts with integers, so a change of its speed (inlined helpers, a serial merge; issue
37) must leave every statistic, observed delta and p-value bitwise as it was. The expected values were printed by
commit ca7ca60 (and c69dd7c gives the same) on the workload below, a small copy of the recipe of
`benchmarks/bench_wmt.py::tie_heavy_scores` (an MQM-like human; metrics rounded to 0.5, judges 0-100 in steps of
5, 40% exact zeros, continuous), which takes the sweep with large tie groups and, at the global level, the
near-tie corrections.
"""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from metaeval.stats.significance.pairs import pairwise_tests

pytest.importorskip("numba")

# level -> (sha256 of statistics, p-values and observed deltas as float64 bytes, {pair: p-value as float.hex})
EXPECTED = {
    "by-system": ("42edba5cf40f9ff1310780ce8a2c7d618e3e6fa41a1d658377779e445342abb3",
                  {(3, 6): "0x1.f0cac5b3f5dc8p-1", (4, 5): "0x1.4e930288df0cbp-2", (1, 2): "0x1.e6a74981446f8p-6"}),
    "global": ("2dd6fc0101c7638538428b959a6f0ae55436acb45ef98bc0e621b6f1a0188a59",
               {(3, 6): "0x1.f5dc83cd4e930p-1", (4, 5): "0x1.6cfd7720f353ap-2", (1, 2): "0x1.446f86562d9fbp-7"}),
}


def tie_heavy(seed: int = 0, n: int = 15, m: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """Eight tie-heavy metrics (two of each kind) and the MQM-like human, ``(8, n, m)`` and ``(n, m)``."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(scale=0.5, size=(n, 1)) + rng.normal(size=(n, m))
    rate = np.exp(-0.8 * quality)
    human = 0.0 - (rng.poisson(0.6 * rate) + 5.0 * rng.poisson(0.15 * rate))
    xs = []
    for i, kind in enumerate(("continuous", "half", "judge", "zeros") * 2):
        noisy = human + rng.normal(scale=1.0 + 0.2 * i, size=(n, m))
        if kind == "half":
            noisy = np.round(noisy * 2) / 2
        elif kind == "judge":
            noisy = 5.0 * np.round(20.0 / (1.0 + np.exp(-(noisy + 2.0) / 3.0)))
        elif kind == "zeros":
            noisy = np.where(noisy <= np.quantile(noisy, 0.4), 0.0, noisy - noisy.min())
        xs.append(noisy)
    return np.stack(xs), human


@pytest.mark.parametrize("level", ["by-system", "global"])
def test_tie_heavy_kendall_perm_both_is_bitwise_that_of_ca7ca60(level):
    import metaeval.stats.kernels.kendall.tied_counts as compiled_ties

    xs, z = tie_heavy()
    calls = []
    sweep = compiled_ties.tied_sweep_counts
    with pytest.MonkeyPatch.context() as mp:  # the workload takes the compiled sweep (not a reference path)
        mp.setattr(compiled_ties, "tied_sweep_counts", lambda *a, **kw: calls.append(a[0].shape[0]) or sweep(*a, **kw))
        result = pairwise_tests(xs, z, level=level, coefficient="kendall-b", n_resamples=100, rng=0)
    assert sum(calls) >= 27  # the groups swept: at least one of each tied pair (several pairs a call)
    digest, pvalues = EXPECTED[level]
    assert {pair: float(result.pvalues[pair]).hex() for pair in pvalues} == pvalues
    h = hashlib.sha256()
    for a in (result.statistics, result.pvalues, result.deltas):
        h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
    assert h.hexdigest() == digest


@pytest.mark.parametrize("chunk", [1, 3])
@pytest.mark.parametrize("level", ["by-system", "global"])
def test_pairs_swept_together_or_alone_give_the_same_bits(level, chunk, monkeypatch):
    """The groups of several pairs in one call of the sweep (``SWEEP_PAIRS``; the default 32 in the test above):
    one pair or three per call give the same digests, with the calls counted."""
    import metaeval.stats.kernels.kendall.group_pairs as group_pairs
    import metaeval.stats.kernels.kendall.tied_counts as compiled_ties

    monkeypatch.setattr(group_pairs, "SWEEP_PAIRS", chunk)
    calls = []
    sweep = compiled_ties.tied_sweep_counts
    monkeypatch.setattr(compiled_ties, "tied_sweep_counts", lambda *a, **kw: calls.append(1) or sweep(*a, **kw))
    xs, z = tie_heavy()
    result = pairwise_tests(xs, z, level=level, coefficient="kendall-b", n_resamples=100, rng=0)
    h = hashlib.sha256()
    for a in (result.statistics, result.pvalues, result.deltas):
        h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
    assert h.hexdigest() == EXPECTED[level][0]
    assert len(calls) >= 27 // chunk
