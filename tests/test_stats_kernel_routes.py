"""The kernels' route tables: one protocol, the dispatch read from the tables, and the explanation of each choice."""
from __future__ import annotations

import numpy as np
import pytest

from metaeval.cli.main import main
from metaeval.stats.kernels import compiler, routes
from metaeval.stats.kernels.bootstrap import BOOTSTRAP_ROUTES
from metaeval.stats.kernels.permutation import ONE_PAIR_ROUTES
from metaeval.stats.kernels.regimes import Case, Regime
from metaeval.stats.resampling.draws import permutation_draws
from metaeval.stats.significance.pair_permutations import explain_pairs, permutation_pairs
from metaeval.stats.significance.permutation import reference_deltas, standardize


def _data(seed=0, n=9, m=30, p=4):
    rng = np.random.default_rng(seed)
    z = np.round(rng.normal(size=(n, m)), 1)
    xs = np.stack([z + rng.normal(scale=0.5 + q, size=(n, m)) for q in range(p)])
    return xs, z


def _std(xs):
    return np.stack([standardize(x, "x") for x in xs])


def test_every_route_is_printed_once_and_the_table_of_one_statistic_is_a_subset():
    text = routes.route_table()
    for table in (routes.PAIR_ROUTES, ONE_PAIR_ROUTES, BOOTSTRAP_ROUTES):
        for route in table:
            assert text.count(f". {route.name} -> {route.kernel}\n") == 1
    names = [route.name for route in routes.PAIR_ROUTES]
    assert len(set(names)) == len(names)
    one = routes.route_table("summary", "kendall-b", "both")
    assert "kendall-blocks" in one and "summary-pearson-sums" not in one and "system-means" not in one


def test_a_regime_names_the_first_condition_a_case_does_not_meet():
    regime = Regime(("summary",), ("kendall-b",), ("both",), tie_threshold=False, numba=True)
    case = Case("summary", "kendall-b", "both", 0.0, 9, 30, True, True)
    assert regime.unmet(case) is None
    assert regime.unmet(Case("global", "kendall-b", "both")) == "level 'global' not in summary"
    assert regime.unmet(Case("summary", "pearson", "both")) == "coefficient 'pearson' not in kendall-b"
    assert regime.unmet(Case("summary", "kendall-b", "inputs")) == "method 'inputs' not in both"
    assert regime.unmet(Case("summary", "kendall-b", "both", 0.1, numba=True)) == "a tie threshold"
    assert regime.unmet(Case("summary", "kendall-b", "both", numba=False)) == "numba not installed"
    assert regime.unmet(Case("summary", "kendall-b", "both", complete=False)) == "data not complete (NaN cells)"


@pytest.mark.parametrize("level,coefficient,method", [
    ("system", "kendall-b", "both"), ("summary", "pearson", "systems"), ("summary", "kendall-b", "both"),
    ("summary", "acc-eq", "both"), ("by-system", "spearman", "both"), ("global", "pearson", "both"),
    ("summary", "kendall-c", "inputs"), ("global", "kendall-b", "systems"),
])
def test_each_pair_takes_the_kernel_of_its_route_and_equals_the_reference(level, coefficient, method):
    xs, z = _data(1)
    std = _std(xs)
    std[1, 0, 5] = std[0, 2, 5]  # metrics 0 and 1 may tie within input 5 (a tied pair next to tie-free ones)
    draws = permutation_draws(*z.shape, method=method, n_resamples=20, rng=4)
    kw = dict(level=level, coefficient=coefficient, undefined="skip", tie_threshold=0.0)
    routing = routes.choose_pair_routes(std, z, draws, kw)
    assert set(routing.routes) == {(i, j) for i in range(4) for j in range(i + 1, 4)}
    taken = {name for name in routing.routes.values()}
    verdicts = dict(routing.verdicts)
    for name in taken - {"reference"}:
        assert verdicts[name].startswith("took ")
    fast = permutation_pairs(std, z, draws, None, "auto", kw)
    for (i, j), route in routing.routes.items():
        assert (routing.kernel_for((i, j)) is None) == (route == "reference")
        rx, ry = reference_deltas(std[i], std[j], z, draws, slice(0, 20), level, coefficient, "skip", 0.0)
        np.testing.assert_allclose(fast[i, j], rx - ry, rtol=0, atol=1e-12)


def test_the_routes_of_tie_free_and_tied_pairs_and_without_numba(monkeypatch):
    pytest.importorskip("numba")
    xs, z = _data(2)
    std = _std(xs)
    std[1, 0, 5] = std[0, 2, 5]  # metrics 0 and 1 may tie within input 5 under a swap
    draws = permutation_draws(*z.shape, method="both", n_resamples=10, rng=0)
    kw = dict(level="summary", coefficient="kendall-b", undefined="skip", tie_threshold=0.0)
    routing = routes.choose_pair_routes(std, z, draws, kw)
    assert routing.routes[0, 1] == "kendall-blocks" and routing.kernels[0, 1] == "KendallBlockPairs"
    assert routing.routes[2, 3] == "summary-pair-counts"
    monkeypatch.setattr(compiler, "numba_available", lambda: False)
    slow = routes.choose_pair_routes(std, z, draws, kw)
    assert slow.routes[0, 1] == "one-pair" and slow.kernels[0, 1] == "PermSummaryKendall"
    assert slow.routes[2, 3] == "summary-pair-counts"
    assert dict(slow.verdicts)["kendall-blocks"] == "not used: numba not installed"
    reference = routes.choose_pair_routes(std, z, draws, kw, engine="reference")
    assert set(reference.routes.values()) == {"reference"}
    assert dict(reference.verdicts)["system-means"] == "not used: engine 'reference'"


def test_explain_pairs_prints_the_case_the_verdicts_and_every_pair():
    xs, z = _data(3, p=3)
    routing = explain_pairs(xs, z, level="global", coefficient="pearson", method="both")
    text = routing.text(["a", "b", "c"])
    assert text.splitlines()[0].startswith("routes for global pearson, PERM-BOTH, N = 9, M = 30")
    assert "  a - b: global-pearson (GlobalPearsonShared)" in text
    assert routing.rows(["a", "b", "c"])[0] == {"x": "a", "y": "b", "route": "global-pearson",
                                                "kernel": "GlobalPearsonShared"}


def test_explain_routes_on_summeval_and_the_cli_option(capsys):
    from metaeval.correlation.kernel_routes import explain_routes
    from metaeval.data.datasets import load_dataset

    ds = load_dataset("summeval")
    metrics = ["rouge-1.f1", "rouge-2.f1", "expert.coherence"]
    report = explain_routes(ds, metrics, "expert.relevance", level="summary", coefficient="kendall-b")
    frame = report.to_frame()
    assert list(frame.columns) == ["x", "y", "route", "kernel"] and len(frame) == 3
    assert report.routing.case.systems == 16 and report.routing.case.inputs == 100
    code = main(["compare", "--dataset", "summeval", "--metric", "rouge-1.f1", "--metric", "rouge-2.f1",
                 "--metric", "expert.coherence", "--level", "summary", "--n-resamples", "20", "--explain"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert err.startswith("routes for summary kendall-b, PERM-BOTH, N = 16, M = 100")
    assert "rouge-1.f1 - rouge-2.f1: " in err and "rank" in out and "routes for" not in out
