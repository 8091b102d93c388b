"""Bradley-Terry with bootstrap intervals: metaeval vs Evalica vs FastChat's recipe, in the same run.

Run: `.venv/bin/python benchmarks/bench_judges.py [--comparisons 1000000] [--systems 100] [--resamples 1000]
[--baseline-resamples 3]`.

Data: `--comparisons` simulated comparisons among `--systems` systems (random pairs, Bradley-Terry strengths
from N(0, 1), 10% ties), 100 comparisons per input. Timed, each from the raw comparison arrays:

- metaeval: `me.rank_systems(..., resampling='comparisons', n_resamples=k)` - the point fit and k
  resamples (counts reduced to per-pair win/loss/tie once; a resample of comparisons is a multinomial
  draw on those counts; all resamples fitted by one batched Newton iteration warm-started at the point
  estimate), the rank intervals and rank probabilities included; also `resampling='inputs'`.
- Evalica 0.4 (`evalica.bootstrap(evalica.bradley_terry, ...)`, its Rust solver): `--baseline-resamples`
  resamples, the per-resample time extrapolated to k.
- FastChat's published recipe (Chatbot Arena's `elo_analysis` notebook, as described there, written here
  from the description): each round `battles.sample(frac=1.0, replace=True)` with pandas, then the MLE of
  a logistic model on a design with +1 / -1 columns for the two models, every battle entered twice (a tie
  once as a win of each side), fitted with scikit-learn's `LogisticRegression(fit_intercept=False)`:
  `--baseline-resamples` rounds, extrapolated to k.

Checks: the three point estimates agree (log-strengths, centred). metaeval's CPU time is printed beside
its wall time: on a machine shared with other jobs the wall time includes waiting for a core.
Target: k = 1000 resamples of 1,000,000 comparisons among 100 systems in <= 10 s.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

TARGET_S = 10.0


def simulate(n_comparisons: int, n_systems: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    strength = rng.normal(size=n_systems)
    a = rng.integers(0, n_systems, n_comparisons)
    b = (a + rng.integers(1, n_systems, n_comparisons)) % n_systems
    p = 1.0 / (1.0 + np.exp(-(strength[a] - strength[b])))
    tie = rng.random(n_comparisons) < 0.1
    verdict = np.where(tie, 2, np.where(rng.random(n_comparisons) < p, 0, 1))
    return a, b, verdict


def metaeval_run(a, b, verdict, n_systems, k, resampling):
    import metaeval as me

    start, cpu = time.perf_counter(), time.process_time()
    c = me.make_comparisons(systems=[f"s{i}" for i in range(n_systems)],
                            inputs=[f"q{i}" for i in range(-(-len(a) // 100))], judges=["j"],
                            input=np.arange(len(a)) // 100, first=a, second=b, judge=np.zeros(len(a), int),
                            verdict=verdict)
    result = me.rank_systems(c, resampling=resampling, n_resamples=k, rng=0)
    return time.perf_counter() - start, time.process_time() - cpu, result


def evalica_run(a, b, verdict, k):
    import evalica

    kinds = (evalica.Winner.X, evalica.Winner.Y, evalica.Winner.Draw)
    winners = [kinds[v] for v in verdict.tolist()]
    xs, ys = [f"s{i}" for i in a], [f"s{i}" for i in b]
    start = time.perf_counter()
    point = evalica.bradley_terry(xs, ys, winners, tolerance=1e-10, limit=10000)
    point_s = time.perf_counter() - start
    start, cpu = time.perf_counter(), time.process_time()
    evalica.bootstrap(evalica.bradley_terry, xs, ys, winners, n_resamples=k, bootstrap_method="percentile",
                      random_state=0)
    return point_s, (time.perf_counter() - start) / k, (time.process_time() - cpu) / k, point


def fastchat_fit(battles, n_systems):
    """MLE of the logistic model of FastChat's recipe (see the module docstring) on one set of battles."""
    from scipy.sparse import csr_matrix
    from sklearn.linear_model import LogisticRegression

    a = battles["a"].to_numpy()
    b = battles["b"].to_numpy()
    v = battles["verdict"].to_numpy()
    n = len(a)
    rows = np.repeat(np.arange(2 * n), 2)
    cols = np.stack([np.concatenate([a, a]), np.concatenate([b, b])], axis=1).ravel()
    data = np.tile([1.0, -1.0], 2 * n)
    X = csr_matrix((data, (rows, cols)), shape=(2 * n, n_systems))
    # every battle twice: a win twice for its winner, a tie once for each side
    y = np.concatenate([np.where(v == 1, 0, 1), np.where(v == 0, 1, 0)])
    model = LogisticRegression(fit_intercept=False, C=1e8, tol=1e-8, max_iter=1000)
    model.fit(X, y)
    return model.coef_[0]


def fastchat_run(a, b, verdict, n_systems, k):
    import pandas as pd

    battles = pd.DataFrame({"a": a, "b": b, "verdict": verdict})
    start = time.perf_counter()
    point = fastchat_fit(battles, n_systems)
    point_s = time.perf_counter() - start
    start, cpu = time.perf_counter(), time.process_time()
    for round_ in range(k):
        fastchat_fit(battles.sample(frac=1.0, replace=True, random_state=round_), n_systems)
    return point_s, (time.perf_counter() - start) / k, (time.process_time() - cpu) / k, point


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--comparisons", type=int, default=1_000_000)
    parser.add_argument("--systems", type=int, default=100)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--baseline-resamples", type=int, default=3)
    args = parser.parse_args()
    n, k = args.systems, args.resamples
    a, b, verdict = simulate(args.comparisons, n)
    metaeval_run(*simulate(1000, 5, seed=1), 5, 10, "comparisons")  # imports (numpy, scipy, pandas) not timed
    print(f"{args.comparisons:,} comparisons, {n} systems, k = {k} resamples; load average"
          f" {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    seconds, cpu, result = metaeval_run(a, b, verdict, n, k, "comparisons")
    order = np.argsort([int(s[1:]) for s in result.systems])
    ours = result.scores[order]
    e_point_s, e_per, e_cpu, e_point = evalica_run(a, b, verdict, args.baseline_resamples)
    e_scores = np.log(e_point.scores[[f"s{i}" for i in range(n)]].to_numpy())
    f_point_s, f_per, f_cpu, f_point = fastchat_run(a, b, verdict, n, args.baseline_resamples)
    print(f"max |score difference| vs Evalica {np.max(np.abs(ours - (e_scores - e_scores.mean()))):.2e},"
          f" vs FastChat recipe {np.max(np.abs(ours - (f_point - f_point.mean()))):.2e}")
    inputs_s, inputs_cpu, _ = metaeval_run(a, b, verdict, n, k, "inputs")
    e_total = e_point_s + k * e_per
    f_total = f_point_s + k * f_per
    print(f"{'method':46s} {'seconds':>9s} {'vs metaeval':>12s}")
    print(f"{'metaeval rank_systems (comparisons bootstrap)':46s} {seconds:9.2f} {'1.0x':>12s}   (CPU {cpu:.2f} s)")
    print(f"{'metaeval rank_systems (inputs bootstrap)':46s} {inputs_s:9.2f} {inputs_s / seconds:11.1f}x"
          f"   (CPU {inputs_cpu:.2f} s)")
    print(f"{'Evalica bootstrap (extrapolated)':46s} {e_total:9.1f} {e_total / seconds:11.1f}x"
          f"   ({args.baseline_resamples} resamples timed: {e_per:.2f} s each, CPU {e_cpu:.2f} s;"
          f" CPU ratio {k * e_cpu / cpu:.0f}x)")
    print(f"{'FastChat recipe (extrapolated)':46s} {f_total:9.1f} {f_total / seconds:11.1f}x"
          f"   ({args.baseline_resamples} rounds timed: {f_per:.2f} s each, CPU {f_cpu:.2f} s;"
          f" CPU ratio {k * f_cpu / cpu:.0f}x)")
    status = "ok" if seconds <= TARGET_S else "MISSED"
    print(f"target: <= {TARGET_S:g} s for metaeval (comparisons bootstrap): {seconds:.2f} s {status}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
