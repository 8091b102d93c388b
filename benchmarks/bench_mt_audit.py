"""`metaeval mt audit` on the packaged WMT20 en-de MQM data with 10 metrics, whole command in a fresh process,
against `metaeval mt` on the same data and tasks (the tests without sentinels and subsamples) in the same run.

Run: `PYTHONPATH=src python benchmarks/bench_mt_audit.py [--n-resamples 1000] [--consistency 100]`.

Workload: `--dataset en-de=wmt20-mqm-ende` (10 systems x 1418 segments, the human `mqm`) joined with a score
file of 10 synthetic metrics (MQM plus seeded normal noise of standard deviation 0.5, 1.0, ..., 5.0); the
audit's default grid of tasks (`defaults.MT_AUDIT_TASKS`: 14 tasks, 3 sentinels), k permutations and the
ranking-consistency subsamples. Target <= 30 s. Printed: wall and CPU seconds of each command, the ratio
audit / mt, and the load average (the machine is shared).
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

TARGET = 30.0


def write_metrics(path: str) -> None:
    import metaeval as me

    ds = me.load_dataset("wmt20-mqm-ende")
    mqm = ds.matrix("mqm")
    rng = np.random.default_rng(0)
    mats = {f"metric-{i}": mqm + rng.normal(scale=0.5 * (i + 1), size=mqm.shape) for i in range(10)}
    me.write_scores(me.ScoreSet.from_matrices(mats, systems=list(ds.systems), inputs=list(ds.inputs)), path)


def run(args: list[str]) -> tuple[float, float, int, str]:
    """(wall s, CPU s, exit code, output) of `metaeval ARGS` in a fresh process."""
    env = dict(os.environ, COLUMNS="200")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "metaeval.cli.main", *args], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.returncode, proc.stdout + proc.stderr


def main() -> int:
    from metaeval import defaults

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-resamples", type=int, default=defaults.N_RESAMPLES)
    parser.add_argument("--consistency", type=int, default=defaults.MT_CONSISTENCY_RESAMPLES)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "metrics.csv")
        write_metrics(path)
        data = ["--dataset", "en-de=wmt20-mqm-ende", "--scores", f"en-de={path}", "--human", "mqm",
                "--n-resamples", str(opts.n_resamples)]
        tasks = [a for t in defaults.MT_AUDIT_TASKS for a in ("--task", t)]
        print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        mt_wall, mt_cpu, code, out = run(["mt", *data, *tasks, "--protocol", "mean"])
        if code:
            print(out)
            return 1
        wall, cpu, code, out = run(["mt", "audit", *data, "--consistency", str(opts.consistency)])
        if code:
            print(out)
            return 1
        print(f"metaeval mt (same tasks, 10 metrics):    {mt_wall:7.1f} s wall, {mt_cpu:7.1f} s CPU")
        print(f"metaeval mt audit (+3 sentinels, {opts.consistency} subsamples): {wall:7.1f} s wall, {cpu:7.1f} s CPU")
        print(f"ratio audit / mt: {wall / mt_wall:.2f} (wall), {cpu / mt_cpu:.2f} (CPU); k = {opts.n_resamples}")
        print(f"target <= {TARGET:.0f} s: {'met' if wall <= TARGET else 'NOT met'} (wall); "
              f"{'met' if cpu <= TARGET else 'NOT met'} (CPU)")
        print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
