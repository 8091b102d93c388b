"""WMT-scale meta-evaluation speed: this checkout against a baseline commit (default `main`), same run.

Run: `PYTHONPATH=src python benchmarks/bench_wmt.py` (options: --baseline REF, --resamples K).
Continuous workload: 15 systems x 2000 segments, 30 metrics (435 pairs), k = 1000 resamples, PERM-BOTH
(all-pairs matrices) or BOOT-BOTH (one interval); synthetic, seeded: a latent quality per system and
segment, metrics = quality + noise of increasing scale, the human = quality rounded to quarters (tie-heavy,
like averaged MQM scores). The baseline is checked out into a temporary git worktree and timed in
subprocesses at two smaller numbers of resamples kb and 2 kb (one pair for the slowest rows), then
extrapolated linearly in k (fixed set-up cost + cost per resample) and multiplied by the number of pairs
(marked `~`), since its slowest rows take minutes to tens of minutes; this checkout is timed on the full workload after a
warm-up call (numba compilation, once per process, is reported separately). The acc23 row has no
baseline in metaeval: it is compared with a plain transcription of mt-metrics-eval's tau_optimization
(one metric, scaled to 30).

Tie-heavy workload (`--workload tie-heavy`, run first by default): the same shape with tie-heavy metrics
(:func:`tie_heavy_scores`: an MQM-like human, 10 continuous metrics, 10 rounded to 0.5, 5 LLM-judge-like
integers 0-100 in steps of 5, 5 with 40% zeros), written to wmt.csv with `metaeval.write_scores`. Each row
runs in fresh processes, on this checkout and on the baseline's sources: one-metric summary-level BOOT-BOTH
intervals and the system-level intervals of all metrics (import excluded, first call included, median of 3
processes), and the whole CLI commands `correlate`, `report` and `mt` with their defaults (wall and CPU
time of one process, and the number of warning lines it prints). Against the issue's start commit:
`--baseline 104a270 --workload tie-heavy`.
"""
from __future__ import annotations

import argparse
import itertools
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc

import numpy as np

N, M, P, K = 15, 2000, 30, 1000

STATS_IMPORTS = """
import importlib
def _stats(module, name):
    # metaeval.stats is grouped by concept (correlations/, resampling/, significance/, mt/); a baseline from
    # before the grouping has the same modules at the top of metaeval.stats (resampling/draws.py was resampling.py)
    old = module.split(".")[-1].replace("draws", "resampling")
    for path in ("metaeval.stats." + module, "metaeval.stats." + old):
        try:
            return getattr(importlib.import_module(path), name)
        except (ImportError, AttributeError):
            continue
    raise ImportError(module + "." + name)
"""

SETUP = f"""
import time, numpy as np
N, M, P = {N}, {M}, {P}
rng = np.random.default_rng(0)
q = rng.normal(size=(N, 1)) + rng.normal(size=(N, M))
z = np.round(q * 4) / 4
xs = np.stack([q + rng.normal(scale=0.5 + 0.1 * i, size=(N, M)) for i in range(P)])
{STATS_IMPORTS}
pairwise_tests = _stats("significance.pairs", "pairwise_tests")
bootstrap_interval = _stats("resampling.bootstrap", "bootstrap_interval")
"""

# name -> (statement on this checkout with k resamples, baseline statement with kb resamples, kb, scale)
CASES = {
    "item-grouped Pearson, all pairs": (
        "pairwise_tests(xs, z, level='summary', coefficient='pearson', n_resamples={k}, rng=0)",
        "pairwise_tests(xs, z, level='summary', coefficient='pearson', n_resamples={k}, rng=0)", 100, 1),
    "item-grouped Kendall, all pairs": (
        "pairwise_tests(xs, z, level='summary', coefficient='kendall-b', n_resamples={k}, rng=0)",
        "pairwise_tests(xs, z, level='summary', coefficient='kendall-b', n_resamples={k}, rng=0)", 100, 1),
    "item-grouped acc-eq, all pairs": (
        "pairwise_tests(xs, z, level='summary', coefficient='acc-eq', n_resamples={k}, rng=0)",
        "pairwise_tests(xs[:2], z, level='summary', coefficient='acc-eq', n_resamples={k}, rng=0)", 50, 435),
    "global Pearson, all pairs": (
        "pairwise_tests(xs, z, level='global', coefficient='pearson', n_resamples={k}, rng=0)",
        "pairwise_tests(xs[:2], z, level='global', coefficient='pearson', n_resamples={k}, rng=0)", 50, 435),
    "global Kendall BOOT-BOTH interval": (
        "bootstrap_interval(xs[0], z, level='global', coefficient='kendall-b', n_resamples={k}, rng=0)",
        "bootstrap_interval(xs[0], z, level='global', coefficient='kendall-b', n_resamples={k}, rng=0)", 50, 1),
    "item-grouped Spearman, all pairs": (
        "pairwise_tests(xs, z, level='summary', coefficient='spearman', n_resamples={k}, rng=0)",
        "pairwise_tests(xs[:2], z, level='summary', coefficient='spearman', n_resamples={k}, rng=0)", 50, 435),
    "by-system Pearson, all pairs": (
        "pairwise_tests(xs, z, level='by-system', coefficient='pearson', n_resamples={k}, rng=0)",
        "pairwise_tests(xs[:2], z, level='by-system', coefficient='pearson', n_resamples={k}, rng=0)", 50, 435),
    "by-system Kendall, all pairs": (
        "pairwise_tests(xs, z, level='by-system', coefficient='kendall-b', n_resamples={k}, rng=0)",
        "pairwise_tests(xs[:2], z, level='by-system', coefficient='kendall-b', n_resamples={k}, rng=0)", 50, 435),
    "global Kendall, all pairs": (
        "pairwise_tests(xs, z, level='global', coefficient='kendall-b', n_resamples={k}, rng=0)",
        "pairwise_tests(xs[:2], z, level='global', coefficient='kendall-b', n_resamples={k}, rng=0)", 50, 435),
    "global Spearman, all pairs": (
        "pairwise_tests(xs, z, level='global', coefficient='spearman', n_resamples={k}, rng=0)",
        "pairwise_tests(xs[:2], z, level='global', coefficient='spearman', n_resamples={k}, rng=0)", 50, 435),
    "global Kendall, all pairs, --tie-tolerance 0": (
        "pairwise_tests(xs, z, level='global', coefficient='kendall-b', n_resamples={k}, rng=0, rtol=0.0)",
        "pairwise_tests(xs[:2], z, level='global', coefficient='kendall-b', n_resamples={k}, rng=0)", 50, 435),
    "system-level Pearson, all pairs": (
        "pairwise_tests(xs, z, level='system', coefficient='pearson', n_resamples={k}, rng=0)",
        "pairwise_tests(xs, z, level='system', coefficient='pearson', n_resamples={k}, rng=0)", 1000, 1),
}
TARGETS = {"item-grouped Pearson, all pairs": 2.0, "item-grouped Kendall, all pairs": 2.0,
           "item-grouped acc-eq, all pairs": 2.0, "acc23 (calibrated once per metric), all pairs": 2.0,
           "global Pearson, all pairs": 2.0, "global Kendall BOOT-BOTH interval": 1.0,
           "item-grouped Spearman, all pairs": 2.0, "by-system Pearson, all pairs": 2.0,
           "global Kendall, all pairs, --tie-tolerance 0": 2.0}
# Rows this checkout is timed on with fewer resamples (kb and 2 kb, extrapolated in k like the baseline, `~`):
# at the global level the pairs whose two metrics hold values within the tie tolerance of each other
# (about a third of the pairs here, by chance among 60,000 continuous values) take the per-pair path.
SLOW_AFTER = {"global Kendall, all pairs": 50, "global Spearman, all pairs": 50}

ACC23 = """
calibrate_ties = _stats("mt.tie_calibration", "calibrate_ties")
bootstrap_draws = _stats("resampling.draws", "bootstrap_draws")
count_weights = _stats("resampling.draws", "count_weights")
resampled_task = _stats("mt.wmt", "resampled_task")
bootstrap_pvalue = _stats("significance.paired_bootstrap", "bootstrap_pvalue")
def acc23_matrix(k):
    eps = np.array([calibrate_ties(xs[i], z, level='summary').threshold for i in range(P)])
    w = count_weights(bootstrap_draws(N, M, method='inputs', n_resamples=k, rng=0).col_indices(), M)
    obs = resampled_task(xs, z, level='summary', coefficient='acc-eq', tie_thresholds=eps)
    res = resampled_task(xs, z, level='summary', coefficient='acc-eq', tie_thresholds=eps, weights=w)
    return [[bootstrap_pvalue(res[i] - res[j], obs[i] - obs[j], 'greater') for j in range(P)] for i in range(P)]
"""


# -- Tie-heavy workload ----------------------------------------------------------------------------------
TIE_HEAVY_KINDS = ("continuous",) * 10 + ("half",) * 10 + ("judge",) * 5 + ("zeros",) * 5


def tie_heavy_scores(seed: int = 0, n: int = N, m: int = M, kinds=TIE_HEAVY_KINDS) -> dict[str, np.ndarray]:
    """The tie-heavy workload: {name: (N, M) matrix}, the human first, seeded.

    The human is MQM-like: minus the weighted error count of each segment (minor 1, major 5, Poisson counts
    whose rate falls with a latent quality per system and segment), so most segments score 0, -1, -2, -5,
    ... (heavily tied). The 30 metrics are the human plus Gaussian noise of increasing scale; 10 stay
    continuous, 10 are rounded to 0.5, 5 are LLM-judge-like integers 0-100 in steps of 5 (a logistic map
    of the noisy score), and 5 are sentence-BLEU-like with about 40% exact zeros (the lowest 40% of each
    noisy score set to 0). ``n``, ``m`` and ``kinds`` change the shape (systems, segments, one metric per
    kind).
    """
    rng = np.random.default_rng(seed)
    N, M = n, m  # noqa: N806 - the shape of this call
    quality = rng.normal(scale=0.5, size=(N, 1)) + rng.normal(size=(N, M))
    rate = np.exp(-0.8 * quality)
    human = 0.0 - (rng.poisson(0.6 * rate) + 5.0 * rng.poisson(0.15 * rate))
    scores = {"human": human.astype(float)}
    for i, kind in enumerate(kinds):
        noisy = human + rng.normal(scale=1.0 + 0.2 * (i % 10), size=(N, M))
        if kind == "half":
            noisy = np.round(noisy * 2) / 2
        elif kind == "judge":
            noisy = 5.0 * np.round(20.0 / (1.0 + np.exp(-(noisy + 2.0) / 3.0)))
        elif kind == "zeros":
            shifted = noisy - noisy.min()
            noisy = np.where(noisy <= np.quantile(noisy, 0.4), 0.0, shifted)
        scores[f"{kind}{i:02d}"] = noisy
    return scores


def write_tie_heavy(path: str, seed: int = 0) -> None:
    """Write :func:`tie_heavy_scores` to ``path`` with ``metaeval.write_scores`` (human scorer ``human``)."""
    import metaeval as me

    scores = tie_heavy_scores(seed)
    me.write_scores(me.ScoreSet.from_matrices(scores, humans=["human"], name="tie-heavy"), path)


# name -> (statement, target s); timed in a fresh process each (import excluded, first call included)
TIE_INTERVALS = {
    "summary-level Spearman BOOT-BOTH interval, one metric": (
        "bootstrap_interval(xs['half10'], z, level='summary', coefficient='spearman', method='both',"
        " n_resamples=1000, rng=0)", 0.15),
    "summary-level Kendall BOOT-BOTH interval, one metric": (
        "bootstrap_interval(xs['half10'], z, level='summary', coefficient='kendall-b', method='both',"
        " n_resamples=1000, rng=0)", None),
    "summary-level Pearson BOOT-BOTH interval, one metric": (
        "bootstrap_interval(xs['half10'], z, level='summary', coefficient='pearson', method='both',"
        " n_resamples=1000, rng=0)", None),
    "the same three, a continuous metric": (
        "[bootstrap_interval(xs['continuous00'], z, level='summary', coefficient=c, method='both',"
        " n_resamples=1000, rng=0) for c in ('spearman', 'kendall-b', 'pearson')]", None),
    "system-level BOOT-BOTH intervals, 30 metrics x 3 coefficients": (
        "[bootstrap_interval(x, z, level='system', coefficient=c, method='both', n_resamples=1000, rng=0)"
        " for x in xs.values() for c in ('pearson', 'spearman', 'kendall-b')]", None),
    # all-pairs PERM-BOTH tests on the 30 tie-heavy metrics (or 8 of them, 28 pairs, with fewer resamples where
    # the full matrix takes minutes: scale by 435 / 28 pairs and by 1000 / k resamples for the row)
    "item-grouped Pearson PERM-BOTH, all 435 pairs, k=1000": (
        "pairwise_tests(np.stack(list(xs.values())), z, level='summary', coefficient='pearson', n_resamples=1000,"
        " rng=0)", 2.5),
    "by-system Kendall PERM-BOTH, 28 pairs, k=100": (
        "pairwise_tests(np.stack(list(xs.values()))[EIGHT], z, level='by-system', coefficient='kendall-b',"
        " n_resamples=100, rng=0)", None),
    "global Kendall PERM-BOTH, 28 pairs, k=50": (
        "pairwise_tests(np.stack(list(xs.values()))[EIGHT], z, level='global', coefficient='kendall-b',"
        " n_resamples=50, rng=0)", None),
}
# name -> (metaeval arguments, target s); wall time of the whole command in a fresh process
TIE_COMMANDS = {
    "metaeval correlate --scores wmt.csv --human human": (["correlate", "--scores", "{csv}", "--human", "human"], 15.0),
    "metaeval report --scores wmt.csv --human human": (
        ["report", "--scores", "{csv}", "--human", "human", "--output", "{out}"], 45.0),
    "metaeval mt --scores wmt.csv --human human": (["mt", "--scores", "{csv}", "--human", "human"], 5.0),
}
TIE_SETUP = """
import time, warnings, numpy as np
warnings.simplefilter('ignore')
data = np.load({npz!r})
xs = {{name: data[name] for name in data.files}}
z = xs.pop('human')
""" + STATS_IMPORTS + """
bootstrap_interval = _stats("resampling.bootstrap", "bootstrap_interval")
pairwise_tests = _stats("significance.pairs", "pairwise_tests")
EIGHT = [0, 1, 10, 11, 20, 21, 25, 26]  # two metrics of each kind
"""
COMMAND_TIMEOUT = 1200


def time_interval(src: str, npz: str, statement: str) -> tuple[float, float]:
    """Wall and CPU time of ``statement`` in a fresh process (after the imports and the data set-up)."""
    code = (TIE_SETUP.format(npz=npz) + f"\nt, c = time.perf_counter(), time.process_time()\n{statement}\n"
            "print(time.perf_counter() - t, time.process_time() - c)\n")
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=src), capture_output=True,
                         text=True, check=True)
    wall, cpu = out.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def time_command(src: str, argv: list[str], workdir: str) -> tuple[tuple[float, float], int]:
    """Wall and CPU time of ``metaeval argv`` in a fresh process, and the number of warning lines it printed."""
    code = "import sys\nfrom metaeval.cli.main import main\nsys.exit(main(sys.argv[1:]))\n"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        out = subprocess.run([sys.executable, "-c", code, *argv], env=dict(os.environ, PYTHONPATH=src), cwd=workdir,
                             capture_output=True, text=True, timeout=COMMAND_TIMEOUT)
    except subprocess.TimeoutExpired:
        return (float("inf"), float("inf")), -1
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if out.returncode != 0:
        raise RuntimeError(f"metaeval {' '.join(argv)} failed ({out.returncode}): {out.stderr[-2000:]}")
    return (elapsed, cpu), sum(line.startswith("metaeval: warning:") for line in out.stderr.splitlines())


def tie_heavy_rows(baseline_src: str | None, tmp: str, only: str | None = None) -> None:
    """Time the tie-heavy workload on this checkout and, if given, a baseline's sources (``only``:
    the rows whose name contains this text)."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "src")
    csv, npz = os.path.join(tmp, "wmt.csv"), os.path.join(tmp, "tie_heavy.npz")
    write_tie_heavy(csv)
    np.savez(npz, **tie_heavy_scores())
    sides = [("after", os.path.abspath(here))] + ([("before", baseline_src)] if baseline_src else [])
    rows: dict[str, dict[str, tuple[float, float]]] = {}
    warned: dict[str, dict[str, int]] = {}
    wanted = lambda name: only is None or only in name  # noqa: E731
    for name, (statement, _) in TIE_INTERVALS.items():  # the median of 3 fresh processes (by wall time)
        if wanted(name):
            rows[name] = {side: sorted(time_interval(src, npz, statement) for _ in range(3))[1] for side, src in sides}
    for name, (argv, _) in TIE_COMMANDS.items():
        if not wanted(name):
            continue
        rows[name], warned[name] = {}, {}
        for side, src in sides:
            out = os.path.join(tmp, f"report-{side}")
            args = [a.format(csv=csv, out=out) for a in argv]
            rows[name][side], warned[name][side] = time_command(src, args, tmp)
    print(f"Tie-heavy workload: N={N} systems x M={M} segments, {len(TIE_HEAVY_KINDS)} metrics "
          "(10 continuous, 10 rounded to 0.5, 5 judges 0-100 in steps of 5, 5 with 40% zeros), k=1000; "
          "each row in a fresh process")
    print(f"{'workload (wall s, CPU s in parentheses)':<52} {'before':>16} {'after':>14} {'ratio':>7}  target (wall)")
    nan = (float("nan"), float("nan"))
    for name, times in rows.items():
        goal = (TIE_INTERVALS.get(name) or TIE_COMMANDS.get(name))[1]
        b, a = times.get("before", nan), times["after"]
        verdict = "" if goal is None else f"<= {goal:g} s {'met' if a[0] <= goal else 'MISSED'}"
        label = name.replace(" --scores wmt.csv --human human", "")
        print(f"{label:<52} {b[0]:>7.2f} ({b[1]:>6.2f}) {a[0]:>6.2f} ({a[1]:>5.2f}) {b[0] / a[0]:>6.1f}x  {verdict}")
    for name, counts in warned.items():
        print(f"warning lines, {name}: " + ", ".join(f"{side} {n}" for side, n in counts.items()))


def mtme_tau_optimization(metric, human):
    """mt-metrics-eval's tau_optimization (acc23, item-grouped, every pair: sample_rate = 1), transcribed."""
    rows, pairs = {}, []
    for g in range(metric.shape[0]):
        stats = [0, 0, 0, 0, 0]  # con, dis, ties human, ties metric, ties both
        for i, j in itertools.combinations(range(metric.shape[1]), 2):
            h1, h2, m1, m2 = human[g, i], human[g, j], metric[g, i], metric[g, j]
            cat = (4 if m1 == m2 else 2) if h1 == h2 else (3 if m1 == m2 else (0 if (h1 > h2) == (m1 > m2) else 1))
            stats[cat] += 1
            pairs.append((abs(m1 - m2), g, cat, 4 if h1 == h2 else 3))
        rows[g] = stats
    acc = lambda s: (s[0] + s[4]) / sum(s)  # noqa: E731
    total = sum(acc(s) for s in rows.values())
    thresholds, taus = [0.0], [total / len(rows)]
    for diff, g, cat, tie_cat in sorted(pairs, key=lambda p: p[0]):
        total -= acc(rows[g])
        rows[g][cat] -= 1
        rows[g][tie_cat] += 1
        total += acc(rows[g])
        if thresholds[-1] == diff:
            taus[-1] = total / len(rows)
        else:
            thresholds.append(diff)
            taus.append(total / len(rows))
    return thresholds[int(np.argmax(taus))]


def run_baseline(src: str, statement: str) -> float:
    code = SETUP + f"\nt = time.perf_counter()\n{statement}\nprint(time.perf_counter() - t)\n"
    env = dict(os.environ, PYTHONPATH=src)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main", help="git ref timed as 'before' (default main)")
    parser.add_argument("--resamples", type=int, default=K)
    parser.add_argument("--skip-baseline", action="store_true")
    parser.add_argument("--workload", choices=("all", "continuous", "tie-heavy"), default="all",
                        help="continuous: the rows of the continuous workload; tie-heavy: its rows (fresh processes)")
    parser.add_argument("--only", help="tie-heavy rows: only those whose name contains this text")
    args = parser.parse_args()
    if args.workload in ("all", "tie-heavy"):
        with tempfile.TemporaryDirectory() as tmp:
            baseline = None
            if not args.skip_baseline:
                baseline = os.path.join(tmp, "baseline")
                subprocess.run(["git", "worktree", "add", "--detach", baseline, args.baseline], check=True,
                               capture_output=True)
            try:
                tie_heavy_rows(None if baseline is None else os.path.join(baseline, "src"), tmp, args.only)
            finally:
                if baseline is not None:
                    subprocess.run(["git", "worktree", "remove", "--force", baseline], check=True, capture_output=True)
        if args.workload == "tie-heavy":
            return
    k = args.resamples
    scope: dict = {}
    exec(SETUP + ACC23, scope)  # noqa: S102 - the same setup as the baseline subprocesses

    before = {}
    if not args.skip_baseline:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "baseline")
            subprocess.run(["git", "worktree", "add", "--detach", path, args.baseline], check=True,
                           capture_output=True)
            try:
                for name, (_, base, kb, scale) in CASES.items():
                    src = os.path.join(path, "src")
                    if kb >= k:
                        before[name] = run_baseline(src, base.format(k=k)) * scale
                        continue
                    t1, t2 = (run_baseline(src, base.format(k=kk)) for kk in (kb, 2 * kb))
                    slope = max(t2 - t1, 0.0) / kb
                    before[name] = (t1 + slope * (k - kb)) * scale
            finally:
                subprocess.run(["git", "worktree", "remove", "--force", path], check=True, capture_output=True)
        x, zz = scope["xs"][0], scope["z"]
        start = time.perf_counter()
        mtme_tau_optimization(x.T, zz.T)
        before["acc23 (calibrated once per metric), all pairs"] = (time.perf_counter() - start) * P

    start = time.perf_counter()
    exec("pairwise_tests(xs[:2, :, :40], z[:, :40], level='summary', coefficient='pearson', n_resamples=5, rng=0)\n"
         "bootstrap_interval(xs[0][:, :40], z[:, :40], level='global', coefficient='kendall-b', n_resamples=5,"
         " rng=0)\n"
         "pairwise_tests(xs[:2, :, :40], z[:, :40], level='global', coefficient='kendall-b', n_resamples=5, rng=0)\n"
         "pairwise_tests(xs[:2, :, :40], z[:, :40], level='global', coefficient='spearman', n_resamples=5, rng=0)",
         scope)
    compile_s = time.perf_counter() - start
    after = {}
    for name, (stmt, _, _, _) in CASES.items():
        times = []
        for kk in ((SLOW_AFTER[name], 2 * SLOW_AFTER[name]) if name in SLOW_AFTER else (k,)):
            start = time.perf_counter()
            exec(stmt.format(k=kk), scope)
            times.append(time.perf_counter() - start)
        if name in SLOW_AFTER:
            kb = SLOW_AFTER[name]
            times = [times[0] + max(times[1] - times[0], 0.0) / kb * (k - kb)]
        after[name] = times[0]
    start = time.perf_counter()
    exec(f"acc23_matrix({k})", scope)
    after["acc23 (calibrated once per metric), all pairs"] = time.perf_counter() - start

    print(f"N={N} systems x M={M} segments, P={P} metrics ({P * (P - 1) // 2} pairs), k={k}; "
          f"baseline {args.baseline!r} (~ = scaled from fewer resamples or one pair)")
    print(f"{'workload':<48} {'before s':>10} {'after s':>9} {'ratio':>8}  target")
    for name in list(CASES) + ["acc23 (calibrated once per metric), all pairs"]:
        b = before.get(name, float("nan"))
        scaled = name in CASES and (CASES[name][2] != k or CASES[name][3] != 1)
        goal = TARGETS.get(name)
        verdict = "" if goal is None else f"<= {goal:g} s {'met' if after[name] <= goal else 'MISSED'}"
        mark = "~" if name in SLOW_AFTER else ""
        print(f"{name:<48} {('~' if scaled else '') + f'{b:.2f}':>10} {mark + f'{after[name]:.2f}':>9} "
              f"{b / after[name]:>7.0f}x  {verdict}")
    print(f"numba compilation (first call in a process, not included above): {compile_s:.1f} s")
    tracemalloc.start()
    exec(CASES["item-grouped Kendall, all pairs"][0].format(k=k), scope)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    print(f"peak traced memory, item-grouped Kendall all pairs: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
