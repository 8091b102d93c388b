"""The same workloads on two (or more) commits in one run: wall and CPU time of each row, the ratios, compile time apart.

Run: `PYTHONPATH=src python benchmarks/compare_commits.py BASE [HEAD]` (HEAD defaults to `HEAD`; `.` is this
checkout's `src` as it is, uncommitted changes included). More than two revisions are allowed: the last is
the one compared, each earlier one a base (`compare_commits.py c69dd7c ca7ca60 HEAD`). Options:
`--only TEXT` (rows whose name contains TEXT; repeatable), `--repeats R` (warm runs per row and revision,
default 3), `--quick` (small data and few resamples: a smoke run of every row in a minute or two),
`--no-cold` (no cold run: numba's cache where it is, one untimed warm-up run), `--workdir DIR` (keep the
extracted sources there; with `--no-cold` a second run of the script is warm from its start; `--no-warmup`
then skips the untimed run), `--alone` (time the single
revision given, no ratio), `--list` (print the rows and exit).

How each revision runs: its `src/` is extracted with `git archive REV src` into a temporary directory (`.`
uses this checkout's `src/` in place) and every run of a row is a fresh Python process with `PYTHONPATH`
pointing at those sources; the data are built once, by this checkout's benchmark builders
(`bench_wmt.tie_heavy_scores`, `bench_item_grouped_ties.continuous_scores`, `bench_stats.synthetic`, ...),
and read by every revision. For each row and revision the first run is *cold*: ``NUMBA_CACHE_DIR`` set to a
fresh empty directory of that row and revision, so every compiled loop the row uses is compiled; the later
runs reuse that directory (*warm*: loading only). The runs of the revisions alternate (the order rotates at
each repeat), so a change in the machine's load falls on every revision alike.

Printed per row and revision: the warm runs' wall and CPU seconds (min / median), the compile time (the cold
run minus the median warm run, wall), and per base the ratios HEAD / BASE of the medians and of the minima
(below 1: HEAD faster). A Python row times its call inside the process (imports and data loading excluded,
the first compiled call included: numba's loading of cached loops counts, as a user's first call pays it); a
command row times the whole `metaeval ...` process (wall, and CPU from ``getrusage``). A Python row also
prints a digest of its numbers (statistics, p-values, deltas, intervals: their bytes), equal across
revisions when the results are bitwise equal (`same bits` / `DIFFER`); a row that fails on a revision (an
API it lacks) says so and the run goes on. The load average is printed at the start and the end: the
machine is shared, and the spread of the warm runs (max / min) says how noisy each row was.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

TIMEOUT = 3600

# ---- the data sets (built once by this checkout's benchmark builders) -----------------------------------


def build_data(tmp: str, quick: bool) -> dict[str, str]:
    """Write every data set the rows read into ``tmp``; ``{placeholder: path}``."""
    import numpy as np

    from bench_item_grouped_ties import continuous_scores, sparse_ties_scores
    from bench_large_correlate import write_scores as write_large
    from bench_mt_audit import write_metrics as write_audit_metrics
    from bench_mt_protocols import write_workload
    from bench_wmt import TIE_HEAVY_KINDS, tie_heavy_scores

    import metaeval as me

    m = 200 if quick else 2000
    kinds = TIE_HEAVY_KINDS[::5] if quick else TIE_HEAVY_KINDS  # quick: two metrics of each kind
    paths = {"tie": os.path.join(tmp, "tie_heavy.npz"), "cont": os.path.join(tmp, "continuous.npz"),
             "sparse": os.path.join(tmp, "sparse_ties.npz"),
             "tie_csv": os.path.join(tmp, "tie_heavy.csv"), "large_csv": os.path.join(tmp, "large.csv"),
             "audit_csv": os.path.join(tmp, "audit_metrics.csv"), "wmt24": os.path.join(tmp, "wmt24"),
             "segments": "300" if quick else "3000"}
    tie = tie_heavy_scores(m=m, kinds=kinds)
    np.savez(paths["tie"], **tie)
    np.savez(paths["cont"], **continuous_scores(m=m, p=len(kinds)))
    np.savez(paths["sparse"], **sparse_ties_scores(m=m))
    me.write_scores(me.ScoreSet.from_matrices(tie, humans=["human"], name="tie-heavy"), paths["tie_csv"])
    write_large(paths["large_csv"], 20, 500 if quick else 10_000)
    if not quick:
        write_audit_metrics(paths["audit_csv"])
        os.makedirs(paths["wmt24"])
        paths["wmt24_args"] = json.dumps(write_workload("wmt24", paths["wmt24"]))
    return paths


# ---- the rows -----------------------------------------------------------------------------------------

LOAD = {
    "tie": "data = np.load({tie!r}); z = data['human']; xs = np.stack([data[n] for n in data.files if n != 'human'])",
    "cont": "data = np.load({cont!r}); z = data['human']; xs = np.stack([data[n] for n in data.files if n != 'human'])",
    "sparse": ("data = np.load({sparse!r}); z = data['human']; "
               "xs = np.stack([data[n] for n in data.files if n != 'human'])"),
}
PAIRS = "pairwise_tests(xs, z, level={level!r}, coefficient={coefficient!r}, n_resamples={k}, rng=0)"


@dataclass(frozen=True)
class Row:
    """A workload: ``setup`` then ``statement`` timed in a fresh process (``kind='python'``), or the command
    ``argv`` timed as a whole process (``kind='command'``); ``k`` / ``quick_k`` its resamples."""

    name: str
    kind: str
    k: int
    quick_k: int
    setup: str = ""
    statement: str = ""
    argv: tuple = ()
    full_only: bool = False
    tags: tuple = field(default=())


def _pairs_row(data: str, level: str, coefficient: str, k: int, label: str) -> Row:
    return Row(f"{label} {level} {coefficient} PERM-BOTH all pairs k={k}", "python", k, 50 if k <= 200 else 100,
               setup=LOAD[data] + "\nfrom metaeval.stats.significance.pairs import pairwise_tests",
               statement=PAIRS.replace("{level!r}", repr(level)).replace("{coefficient!r}", repr(coefficient)))


STATS_SETUP = "from bench_stats import synthetic, metaeval_cases\nds = synthetic()[0]\ncases = metaeval_cases(ds, {k})"
ROWS = [
    # the tie-heavy workload of issue 37 (bench_wmt.tie_heavy_scores: 15 x 2000, 30 metrics)
    _pairs_row("tie", "by-system", "kendall-b", 200, "tie-heavy"),
    _pairs_row("tie", "by-system", "kendall-b", 1000, "tie-heavy"),
    _pairs_row("tie", "global", "kendall-b", 200, "tie-heavy"),
    _pairs_row("tie", "global", "kendall-b", 1000, "tie-heavy"),
    _pairs_row("tie", "summary", "kendall-b", 200, "tie-heavy"),
    _pairs_row("tie", "summary", "kendall-b", 1000, "tie-heavy"),
    _pairs_row("tie", "summary", "pearson", 1000, "tie-heavy"),
    # the continuous workload (bench_item_grouped_ties.continuous_scores, = bench_wmt's)
    _pairs_row("cont", "summary", "acc-eq", 1000, "continuous"),
    _pairs_row("cont", "summary", "pearson", 1000, "continuous"),
    _pairs_row("cont", "summary", "kendall-b", 1000, "continuous"),
    # continuous metrics tied in a few inputs, two rounded (both kinds of pairs of the block tables; issue 37)
    _pairs_row("sparse", "summary", "kendall-b", 1000, "sparse-ties"),
    _pairs_row("cont", "by-system", "pearson", 1000, "continuous"),
    _pairs_row("cont", "global", "pearson", 1000, "continuous"),
    _pairs_row("cont", "system", "pearson", 1000, "continuous"),
    Row("continuous global kendall-b BOOT-BOTH interval, one metric k=1000", "python", 1000, 100,
        setup=LOAD["cont"] + "\nfrom metaeval.stats.resampling.bootstrap import bootstrap_interval",
        statement="bootstrap_interval(xs[0], z, level='global', coefficient='kendall-b', n_resamples={k}, rng=0)"),
    # bench_stats.py: the six calls against nlpstats (25 x 100), and SummEval's 12 metrics, all pairs
    Row("bench_stats: six single-pair calls (25 x 100) k=1000", "python", 1000, 100,
        setup=STATS_SETUP, statement="[f() for f in cases.values()]"),
    Row("bench_stats: SummEval 12 metrics, all pairs, 4 matrices k=1000", "python", 1000, 20,
        setup="from bench_stats import all_pairs", statement="all_pairs({k}) and None"),  # returns seconds: no digest
    # bench_judges.py (100,000 comparisons here, 1,000,000 there) and bench_spans.py (3 detectors x 3000 there 10)
    Row("bench_judges: rank_systems, 100k comparisons, 100 systems k=1000", "python", 1000, 20,
        setup="from bench_judges import simulate, metaeval_run\na, b, v = simulate(100_000, 100)",
        statement="metaeval_run(a, b, v, 100, {k}, 'comparisons')[2]"),
    Row("bench_spans: BOOT-BOTH + PERM-BOTH, 10 detectors x 10 x 3000 k=1000", "python", 1000, 20,
        setup=("from bench_spans import spans_data\nfrom metaeval.spans.evaluate import _finish, span_channels\n"
               "from metaeval.spans.resampling import bootstrap_statistics, intervals, permutation_pvalues\n"
               "from metaeval.stats.resampling.draws import bootstrap_draws, permutation_draws\n"
               "gold, dets = spans_data(10, {segments}, 10, np.random.default_rng(0))\nfinish = _finish('micro')\n"
               "def spans_row(k):\n"
               "    ch, present, (sy, sg) = span_channels(gold, dets, measure='partial', severity='ignore',"
               " averaging='micro')\n"
               "    bd = bootstrap_draws(len(sy), len(sg), method='both', n_resamples=k, rng=1)\n"
               "    pd = permutation_draws(len(sy), len(sg), method='both', n_resamples=k, rng=2)\n"
               "    return intervals(bootstrap_statistics(ch, present, bd, finish), 0.95),"
               " permutation_pvalues(ch, present, pd, finish)"),
        statement="spans_row({k})"),
    # whole commands (fresh process, import and reading included)
    Row("metaeval correlate, tie-heavy file (defaults)", "command", 1000, 50,
        argv=("correlate", "--scores", "{tie_csv}", "--human", "human", "--n-resamples", "{k}")),
    Row("metaeval mt, tie-heavy file (defaults)", "command", 1000, 50,
        argv=("mt", "--scores", "{tie_csv}", "--human", "human", "--n-resamples", "{k}")),
    Row("metaeval correlate, 20 x 10,000 rows (bench_large_correlate)", "command", 1000, 50,
        argv=("correlate", "--scores", "{large_csv}", "--human", "human", "--format", "json", "--n-resamples", "{k}")),
    Row("metaeval mt --protocol wmt24 (bench_mt_protocols)", "command", 1000, 50, full_only=True,
        argv=("mt", "{wmt24_args}", "--human", "human", "--protocol", "wmt24", "--n-resamples", "{k}")),
    Row("metaeval mt audit, WMT20 en-de + 10 metrics (bench_mt_audit)", "command", 1000, 50, full_only=True,
        argv=("mt", "audit", "--dataset", "en-de=wmt20-mqm-ende", "--scores", "en-de={audit_csv}", "--human", "mqm",
              "--n-resamples", "{k}")),
]

CHILD = """
import hashlib, json, sys, time, warnings
sys.path.insert(0, {bench!r})
warnings.simplefilter('ignore')
import numpy as np
{setup}
def _digest(result):
    h = hashlib.sha256()
    def add(v, depth=0):
        if depth > 4:
            return
        if isinstance(v, dict):
            for key in sorted(v, key=str):
                add(v[key], depth + 1)
        elif isinstance(v, (list, tuple)):
            for item in v:
                add(item, depth + 1)
        elif isinstance(v, (np.ndarray, float, int, np.floating, np.integer)):
            a = np.asarray(v)
            if a.dtype.kind in 'fiub':
                h.update(np.ascontiguousarray(a).tobytes())
        else:
            for name in ('statistics', 'pvalues', 'deltas', 'statistic', 'pvalue', 'ci', 'scores', 'low', 'high'):
                if hasattr(v, name):
                    add(getattr(v, name), depth + 1)
    add(result)
    return h.hexdigest()[:12]
t, c = time.perf_counter(), time.process_time()
result = {statement}
wall, cpu = time.perf_counter() - t, time.process_time() - c
print(json.dumps({{"wall": wall, "cpu": cpu, "digest": _digest(result)}}))
"""


# ---- running ------------------------------------------------------------------------------------------


def sources(rev: str, tmp: str, workdir: str | None = None) -> str:
    """The ``src`` directory of ``rev``: this checkout's for ``.``, else ``git archive REV src`` extracted (into
    ``workdir/src-REV`` when given and kept there: a later run reuses it and the numba cache beside it)."""
    if rev == ".":
        return os.path.join(ROOT, "src")
    if workdir:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", rev], capture_output=True, text=True,
                                check=True).stdout.strip()
        target = os.path.join(workdir, "src-" + commit)
        if os.path.isdir(os.path.join(target, "src")):
            return os.path.join(target, "src")
        os.makedirs(target, exist_ok=True)
    else:
        target = tempfile.mkdtemp(prefix="rev-", dir=tmp)
    archive = subprocess.run(["git", "-C", ROOT, "archive", rev, "src"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", target], input=archive, check=True)
    return os.path.join(target, "src")


def run_once(row: Row, src: str, paths: dict, k: int, cache: str | None) -> dict:
    """One fresh process of ``row`` on the sources ``src``: ``{'wall', 'cpu', 'digest'}`` or ``{'error'}``."""
    env = dict(os.environ, PYTHONPATH=src, COLUMNS="200")
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = cache
    fill = dict(paths, k=k)
    if row.kind == "python":
        code = CHILD.format(bench=HERE, setup=row.setup.format(**fill), statement=row.statement.format(**fill))
        try:
            out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                 timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            return {"error": f"timeout after {TIMEOUT} s"}
        if out.returncode:
            return {"error": (out.stderr.strip().splitlines() or ["exit %d" % out.returncode])[-1]}
        return json.loads(out.stdout.strip().splitlines()[-1])
    argv = []
    for arg in row.argv:
        argv += json.loads(fill[arg[1:-1]]) if arg == "{wmt24_args}" else [arg.format(**fill)]
    with tempfile.TemporaryDirectory() as work:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        try:
            out = subprocess.run([sys.executable, "-m", "metaeval.cli.main", *argv], env=env, cwd=work,
                                 capture_output=True, text=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            return {"error": f"timeout after {TIMEOUT} s"}
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode not in (0, 1):  # 1: a command's verdict (e.g. a failed check), not a crash
        return {"error": (out.stderr.strip().splitlines() or ["exit %d" % out.returncode])[-1]}
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {"wall": wall, "cpu": cpu, "digest": "-"}


def summary(values: list[float]) -> tuple[float, float]:
    return (min(values), statistics.median(values)) if values else (float("nan"), float("nan"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revs", nargs="+", metavar="REV", help="BASE [HEAD] (more bases allowed; `.`: this checkout)")
    parser.add_argument("--only", action="append", help="rows whose name contains this (repeatable)")
    parser.add_argument("--repeats", type=int, default=3, help="warm runs per row and revision")
    parser.add_argument("--quick", action="store_true", help="small data, few resamples (a smoke run)")
    parser.add_argument("--no-cold", action="store_true", help="no cold run: numba's cache where it is, one warm-up")
    parser.add_argument("--no-warmup", action="store_true", help="with --no-cold: no untimed run (caches warm)")
    parser.add_argument("--workdir", help="keep the revisions' sources here (and, with --no-cold, numba's cache "
                        "beside them): a later run is warm from its start")
    parser.add_argument("--alone", action="store_true", help="time the one revision given, no comparison")
    parser.add_argument("--list", action="store_true", help="print the rows and exit")
    args = parser.parse_args(argv)
    rows = [r for r in ROWS if not (args.quick and r.full_only)
            and (not args.only or any(text in r.name for text in args.only))]
    if args.list:
        print("\n".join(r.name for r in rows))
        return 0
    revs = args.revs if (args.alone or len(args.revs) > 1) else [args.revs[0], "HEAD"]
    if args.alone and len(revs) != 1:
        parser.error("--alone takes one revision")
    if args.repeats < 1:
        parser.error(f"`--repeats` must be >= 1; got {args.repeats!r}")
    with tempfile.TemporaryDirectory(prefix="compare-commits-") as tmp:
        sides = range(len(revs))  # a revision may be given twice (`. .`: the noise of one source)
        src = [sources(rev, tmp, args.workdir) for rev in revs]
        paths = build_data(tmp, args.quick)
        print(f"revisions: {', '.join(revs)} (last compared with each earlier one); "
              f"{'quick' if args.quick else 'full'} workloads, {args.repeats} warm runs each, alternated; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at {time.strftime('%H:%M:%S')}",
              flush=True)
        failed = 0
        for row in rows:
            k = row.quick_k if args.quick else row.k
            caches = [None if args.no_cold else os.path.join(tmp, "numba", str(i), str(ROWS.index(row))) for i in sides]
            # cold: an empty numba cache (or, with --no-cold, an untimed warm-up)
            skip = args.no_cold and args.no_warmup
            cold = [{"digest": "-"} if skip else run_once(row, src[i], paths, k, caches[i]) for i in sides]
            runs: list[list[dict]] = [[] for _ in sides]
            for rep in range(args.repeats):
                for i in [*sides[rep % len(revs):], *sides[:rep % len(revs)]]:
                    if "error" not in cold[i]:
                        runs[i].append(run_once(row, src[i], paths, k, caches[i]))
            print(f"\n{row.name}" + (f"  (k={k})" if args.quick else ""), flush=True)
            stats = {}
            for i in sides:
                good = [r for r in runs[i] if "error" not in r]
                bad = [r for r in runs[i] + [cold[i]] if "error" in r]
                if bad or not good:
                    failed += 1
                    print(f"  {revs[i]:<12} FAILED: {bad[0]['error'] if bad else 'no run'}")
                    continue
                walls, cpus = [r["wall"] for r in good], [r["cpu"] for r in good]
                stats[i] = (summary(walls), summary(cpus))
                compile_s = "-" if args.no_cold else f"{cold[i]['wall'] - stats[i][0][1]:6.2f}"
                digests = {r["digest"] for r in good} | ({cold[i]["digest"]} if not args.no_cold else set())
                print(f"  {revs[i]:<12} wall {stats[i][0][0]:7.2f} / {stats[i][0][1]:7.2f}   CPU {stats[i][1][0]:7.2f}"
                      f" / {stats[i][1][1]:7.2f}   compile {compile_s}   spread {max(walls) / min(walls):4.2f}"
                      f"   digest {'/'.join(sorted(digests))}")
            head = len(revs) - 1
            for base in range(head):
                if base in stats and head in stats:
                    (bw, bc), (hw, hc) = stats[base], stats[head]
                    same = {r["digest"] for r in runs[base]} == {r["digest"] for r in runs[head]}
                    bits = "" if row.kind == "command" else ("   same bits" if same else "   DIFFER")
                    print(f"  {revs[head]} / {revs[base]}: wall {hw[1] / bw[1]:5.2f} (min {hw[0] / bw[0]:5.2f})   "
                          f"CPU {hc[1] / bc[1]:5.2f} (min {hc[0] / bc[0]:5.2f}){bits}", flush=True)
        print(f"\nload average {os.getloadavg()[0]:.1f} at {time.strftime('%H:%M:%S')}; "
              "times: min / median of the warm runs, s; ratios below 1: the last revision is faster")
        shutil.rmtree(os.path.join(tmp, "numba"), ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    import signal

    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))  # the temporary files removed
    raise SystemExit(main())
