"""Item-grouped Kendall tau-b PERM-BOTH of pairs with metric ties (the ``kendall-blocks`` route): the deltas of
f5362ca, bit for bit, after the one-pair loop of the block tables (``blocks_compiled.block_tau_b_sums``) was folded
into the lanes (``lanes_compiled.lane_tau_b_sums``; issue 37, one compiled loop fewer).

The workload holds both kinds of pairs of :class:`~metaeval.stats.kernels.kendall.blocks.KendallBlockPairs`: those
tied in most inputs (counted at every input with the tables) and those tied in few (their tied inputs only, the
others from the integer products), near ties (the sweep), inputs where a permuted metric can be constant (the
tracked lanes and, for a pair tied in few inputs, the generic path); 8-bit (7 systems) and 16-bit (20 systems)
packed counts, both ``undefined`` policies, the default tie rule and exact ties. The expected digests were printed
by f5362ca (the commit before the fold) running this file's workload.
"""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from metaeval.stats.correlations.ties import TIE_RTOL
from metaeval.stats.resampling.draws import permutation_draws
from metaeval.stats.significance.pair_permutations import permutation_pairs

pytest.importorskip("numba")

# (seed, systems, inputs, undefined, tie rule) -> sha256 of every pair's deltas (float64 bytes, pairs in order)
EXPECTED = {
    (0, 7, 40, "skip", "tol"): "e6be41dcdf100363eb7bb0e5763be36aecc7820c0c5bb1fe323ef808e672ce7a",
    (0, 7, 40, "skip", "exact"): "70e3dab5dfcb5506b9abba8b41c0bae00d934947004292d47ad724fb8a1a63fe",
    (0, 7, 40, "zero", "tol"): "da7f4f585ac4bde0a5650bb3c293bf0eeb762d3008d37d3385e533ca7886e664",
    (0, 7, 40, "zero", "exact"): "bc5d69cceb6b2ed77322dbaf76bb1f1d9614d282bba44ef14d190222dffa73b3",
    (1, 15, 60, "skip", "tol"): "5aee5c16bcbdeef4feb35bbedfd953fc27efd8b32347b08397e61d5baf8e3c0d",
    (2, 20, 30, "skip", "tol"): "9af46fe534075caa36a9729b4d3cc5f078b813c4ded4b5cdc95b8f8fa6143a3c",
    (2, 20, 30, "skip", "exact"): "909a22ed8c89222a14bb3c65fec74607729c51da30450260bdace542956c3dd4",
    (2, 20, 30, "zero", "tol"): "98896041f9d37790de5e9523ead0fe2c461e5f1ce6198f85e4e82f642b5e2b32",
    (2, 20, 30, "zero", "exact"): "61af7690d1149a640597e1b6fbb2de59680436867764020ff3ea6435003f99a1",
}
RULES = {"tol": TIE_RTOL, "exact": 0.0}


def workload(seed: int, n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Seven metrics (7, n, m) and an MQM-like human (n, m), constant in input 0: continuous; rounded to 0.5 (tied
    in most inputs); two tied between two systems in about 20% of the inputs (one with near ties, a gap of 1e-13
    relative); one tied among four systems in about 20% and, with the next, 0 everywhere but one system in about
    10% of the inputs (a swap can make them constant); a 0-100 judge in steps of 5."""
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, 1)) + rng.normal(size=(n, m))
    z = -(rng.poisson(np.exp(-0.8 * q)) + 5.0 * rng.poisson(0.2 * np.exp(-0.8 * q))).astype(float)
    z[:, 0] = -1.0
    xs = []
    zeros = rng.random(m) < 0.1
    for i in range(7):
        x = q + rng.normal(scale=1.0 + 0.2 * i, size=(n, m))
        if i == 1:
            x = np.round(x * 2) / 2
        elif i in (2, 3):
            cols = rng.random(m) < 0.2
            x[1, cols] = x[0, cols]
            if i == 3:
                near = rng.random(m) < 0.1
                x[2, near] = x[3, near] * (1 + 1e-13)
        elif i == 4:
            cols = rng.random(m) < 0.2
            x[:3, cols] = x[3, cols]
            x[:, zeros] = 0.0
            x[1, zeros] = 1.0
        elif i == 5:
            x[:, zeros] = 0.0
            x[0, zeros] = 1.0
        elif i == 6:
            x = 5.0 * np.round(20.0 / (1.0 + np.exp(-x)))
        xs.append(x)
    return np.stack(xs), z


@pytest.mark.parametrize("case", list(EXPECTED), ids=lambda c: "-".join(map(str, c)))
def test_kendall_blocks_deltas_are_bitwise_those_of_f5362ca(case, monkeypatch):
    from metaeval.stats.kernels.kendall import blocks

    seed, n, m, undefined, rule = case
    seen = []
    compute = blocks.KendallBlockPairs._compute

    def spy(self, draws):
        compute(self, draws)
        seen.append((len(self.partial), len(self.pairs) - len(self.partial), len(self.near)))

    monkeypatch.setattr(blocks.KendallBlockPairs, "_compute", spy)
    xs, z = workload(seed, n, m)
    draws = permutation_draws(n, m, method="both", n_resamples=120, rng=seed + 11)
    kw = dict(level="summary", coefficient="kendall-b", undefined=undefined, tie_threshold=0.0)
    out = permutation_pairs(xs, z, draws, None, "auto", kw, rtol=RULES[rule])
    (partial, every, near), = seen  # the route took pairs of both kinds (and near ties under the default rule)
    assert partial >= 6 and every >= 6 and (near > 0 or rule == "exact" or n == 20)
    h = hashlib.sha256()
    for pair in sorted(out):
        h.update(np.ascontiguousarray(out[pair], dtype=np.float64).tobytes())
    assert h.hexdigest() == EXPECTED[case]


@pytest.mark.parametrize("threads", [1, 3])
def test_kendall_blocks_deltas_do_not_depend_on_the_threads(threads, monkeypatch):
    """The lanes' batches are dealt to the threads (``parts.run_parts``): one thread or three, the same bits."""
    from metaeval.stats.kernels import parts

    monkeypatch.setattr(parts, "THREADS", threads)
    seed, n, m = 1, 15, 60
    xs, z = workload(seed, n, m)
    draws = permutation_draws(n, m, method="both", n_resamples=120, rng=seed + 11)
    kw = dict(level="summary", coefficient="kendall-b", undefined="skip", tie_threshold=0.0)
    out = permutation_pairs(xs, z, draws, None, "auto", kw, rtol=TIE_RTOL)
    h = hashlib.sha256()
    for pair in sorted(out):
        h.update(np.ascontiguousarray(out[pair], dtype=np.float64).tobytes())
    assert h.hexdigest() == EXPECTED[seed, n, m, "skip", "tol"]
