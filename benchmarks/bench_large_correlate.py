"""Large-file speed of the whole CLI: `metaeval correlate` (defaults) and `metaeval report --quick`.

Run: `PYTHONPATH=src python benchmarks/bench_large_correlate.py` (options: --inputs 10000 30000 100000,
--systems 20, --commands correlate,correlate-ci-none,report-quick, --keep DIR, --baseline SRC
--baseline-inputs 10000 30000).

With ``--baseline SRC`` (the ``src`` directory of another checkout, e.g. a worktree of the commit before the
change) the same commands run on it too, in the same run, for the sizes of ``--baseline-inputs``, and the
ratios are printed.

Workload: N systems x M inputs x 2 metrics, one wide CSV row per (system, input): a latent quality per
system and input; the human is a mean of three 1-5 Likert ratings (steps of 1/3, tie-heavy, like
SummEval); metric `m_cont` = quality + noise (continuous, 6 significant digits as metric files print them);
metric `m_grid` = quality + noise on a coarse grid (steps of 0.05, so a third of its cells tie with
another system's on the same input, like an LLM judge or a rounded score). Seeded (`--seed`, default 0).

Each command runs in a fresh process (`python -m metaeval.cli.main ...`, import and file reading included);
the script prints its wall time, its CPU time (user + system: on a machine shared with other jobs the wall
time mostly measures the load) and the child's peak resident memory (``ru_maxrss`` of the waited child,
from ``resource.getrusage(RUSAGE_CHILDREN)``, read before and after in a fresh helper process so that one
command's peak is not hidden by an earlier, larger one).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")

COMMANDS = {
    "correlate": ["correlate", "--human", "human", "--format", "json"],
    "correlate-ci-none": ["correlate", "--human", "human", "--ci", "none", "--format", "json"],
    "report-quick": ["report", "--human", "human", "--quick"],
}


def write_scores(path: str, n_systems: int, n_inputs: int, seed: int = 0) -> int:
    """Write the workload (see the module docstring) to ``path``; return its number of rows."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(n_systems, 1)) + 0.7 * rng.normal(size=(n_systems, n_inputs))
    ratings = np.clip(np.round(3 + quality[..., None] + rng.normal(scale=0.8, size=(n_systems, n_inputs, 3))), 1, 5)
    human = ratings.mean(axis=2)
    m_cont = quality + rng.normal(scale=0.8, size=quality.shape)
    m_grid = np.round((quality + rng.normal(scale=0.6, size=quality.shape)) * 20) / 20
    systems = np.repeat([f"sys{i:02d}" for i in range(n_systems)], n_inputs)
    inputs = np.tile([f"doc{j:06d}" for j in range(n_inputs)], n_systems)
    with open(path, "w", encoding="utf-8") as out:
        out.write("system,input,human,m_cont,m_grid\n")
        block = 200_000
        flat = [a.reshape(-1) for a in (human, m_cont, m_grid)]
        for start in range(0, systems.size, block):
            stop = start + block
            lines = [f"{s},{d},{h:.6g},{c:.6g},{g:.6g}\n" for s, d, h, c, g in
                     zip(systems[start:stop], inputs[start:stop], *(f[start:stop] for f in flat))]
            out.writelines(lines)
    return int(systems.size)


CHILD = """
import json, resource, subprocess, sys, time
cmd = json.loads(sys.argv[1])
start = time.perf_counter()
proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": proc.returncode, "wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
                  "peak_kib": usage.ru_maxrss, "stderr": proc.stderr[-2000:]}))  # ru_maxrss: KiB on Linux
"""


def run_command(args: list[str], cwd: str, src: str = SRC) -> dict:
    """Run ``metaeval <args>`` in a fresh process; its wall time and peak RSS (measured by a fresh helper)."""
    import json

    env = dict(os.environ, PYTHONPATH=src)
    cmd = [sys.executable, "-m", "metaeval.cli.main", *args]
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(cmd)], cwd=cwd, env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def _numbers(value, path=""):
    """Every number of a JSON value, keyed by its path (the signature strings left out)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _numbers(v, f"{path}/{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _numbers(v, f"{path}/{i}")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield path, float(value)


def max_difference(a: str, b: str) -> float:
    """The largest absolute difference between the numbers of two JSON outputs (inf if they differ in shape)."""
    import json

    with open(a, encoding="utf-8") as fa, open(b, encoding="utf-8") as fb:
        left, right = dict(_numbers(json.load(fa))), dict(_numbers(json.load(fb)))
    timing = [k for k in left if "timing" in k or "seconds" in k]
    for k in timing:
        left.pop(k, None), right.pop(k, None)
    if left.keys() != right.keys():
        return float("inf")
    return max((abs(left[k] - right[k]) for k in left), default=0.0)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, nargs="+", default=[10_000, 30_000, 100_000])
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--commands", default="correlate,correlate-ci-none,report-quick")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", help="write the score files into this directory and keep them")
    parser.add_argument("--baseline", help="the src directory of a baseline checkout, timed in the same run")
    parser.add_argument("--baseline-inputs", type=int, nargs="+", default=[10_000, 30_000])
    args = parser.parse_args(argv)
    commands = [c for c in args.commands.split(",") if c]
    for c in commands:
        if c not in COMMANDS:
            parser.error(f"--commands must name {', '.join(COMMANDS)}; got {c!r}")
    workdir = args.keep or tempfile.mkdtemp(prefix="bench-large-")
    os.makedirs(workdir, exist_ok=True)
    print(f"N={args.systems} systems, 2 metrics + human, machine load {os.getloadavg()[0]:.1f}", flush=True)
    print(f"{'inputs':>8} {'rows':>10} {'command':<18} {'wall s':>8} {'cpu s':>7} {'peak MiB':>9}"
          + (f" {'base s':>8} {'cpu s':>7} {'base MiB':>9} {'cpu ratio':>9}" if args.baseline else ""), flush=True)
    failed = False
    for m in args.inputs:
        path = os.path.join(workdir, f"large-{args.systems}x{m}.csv")
        if not os.path.exists(path):
            write_scores(path, args.systems, m, seed=args.seed)
        rows = args.systems * m
        for name in commands:
            line = f"{m:>8} {rows:>10} {name:<18}"
            runs = [("", SRC)] + ([("base-", args.baseline)] if args.baseline and m in args.baseline_inputs else [])
            results = []
            for tag, src in runs:
                out = os.path.join(workdir, f"{tag}{name}-{m}" + ("" if name == "report-quick" else ".json"))
                if os.path.isdir(out):
                    shutil.rmtree(out)
                elif os.path.exists(out):
                    os.remove(out)
                res = run_command([*COMMANDS[name], "--scores", path, "--output", out], cwd=workdir, src=src)
                res["output"] = out if name != "report-quick" else os.path.join(out, "results.json")
                failed |= res["rc"] != 0
                results.append(res)
                line += f" {res['wall']:>8.1f} {res['cpu']:>7.1f} {res['peak_kib'] / 1024:>9.0f}"
                if res["rc"] != 0:
                    line += f"  exit {res['rc']}: {res['stderr'].strip().splitlines()[-1:]}"
            if len(results) == 2:
                line += f" {results[1]['cpu'] / results[0]['cpu']:>8.1f}x"
                if all(r["rc"] == 0 for r in results):
                    line += f"  max |difference| {max_difference(*(r['output'] for r in results)):.1e}"
            print(line, flush=True)
    print(f"machine load at the end {os.getloadavg()[0]:.1f}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
