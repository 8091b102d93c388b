"""Kendall tau-b PERM-BOTH over all metric pairs on the tie-heavy workload of bench_wmt.py, full size, fresh processes.

Run: `PYTHONPATH=src python benchmarks/bench_kendall_ties.py` (options: --resamples K, --baseline REF, --only TEXT).
The 30 metrics of `bench_wmt.tie_heavy_scores` (10 continuous, 10 rounded to 0.5, 5 judges 0-100 in steps of
5, 5 with 40% zeros; 15 systems x 2000 segments), all 435 pairs, by-system, global and item-grouped (summary)
level, the default tie rule. Each row runs in a fresh process (import and data set-up excluded, the first
compiled call included: with numba's cache warm, loading only). With --baseline, the baseline's sources (a
temporary git worktree) are timed in the same run at K/10 and K/5 resamples and extrapolated linearly in k
(marked `~`: sources that take minutes per row at full size), or with --full-baseline at K like this checkout
(no mark).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_wmt import tie_heavy_scores  # noqa: E402

ROWS = {"by-system Kendall PERM-BOTH, all 435 pairs": ("by-system", 3.0),
        "global Kendall PERM-BOTH, all 435 pairs": ("global", 10.0),
        "item-grouped Kendall PERM-BOTH, all 435 pairs": ("summary", 3.0)}
CODE = """
import time, warnings, numpy as np
warnings.simplefilter('ignore')
data = np.load({npz!r})
z = data['human']
xs = np.stack([data[name] for name in data.files if name != 'human'])
from metaeval.stats.significance.pairs import pairwise_tests
t, c = time.perf_counter(), time.process_time()
pairwise_tests(xs, z, level={level!r}, coefficient='kendall-b', n_resamples={k}, rng=0)
print(time.perf_counter() - t, time.process_time() - c)
"""


def timed(src: str, npz: str, level: str, k: int) -> tuple[float, float]:
    """Wall and CPU seconds of the row in a fresh process on the sources ``src``."""
    out = subprocess.run([sys.executable, "-c", CODE.format(npz=npz, level=level, k=k)],
                         env=dict(os.environ, PYTHONPATH=src), capture_output=True, text=True, check=True)
    wall, cpu = out.stdout.split()[-2:]
    return float(wall), float(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--baseline", help="git ref timed in the same run (extrapolated from k/10 and k/5)")
    parser.add_argument("--full-baseline", action="store_true", help="time the baseline at k, not extrapolated")
    parser.add_argument("--only", help="time the rows whose name contains this")
    args = parser.parse_args()
    rows = {name: row for name, row in ROWS.items() if not args.only or args.only in name}
    k = args.resamples
    with tempfile.TemporaryDirectory() as tmp:
        npz = os.path.join(tmp, "tie_heavy.npz")
        np.savez(npz, **tie_heavy_scores())
        here = os.path.abspath(os.path.join(HERE, os.pardir, "src"))
        before = {}
        if args.baseline:
            path = os.path.join(tmp, "baseline")
            subprocess.run(["git", "worktree", "add", "--detach", path, args.baseline], check=True,
                           capture_output=True)
            try:
                for name, (level, _) in rows.items():
                    if args.full_baseline:
                        timed(os.path.join(path, "src"), npz, level, 10)  # its compiled loops cached first
                        before[name] = timed(os.path.join(path, "src"), npz, level, k)
                        continue
                    k1, k2 = max(1, k // 10), max(2, k // 5)
                    (w1, c1), (w2, c2) = (timed(os.path.join(path, "src"), npz, level, kk) for kk in (k1, k2))
                    slope = lambda a, b: max(b - a, 0.0) / (k2 - k1)  # noqa: E731
                    before[name] = (w1 + slope(w1, w2) * (k - k1), c1 + slope(c1, c2) * (k - k1))
            finally:
                subprocess.run(["git", "worktree", "remove", "--force", path], check=True, capture_output=True)
        print(f"Tie-heavy workload, 30 metrics, k={k}; wall s (CPU s); baseline {args.baseline!r} " +
              ("(at k)" if args.full_baseline else "(~ extrapolated in k)"))
        for name, (level, goal) in rows.items():
            wall, cpu = timed(here, npz, level, k)
            b = before.get(name)
            mark = "" if args.full_baseline else "~"
            base = f"{mark}{b[0]:.1f} ({b[1]:.1f})  {b[0] / wall:.1f}x" if b else "-"
            print(f"{name:<46} {wall:7.2f} ({cpu:6.2f})  before {base}  target <= {goal:g} s "
                  f"{'met' if wall <= goal else 'MISSED'}")


if __name__ == "__main__":
    main()
