"""Speed of metaeval's resampling against nlpstats 0.0.1 (PyPI), in the same run, on the same data.

Run: `make bench` (or `.venv/bin/python benchmarks/bench_stats.py`). Prints one line per case with
both timings and the ratio, and the acceptance target of the case. nlpstats is timed once per case
(it takes seconds); metaeval is the median of several runs. Data: N = 25 systems x M = 100 inputs,
k = 1000 resamples; the human score is the mean of 3 Likert ratings (tie-heavy, like SummEval), the
metrics are continuous. The all-pairs case uses the 12 SummEval metrics of the SacreROUGE table.
"""
from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc

import numpy as np

import metaeval as me

N, M, K = 25, 100, 1000


def timed(fn, repeat: int = 5) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def synthetic(seed: int = 0):
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(N, 1)) + rng.normal(size=(N, M))
    ratings = np.clip(np.rint(3 + quality[..., None] + rng.normal(scale=0.8, size=(N, M, 3))), 1, 5)
    human = ratings.mean(axis=2)
    x = quality + rng.normal(scale=1.0, size=(N, M))
    y = quality + rng.normal(scale=1.5, size=(N, M))
    ds = me.ScoreSet.from_matrices({"x": x, "y": y, "human": human}, humans=["human"], name="synthetic")
    return ds, x, y, human


def nlpstats_cases(x, y, z, k):
    from nlpstats.correlations.bootstrap import bootstrap
    from nlpstats.correlations.permutation import permutation_test

    return {
        "boot-sys-kendall": lambda: bootstrap(x, z, "system", "kendall", "both", n_resamples=k),
        "boot-sys-pearson": lambda: bootstrap(x, z, "system", "pearson", "both", n_resamples=k),
        "perm-sys-kendall": lambda: permutation_test(x, y, z, "system", "kendall", "both", n_resamples=k),
        "perm-sys-pearson": lambda: permutation_test(x, y, z, "system", "pearson", "both", n_resamples=k),
        "boot-sum-kendall": lambda: bootstrap(x, z, "input", "kendall", "both", n_resamples=k),
        "perm-sum-kendall": lambda: permutation_test(x, y, z, "input", "kendall", "both", n_resamples=k),
    }


def metaeval_cases(ds, k):
    common = dict(n_resamples=k, rng=0)
    # nlpstats' bootstrap computes the interval only; metaeval's also reports scipy's p-value unless told not to
    interval = dict(common, pvalue_method="none")
    return {
        "boot-sys-kendall": lambda: me.bootstrap_ci(ds, "x", "human", level="system", coefficient="kendall",
                                                    method="both", **interval),
        "boot-sys-pearson": lambda: me.bootstrap_ci(ds, "x", "human", level="system", coefficient="pearson",
                                                    method="both", **interval),
        "perm-sys-kendall": lambda: me.permutation_test(ds, "x", "y", "human", level="system",
                                                        coefficient="kendall", method="both", **common),
        "perm-sys-pearson": lambda: me.permutation_test(ds, "x", "y", "human", level="system",
                                                        coefficient="pearson", method="both", **common),
        "boot-sum-kendall": lambda: me.bootstrap_ci(ds, "x", "human", level="summary", coefficient="kendall",
                                                    method="both", **interval),
        "perm-sum-kendall": lambda: me.permutation_test(ds, "x", "y", "human", level="summary",
                                                        coefficient="kendall", method="both", **common),
    }


TARGETS = {
    "boot-sys-kendall": ("ratio", 100), "boot-sys-pearson": ("ratio", 100),
    "perm-sys-kendall": ("ratio", 100), "perm-sys-pearson": ("ratio", 100),
    "boot-sum-kendall": ("ratio", 2000), "perm-sum-kendall": ("ms", 30),
}

SUMMEVAL_12 = ["rouge-1.precision", "rouge-1.recall", "rouge-1.f1", "rouge-2.precision", "rouge-2.recall",
               "rouge-2.f1", "bertscore.precision", "bertscore.recall", "bertscore.f1", "moverscore",
               "qa-eval.em", "qa-eval.f1"]


def all_pairs(k: int) -> float:
    ds = me.load_dataset("summeval")
    start = time.perf_counter()
    for level in ("system", "summary"):
        for coefficient in ("pearson", "kendall"):
            me.compare_metrics(ds, SUMMEVAL_12, "expert.relevance", level=level, coefficient=coefficient,
                               test="permutation", method="both", n_resamples=k, rng=0)
    return time.perf_counter() - start


def peak_memory_mb(fn) -> float:
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=K)
    parser.add_argument("--skip-nlpstats", action="store_true", help="time metaeval only")
    args = parser.parse_args()
    k = args.resamples
    ds, x, y, z = synthetic()
    ours = metaeval_cases(ds, k)
    theirs = {} if args.skip_nlpstats else nlpstats_cases(x, y, z, k)
    print(f"N={N} systems, M={M} inputs, k={k} resamples; metaeval {me.__version__}")
    print(f"{'case':<18} {'nlpstats s':>11} {'metaeval ms':>12} {'ratio':>9}  target")
    for name, fn in ours.items():
        fn()  # warm-up (imports, caches)
        mine = timed(fn)
        other = timed(theirs[name], repeat=1) if name in theirs else float("nan")
        kind, goal = TARGETS[name]
        ratio = other / mine
        met = (ratio >= goal) if kind == "ratio" else (mine * 1000 <= goal)
        target = f">= {goal}x" if kind == "ratio" else f"<= {goal} ms"
        print(f"{name:<18} {other:>11.2f} {mine * 1000:>12.2f} {ratio:>8.0f}x  {target} {'ok' if met else 'MISSED'}")
    seconds = all_pairs(k)
    print(f"all-pairs 12 SummEval metrics (66 pairs x pearson/kendall x system/summary, PERM-BOTH, k={k}):"
          f" {seconds:.2f} s (target <= 3 s) {'ok' if seconds <= 3 else 'MISSED'}")
    for name in ("boot-sum-kendall", "perm-sum-kendall"):
        print(f"peak traced memory {name}: {peak_memory_mb(ours[name]):.1f} MiB")


if __name__ == "__main__":
    main()
