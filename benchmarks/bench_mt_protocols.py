"""`metaeval mt` with the WMT24 / WMT25 protocols, whole command in a fresh process, this checkout against a
baseline source tree in the same run.

Run: `PYTHONPATH=src python benchmarks/bench_mt_protocols.py [--baseline-src /work/main/src] [--workload wmt24]`.

Workloads (synthetic, seeded, tie-heavy as `bench_wmt.tie_heavy_scores`: an MQM-like human, metrics that are
continuous, rounded to 0.5, LLM-judge-like integers in steps of 5, and with 40% zeros):

* `wmt24`: two language pairs of 16 systems x 600 segments x 8 metrics (2 continuous, 2 rounded to 0.5, 2
  judge-like, 2 with zeros), `metaeval mt --protocol wmt24` with k = 1000 permutations and R = 1000 SPA
  permutations (the defaults). Target <= 20 s.
* `wmt25`: 16 language pairs of 20 systems x 800 segments x 30 metrics (a third tie-heavy), `--protocol wmt25`,
  k = 1000. Target <= 600 s. The arithmetic floor of SPA's null is printed beside it: the matrix product of
  the sign-flip sums costs P N M R multiply-adds per draw (k draws, every language pair) at this machine's
  float32 BLAS rate, and the counts P (P - 1) N (N - 1) / 2 R comparisons per draw (both hybrids of every
  metric pair; fewer when the bounds decide a pair) at a compiled loop's rate on every core, both measured in
  the same run.

Each command runs in a fresh process (`python -m metaeval.cli.main mt ...`, import included); the wall time
is printed with the ratio baseline / this checkout.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_wmt import tie_heavy_scores  # noqa: E402

WORKLOADS = {
    # name: (language pairs, systems, segments, metric kinds, protocol, target s)
    "wmt24": (2, 16, 600, ("continuous", "half", "judge", "zeros") * 2, "wmt24", 20.0),
    "wmt25": (16, 20, 800, ("continuous",) * 20 + ("half",) * 4 + ("judge",) * 3 + ("zeros",) * 3, "wmt25", 600.0),
}


def write_workload(name: str, directory: str, lps: int | None = None) -> list[str]:
    """Write the language pairs of a workload (the first ``lps`` of them) as score files; returns the
    `--scores LP=PATH` arguments."""
    import metaeval as me

    n_lps, n, m, kinds, _, _ = WORKLOADS[name]
    args = []
    for lp in range(n_lps if lps is None else lps):
        scores = tie_heavy_scores(seed=lp, n=n, m=m, kinds=kinds)
        path = os.path.join(directory, f"lp{lp:02d}.csv")
        me.write_scores(me.ScoreSet.from_matrices(scores, humans=["human"], name=f"lp{lp:02d}"), path)
        args += ["--scores", f"lp{lp:02d}={path}"]
    return args


def run(src: str, args: list[str]) -> tuple[float, float, int, str]:
    """(wall s, CPU s of the process, exit code, output) of `metaeval mt ARGS` with PYTHONPATH=src."""
    import resource

    env = dict(os.environ, PYTHONPATH=src, COLUMNS="200")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "metaeval.cli.main", "mt", *args], env=env, capture_output=True,
                         text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return time.perf_counter() - start, cpu, out.returncode, (out.stdout + out.stderr)


def blas_rate() -> float:
    """Multiply-adds per second (all cores) of a float32 matrix product shaped like SPA's null: the masked
    scores of 16 draws x 30 metrics x 20 systems (800 segments) times the 1000 sign flips."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=(9600, 800)).astype(np.float32)
    b = rng.normal(size=(800, 1000)).astype(np.float32)
    a @ b
    start = time.perf_counter()
    for _ in range(3):
        a @ b
    return 3 * a.shape[0] * a.shape[1] * b.shape[1] / (time.perf_counter() - start)


def compare_rate() -> float:
    """Comparisons ``v[x] + w[x] >= t`` per second of one core in a compiled loop (SPA's counts: float64, every
    metric pair with every other's vectors, 30 metrics x 1000 sign flips)."""
    import numba

    @numba.njit(fastmath={"contract", "arcp"})
    def count(v, w, reps):
        total = 0
        for _ in range(reps):
            for i in range(v.shape[0]):
                for j in range(w.shape[0]):
                    if i != j:
                        c = 0
                        for x in range(v.shape[1]):
                            c += v[i, x] + w[j, x] >= 0.0
                        total += c
        return total

    rng = np.random.default_rng(0)
    v, w = rng.normal(size=(30, 1000)), rng.normal(size=(30, 1000))
    count(v, w, 1)
    start = time.perf_counter()
    count(v, w, 50)
    return 50 * 30 * 29 * 1000 / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline-src", default="/work/main/src")
    parser.add_argument("--workload", choices=tuple(WORKLOADS), action="append")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--language-pairs", type=int, help="run only the first N language pairs of the workload")
    opts = parser.parse_args()
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    for name in opts.workload or ("wmt24",):
        lps, n, m, kinds, protocol, target = WORKLOADS[name]
        lps = min(lps, opts.language_pairs or lps)
        with tempfile.TemporaryDirectory() as tmp:
            args = write_workload(name, tmp, lps) + ["--human", "human", "--protocol", protocol, "--format", "json",
                                                "--output", os.path.join(tmp, "out.json")]
            t_new, c_new, rc, text = run(here, args)
            if rc:
                raise SystemExit(f"this checkout failed: {text[-2000:]}")
            print(f"{name}: {lps} language pairs x {n} systems x {m} segments x {len(kinds)} metrics, k = 1000: "
                  f"this checkout {t_new:.1f} s wall, {c_new:.1f} s CPU (target <= {target:.0f} s)")
            if name == "wmt25":
                flops, compares = blas_rate(), compare_rate()
                macs = lps * len(kinds) * n * m * 1000 * 1000  # P N M R multiply-adds per draw, k draws, every LP
                counts = lps * len(kinds) * (len(kinds) - 1) * n * (n - 1) // 2 * 1000 * 1000  # both hybrids
                cores = os.cpu_count() or 1
                t_macs, t_counts = macs / flops, counts / compares / cores
                print(f"  SPA null floor: product {macs:.2e} multiply-adds at {flops / 1e9:.0f} G/s (all cores) ="
                      f" {t_macs:.0f} s; counts {counts:.2e} comparisons at {compares / 1e9:.1f} G/s per core"
                      f" / {cores} cores = {t_counts:.0f} s; floor {t_macs + t_counts:.0f} s wall")
            if not opts.no_baseline:
                base_args = [a for a in args]
                t_old, c_old, rc, text = run(opts.baseline_src, base_args)
                status = "" if rc == 0 else f" (exit {rc}: {text.strip().splitlines()[-1][:120]})"
                print(f"  baseline {opts.baseline_src}: {t_old:.1f} s wall, {c_old:.1f} s CPU{status}; ratio"
                      f" {t_old / t_new:.1f}x wall, {c_old / c_new:.1f}x CPU")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
