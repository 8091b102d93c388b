"""Every fast route of the all-pairs permutation table against the others, in the regimes where more than one
applies; short runs, the variants alternated in one process.

Run: `PYTHONPATH=src python benchmarks/bench_routes.py [--resamples K] [--repeats R] [--only TEXT]`.
Each row is one regime (statistic, PERM-BOTH, workload); each variant is a route table that forces one route for
the pairs of that regime (the others removed, or its shape condition lifted), the reference path taking what it
leaves. One warm-up call per variant (compiled loops loaded, not timed), then R rounds alternating the variants;
the minimum wall time of the rounds is printed, with the pairs each variant's route took. The tie-heavy workload is
``bench_wmt.tie_heavy_scores`` (15 systems x 2000 segments; 10 continuous, 10 rounded to 0.5, 5 judges, 5 with 40%
zeros), cut to the metrics and segments of the row.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_wmt import tie_heavy_scores  # noqa: E402

from metaeval.stats.kernels import routes  # noqa: E402
from metaeval.stats.resampling.draws import permutation_draws  # noqa: E402
from metaeval.stats.significance.pair_permutations import permutation_pairs  # noqa: E402
from metaeval.stats.significance.permutation import standardize  # noqa: E402


def _named(*names, lift=()):
    table = []
    for route in routes.PAIR_ROUTES:
        if route.name in names:
            if route.name in lift:
                route = dataclasses.replace(route, regime=dataclasses.replace(route.regime, shape=None))
            table.append(route)
    return tuple(table)


def _workload(kinds, m, n=15, seed=0):
    data = tie_heavy_scores(seed=seed, n=n, m=m)
    human = data.pop("human")
    names = [name for name in data if name.rstrip("0123456789") in kinds] if kinds else list(data)
    return np.stack([standardize(data[name], name) for name in names]), human


# (row, level, coefficient, workload (metric kinds, segments, systems), {variant: route table})
ROWS = [
    ("item-grouped tau-b, tie-free pairs (10 continuous, 2000 seg.)", "summary", "kendall-b",
     (("continuous",), 2000, 15),
     {"summary-pair-counts": _named("summary-pair-counts"),
      "group-pair-counts": _named("group-pair-counts", lift=("group-pair-counts",)),
      "one-pair": _named("one-pair")}),
    ("item-grouped tau-b, tied pairs (10 half + 5 judges, 300 seg.)", "summary", "kendall-b",
     (("half", "judge"), 300, 15),
     {"kendall-blocks": _named("summary-pair-counts", "kendall-blocks"),
      "summary-pair-counts-tied": _named("summary-pair-counts", "summary-pair-counts-tied",
                                         lift=("summary-pair-counts-tied",)),
      "one-pair": _named("summary-pair-counts", "one-pair")}),
    ("item-grouped acc-eq, tied pairs (10 half + 5 judges, 300 seg.)", "summary", "acc-eq",
     (("half", "judge"), 300, 15),
     {"summary-pair-counts-tied": _named("summary-pair-counts", "summary-pair-counts-tied"),
      "group-pair-counts-tied": _named("summary-pair-counts", "group-pair-counts-tied",
                                       lift=("group-pair-counts-tied",)),
      "reference": _named("summary-pair-counts")}),
    ("item-grouped Pearson (10 of each kind, 2000 seg.)", "summary", "pearson", ((), 2000, 15),
     {"summary-pearson-compiled": _named("summary-pearson-compiled"),
      "summary-pearson-sums": _named("summary-pearson-sums"), "one-pair": _named("one-pair")}),
    ("by-system tau-b (10 of each kind, 500 seg.)", "by-system", "kendall-b", ((), 500, 15),
     {"group-pair-counts": _named("group-pair-counts"), "one-pair": _named("one-pair")}),
    ("item-grouped tau-b, 40 systems (10 continuous, 200 seg.)", "summary", "kendall-b", (("continuous",), 200, 40),
     {"group-pair-counts": _named("group-pair-counts"), "one-pair": _named("one-pair")}),
    ("global tau-b (10 of each kind, 100 seg.)", "global", "kendall-b", ((), 100, 15),
     {"group-pair-counts": _named("group-pair-counts"), "reference": ()}),
]


def run(std, z, table, level, coefficient, k):
    draws = permutation_draws(*z.shape, method="both", n_resamples=k, rng=1)
    kw = dict(level=level, coefficient=coefficient, undefined="skip", tie_threshold=0.0)
    saved = routes.PAIR_ROUTES
    routes.PAIR_ROUTES = table
    try:
        chosen = routes.choose_pair_routes(std, z, draws, kw)
        t = time.perf_counter()
        out = permutation_pairs(std, z, draws, None, "auto", kw)
        return time.perf_counter() - t, chosen, out
    finally:
        routes.PAIR_ROUTES = saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", help="run the rows whose name contains this")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    for name, level, coefficient, (kinds, m, n), variants in ROWS:
        if args.only and args.only not in name:
            continue
        std, z = _workload(kinds, m, n)
        if level == "global" or not kinds:
            std = std[::3]  # 10 metrics of every kind
        times = {v: [] for v in variants}
        taken, first = {}, None
        for v, table in variants.items():  # warm-up: compiled loops loaded, the deltas compared
            _, chosen, out = run(std, z, table, level, coefficient, max(2, args.resamples // 10))
            counts = {}
            for route in chosen.routes.values():
                counts[route] = counts.get(route, 0) + 1
            taken[v] = ", ".join(f"{r} {c}" for r, c in sorted(counts.items()))
            if first is None:
                first = out
            else:
                worst = max(float(np.nanmax(np.abs(out[p] - first[p]))) if np.isfinite(out[p]).any() else 0.0
                            for p in out)
                assert worst <= 1e-12, (name, v, worst)
        for _ in range(args.repeats):
            for v, table in variants.items():
                times[v].append(run(std, z, table, level, coefficient, args.resamples)[0])
        print(f"{name} | {level} {coefficient} PERM-BOTH, {std.shape[0] * (std.shape[0] - 1) // 2} pairs,"
              f" k={args.resamples}")
        for v in variants:
            print(f"    {v:<26} {min(times[v]):8.3f} s  ({taken[v]})", flush=True)


if __name__ == "__main__":
    main()
