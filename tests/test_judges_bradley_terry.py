"""Bradley-Terry maximum likelihood on per-pair counts: choix, Evalica and scipy as oracles."""
from __future__ import annotations

import numpy as np
import pytest

from metaeval.stats.frameworks import bradley_terry as bt

choix = pytest.importorskip("choix")
evalica = pytest.importorskip("evalica")


def _simulated(n=8, m=3000, tie_rate=0.2, seed=1):
    rng = np.random.default_rng(seed)
    strength = rng.normal(size=n)
    a = rng.integers(0, n, m)
    b = rng.integers(0, n, m)
    keep = a != b
    a, b = a[keep], b[keep]
    p = 1 / (1 + np.exp(-(strength[a] - strength[b])))
    tie = rng.random(a.size) < tie_rate
    win = ~tie & (rng.random(a.size) < p)
    i, j = bt.pairs_of(n)
    counts = np.zeros((i.size, 3))
    low, high = np.minimum(a, b), np.maximum(a, b)
    pos = low * n - low * (low + 1) // 2 + (high - low - 1)
    outcome = np.where(tie, 2, np.where(win == (a < b), 0, 1))
    np.add.at(counts, (pos, outcome), 1)
    return a, b, tie, win, counts, i, j


def test_drop_ties_equals_choix_maximum_likelihood():
    a, b, tie, win, counts, i, j = _simulated()
    s, _, _, converged = bt.fit(counts, i, j, 8, model="drop")
    data = [(x, y) if w else (y, x) for x, y, t, w in zip(a, b, tie, win) if not t]
    ref = choix.ilsr_pairwise(8, data, alpha=0.0, tol=1e-12)
    assert converged.all()
    np.testing.assert_allclose(s, ref - ref.mean(), atol=1e-9)


def test_regularization_is_choix_alpha():
    a, b, tie, win, counts, i, j = _simulated(seed=2)
    data = [(x, y) if w else (y, x) for x, y, t, w in zip(a, b, tie, win) if not t]
    s, _, _, _ = bt.fit(counts, i, j, 8, model="drop", regularization=0.5)
    np.testing.assert_allclose(s, choix.opt_pairwise(8, data, alpha=0.5, tol=1e-12), atol=1e-6)


def test_half_ties_equal_evalica():
    a, b, tie, win, counts, i, j = _simulated(seed=3)
    winners = [evalica.Winner.Draw if t else (evalica.Winner.X if w else evalica.Winner.Y) for t, w in zip(tie, win)]
    ref = evalica.bradley_terry(list(a), list(b), winners, tolerance=1e-14, limit=100000).scores.sort_index()
    log_ref = np.log(ref.to_numpy())
    s, _, _, _ = bt.fit(counts, i, j, 8, model="half")
    np.testing.assert_allclose(s, log_ref - log_ref.mean(), atol=1e-9)


def test_davidson_maximises_its_likelihood():
    from scipy.optimize import minimize

    _, _, _, _, counts, i, j = _simulated(seed=4)
    s, nu, _, converged = bt.fit(counts, i, j, 8, model="davidson")

    def negative(x):
        scores = np.concatenate([x[:-1], [0.0]])
        return -bt.log_likelihood(scores, counts, i, j, model="davidson", nu=np.exp(x[-1]))[0]

    found = minimize(negative, np.zeros(8), method="BFGS", options={"gtol": 1e-9})
    ref = np.concatenate([found.x[:-1], [0.0]])
    assert converged.all()
    np.testing.assert_allclose(s, ref - ref.mean(), atol=1e-5)
    assert nu == pytest.approx(np.exp(found.x[-1]), rel=1e-5)


def test_davidson_tie_probability_hand_case():
    # two systems, 2 wins each and 4 ties: d = 0 and P(tie) = nu / (2 + nu) = 1/2, so nu = 2
    counts = np.array([[2.0, 2.0, 4.0]])
    s, nu, _, _ = bt.fit(counts, *bt.pairs_of(2), 2, model="davidson")
    np.testing.assert_allclose(s, [0.0, 0.0], atol=1e-12)
    assert nu == pytest.approx(2.0)


def test_two_systems_closed_form():
    # 3 wins to 1: s_0 - s_1 = log 3
    s, _, _, _ = bt.fit(np.array([[3.0, 1.0, 0.0]]), *bt.pairs_of(2), 2, model="drop")
    assert s[0] - s[1] == pytest.approx(np.log(3.0))
    # a tie counts half a win each: 3 + 1 vs 1 + 1
    s, _, _, _ = bt.fit(np.array([[3.0, 1.0, 2.0]]), *bt.pairs_of(2), 2, model="half")
    assert s[0] - s[1] == pytest.approx(np.log(2.0))


def test_batched_fit_equals_one_at_a_time():
    _, _, _, _, counts, i, j = _simulated(seed=5)
    rng = np.random.default_rng(0)
    batch = rng.multinomial(int(counts.sum()), counts.ravel() / counts.sum(), size=7).reshape(7, -1, 3)
    point = bt.fit(counts, i, j, 8)[0]
    together = bt.fit(batch, i, j, 8, start=point)[0]
    alone = np.stack([bt.fit(c, i, j, 8)[0] for c in batch])
    np.testing.assert_allclose(together, alone, atol=1e-9)


def test_diverging_detects_a_system_that_never_loses():
    i, j = bt.pairs_of(3)
    fine = np.array([[2.0, 1.0, 0.0], [1.0, 1.0, 0.0], [1.0, 2.0, 0.0]])
    never_loses = np.array([[2.0, 0.0, 0.0], [3.0, 0.0, 0.0], [1.0, 2.0, 0.0]])
    assert not bt.diverging(fine, i, j, 3, "half")
    assert bt.diverging(never_loses, i, j, 3, "half")
    assert bt.diverging(np.stack([fine, never_loses]), i, j, 3, "half").tolist() == [False, True]
    # a tie links both ways, except when ties are dropped
    tied = np.array([[2.0, 0.0, 1.0], [3.0, 0.0, 0.0], [1.0, 2.0, 0.0]])
    assert not bt.diverging(tied, i, j, 3, "half")
    assert bt.diverging(tied, i, j, 3, "drop")
