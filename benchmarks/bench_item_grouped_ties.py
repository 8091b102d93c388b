"""Item-grouped (summary-level) PERM-BOTH matrices of all 435 metric pairs where metrics tie within inputs.

Run: `PYTHONPATH=src python benchmarks/bench_item_grouped_ties.py --baseline main` (options: --resamples K,
--kendall-resamples K2, --only SUBSTRING). Two rows, each in a fresh process (import and data set-up excluded,
after a warm-up call with 2 resamples that loads, or on a first run compiles, every compiled loop the row
uses), on this checkout and, in the same run, on the baseline's sources checked out into a temporary git
worktree (at the same k; the ratio is baseline / this):

* acc-eq: the continuous workload of `bench_wmt.py` (15 systems x 2000 segments, 30 continuous metrics, the
  human rounded to quarters). A pair whose two metrics hold values within the tie tolerance of each other
  in one input (a near tie by chance among its cross values) counts that input per resample and keeps the
  shared products for the others; before, such a pair took the reference path, whose batch of 2 resamples
  became the batch of all 435 pairs.
* Kendall tau-b: the tie-heavy workload of `bench_wmt.tie_heavy_scores` (10 continuous metrics, 10 rounded to
  0.5, 5 judges in steps of 5, 5 with 40% zeros): most pairs tie within most inputs.
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

ROWS = {"item-grouped acc-eq PERM-BOTH, all 435 pairs (continuous metrics)": ("continuous", "acc-eq", 2.0),
        "item-grouped Kendall PERM-BOTH, all 435 pairs (tie-heavy metrics)": ("tie-heavy", "kendall-b", 3.0)}
CODE = """
import time, warnings, numpy as np
warnings.simplefilter('ignore')
data = np.load({npz!r})
z = data['human']
xs = np.stack([data[name] for name in data.files if name != 'human'])
from metaeval.stats.significance.pairs import pairwise_tests
pairwise_tests(xs, z, level='summary', coefficient={coefficient!r}, n_resamples=2, rng=0)  # loads every loop
t, c = time.perf_counter(), time.process_time()
pairwise_tests(xs, z, level='summary', coefficient={coefficient!r}, n_resamples={k}, rng=0)
print(time.perf_counter() - t, time.process_time() - c)
"""


def continuous_scores(n: int = 15, m: int = 2000, p: int = 30) -> dict[str, np.ndarray]:
    """`bench_wmt.py`'s continuous workload: {'human': quarters of the quality, 'm00'..: quality + noise}."""
    rng = np.random.default_rng(0)
    q = rng.normal(size=(n, 1)) + rng.normal(size=(n, m))
    out = {"human": np.round(q * 4) / 4}
    out.update({f"m{i:02d}": q + rng.normal(scale=0.5 + 0.1 * i, size=(n, m)) for i in range(p)})
    return out


def sparse_ties_scores(n: int = 15, m: int = 2000, p: int = 10, share: float = 0.05) -> dict[str, np.ndarray]:
    """Continuous metrics each with two systems tied in about ``share`` of the inputs, and two rounded to 0.5:
    {'human': quarters of the quality, 'c00'..: continuous, 'r00', 'r01': rounded}. Item-grouped Kendall tau-b
    takes both kinds of pairs of the block tables (``kendall-blocks``): the continuous pairs, tied in a few inputs,
    one at a time beside their integer products; the pairs with a rounded metric, tied almost everywhere, in lanes."""
    rng = np.random.default_rng(0)
    q = rng.normal(size=(n, 1)) + rng.normal(size=(n, m))
    out = {"human": np.round(q * 4) / 4}
    for i in range(p):
        x = q + rng.normal(scale=0.5 + 0.1 * i, size=(n, m))
        cols = rng.random(m) < share
        x[1, cols] = x[0, cols]
        out[f"c{i:02d}"] = x
    for i in range(2):
        out[f"r{i:02d}"] = np.round(2 * (q + rng.normal(scale=0.7, size=(n, m)))) / 2
    return out


def timed(src: str, npz: str, coefficient: str, k: int) -> tuple[float, float]:
    """Wall and CPU seconds of one row in a fresh process on the sources ``src``."""
    out = subprocess.run([sys.executable, "-c", CODE.format(npz=npz, coefficient=coefficient, k=k)],
                         env=dict(os.environ, PYTHONPATH=src), capture_output=True, text=True, check=True)
    wall, cpu = out.stdout.split()[-2:]
    return float(wall), float(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--kendall-resamples", type=int, default=None, help="k of the Kendall row (default: K)")
    parser.add_argument("--baseline", help="git ref timed in the same run, at the same k")
    parser.add_argument("--only", help="run the rows whose name contains this")
    args = parser.parse_args()
    here = os.path.abspath(os.path.join(HERE, os.pardir, "src"))
    with tempfile.TemporaryDirectory() as tmp:
        files = {"continuous": continuous_scores(), "tie-heavy": tie_heavy_scores()}
        npz = {}
        for name, scores in files.items():
            npz[name] = os.path.join(tmp, f"{name}.npz")
            np.savez(npz[name], **scores)
        base = None
        if args.baseline:
            base = os.path.join(tmp, "baseline")
            subprocess.run(["git", "worktree", "add", "--detach", base, args.baseline], check=True,
                           capture_output=True)
        try:
            print(f"N=15 systems x M=2000 segments, 30 metrics; wall s (CPU s); baseline {args.baseline!r} at the same k")
            for row, (data, coefficient, goal) in ROWS.items():
                if args.only and args.only not in row:
                    continue
                k = args.kendall_resamples if coefficient == "kendall-b" and args.kendall_resamples else args.resamples
                before = timed(os.path.join(base, "src"), npz[data], coefficient, k) if base else None
                wall, cpu = timed(here, npz[data], coefficient, k)
                text = f"{row:<68} k={k:<5} {wall:7.2f} ({cpu:6.2f})"
                if before:
                    text += (f"  before {before[0]:7.2f} ({before[1]:6.2f})  {before[0] / wall:4.1f}x"
                             f" ({before[1] / cpu:4.1f}x CPU)")
                if k == 1000:
                    text += f"  target <= {goal:g} s {'met' if wall <= goal else 'MISSED'}"
                print(text, flush=True)
        finally:
            if base:
                subprocess.run(["git", "worktree", "remove", "--force", base], check=True, capture_output=True)


if __name__ == "__main__":
    main()
