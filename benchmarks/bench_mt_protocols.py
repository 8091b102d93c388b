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
  the sign-flip sums costs P N M R multiply-adds per draw (k draws, every language pair), timed at this
  machine's measured BLAS rate in the same run.

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


def write_workload(name: str, directory: str) -> list[str]:
    """Write the language pairs of a workload as score files; returns the `--scores LP=PATH` arguments."""
    import metaeval as me

    lps, n, m, kinds, _, _ = WORKLOADS[name]
    args = []
    for lp in range(lps):
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
    """Multiply-adds per second of a float64 matrix product shaped like SPA's null."""
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2048, 800)), rng.normal(size=(800, 1000))
    a @ b
    start = time.perf_counter()
    for _ in range(3):
        a @ b
    return 3 * a.shape[0] * a.shape[1] * b.shape[1] / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline-src", default="/work/main/src")
    parser.add_argument("--workload", choices=tuple(WORKLOADS), action="append")
    parser.add_argument("--no-baseline", action="store_true")
    opts = parser.parse_args()
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    for name in opts.workload or ("wmt24",):
        lps, n, m, kinds, protocol, target = WORKLOADS[name]
        with tempfile.TemporaryDirectory() as tmp:
            args = write_workload(name, tmp) + ["--human", "human", "--protocol", protocol, "--format", "json",
                                                "--output", os.path.join(tmp, "out.json")]
            t_new, c_new, rc, text = run(here, args)
            if rc:
                raise SystemExit(f"this checkout failed: {text[-2000:]}")
            print(f"{name}: {lps} language pairs x {n} systems x {m} segments x {len(kinds)} metrics, k = 1000: "
                  f"this checkout {t_new:.1f} s wall, {c_new:.1f} s CPU (target <= {target:.0f} s)")
            if name == "wmt25":
                rate = blas_rate()
                floor = lps * len(kinds) * n * m * 1000 * 1000 / rate
                print(f"  SPA null floor: P N M R k per language pair = {len(kinds) * n * m * 1000 * 1000:.2e}"
                      f" multiply-adds x {lps} at {rate / 1e9:.1f} G/s = {floor:.0f} s")
            if not opts.no_baseline:
                base_args = [a for a in args]
                t_old, c_old, rc, text = run(opts.baseline_src, base_args)
                status = "" if rc == 0 else f" (exit {rc}: {text.strip().splitlines()[-1][:120]})"
                print(f"  baseline {opts.baseline_src}: {t_old:.1f} s wall, {c_old:.1f} s CPU{status}; ratio"
                      f" {t_old / t_new:.1f}x wall, {c_old / c_new:.1f}x CPU")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
