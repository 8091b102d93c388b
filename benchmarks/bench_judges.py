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

The whole command (issue 39.7): the same battles written as a Chatbot-Arena-style JSON Lines file
(`question_id` - unique per battle by default, as Arena's conversations are, or one of `--questions` -,
`model_a`, `model_b`, `winner` with `tie (bothbad)`, `judge`, `turn`, `language`, `tstamp`), then
`metaeval judge rank --comparisons FILE --n-resamples k` run as a child process, its CPU time (user + system,
from `getrusage`) and peak resident memory measured. Target: <= 10 s CPU and <= 4 times the file's size.
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


def write_battles(path, a, b, verdict, n_systems, questions: int | None, seed: int = 0) -> int:
    """The battles as a Chatbot-Arena-style JSON Lines file; returns its size in bytes."""
    import json

    rng = np.random.default_rng(seed)
    n = len(a)
    qid = np.arange(n) if questions is None else rng.integers(0, questions, n)
    winner = np.array(["model_a", "model_b", "tie"])[verdict]
    winner = np.where((verdict == 2) & (rng.random(n) < 0.3), "tie (bothbad)", winner)
    user = rng.integers(0, 50_000, n)
    with open(path, "w", encoding="utf-8") as out:
        for k in range(n):
            out.write(json.dumps({"question_id": f"{qid[k]:032x}", "model_a": f"model-{a[k]:03d}-chat",
                                  "model_b": f"model-{b[k]:03d}-chat", "winner": str(winner[k]),
                                  "judge": f"arena_user_{user[k]}", "turn": 1, "language": "English",
                                  "tstamp": 1.7e9 + k}) + "\n")
    return os.path.getsize(path)


def command_run(path, k: int) -> tuple[float, float, float]:
    """`metaeval judge rank` on ``path`` in a child process: (wall s, CPU s, peak RSS bytes)."""
    import resource
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        # the peak is the child's own (VmHWM): ru_maxrss survives exec and would report this process's size
        code = ("import sys, resource, time\n"
                "from metaeval.cli.main import main\n"
                "code = main(sys.argv[1:])\n"
                "u = resource.getrusage(resource.RUSAGE_SELF)\n"
                "status = open('/proc/self/status').read()\n"
                "peak = int(status.split('VmHWM:')[1].split()[0]) * 1024\n"
                "print(u.ru_utime + u.ru_stime, peak, file=sys.stderr)\n"
                "sys.exit(code)\n")
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", code, "judge", "rank", "--comparisons", str(path),
                               "--n-resamples", str(k), "--seed", "0", "--format", "json", "--output",
                               os.path.join(tmp, "ranking.json"), "--no-progress"], capture_output=True, text=True)
        wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    cpu, peak = done.stderr.strip().splitlines()[-1].split()
    del resource
    return wall, float(cpu), float(peak)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--comparisons", type=int, default=1_000_000)
    parser.add_argument("--systems", type=int, default=100)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--baseline-resamples", type=int, default=3)
    parser.add_argument("--questions", type=int, default=None,
                        help="Questions the battles are about (default: one per battle, as in Chatbot Arena).")
    parser.add_argument("--file", default="/tmp/metaeval-bench-battles.jsonl", help="Where the JSON Lines go.")
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
    size = write_battles(args.file, a, b, verdict, n, args.questions)
    wall, cpu_c, peak = command_run(args.file, k)
    questions = "one per battle" if args.questions is None else f"{args.questions:,}"
    print(f"whole command `metaeval judge rank --comparisons FILE --n-resamples {k}` (questions: {questions}):"
          f" wall {wall:.1f} s, CPU {cpu_c:.2f} s, peak {peak / 2**20:.0f} MiB = {peak / size:.1f}x the file"
          f" ({size / 2**20:.0f} MiB)")
    ok = cpu_c <= TARGET_S and peak <= 4 * size
    print(f"target: <= {TARGET_S:g} s CPU and <= 4x the file's size: {'ok' if ok else 'MISSED'}")
    os.remove(args.file)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
