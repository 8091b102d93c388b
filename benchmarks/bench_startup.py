"""Start-up time: `import metaeval` and `metaeval --help`, against an earlier commit in the same run.

Run: `.venv/bin/python benchmarks/bench_startup.py [--baseline REV] [--repeats N]`. Each command runs in
a fresh interpreter (`python -c ...`) N times; the median wall time is printed for this checkout and, if
`--baseline` names a git revision (default: 2ad6186, the last commit before the architecture
consolidation of issue 9), for that revision checked out into a temporary git worktree and imported from
its `src/` with PYTHONPATH. `python -c pass` and `import numpy` are printed for scale.
Target: `import metaeval` and `metaeval --help` each <= 0.3 s.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 0.3
COMMANDS = {
    "python -c pass": "pass",
    "import numpy": "import numpy",
    "import metaeval": "import metaeval",
    "metaeval --help": (
        "import sys; sys.argv = ['metaeval', '--help']\n"
        "from metaeval.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass"
    ),
}


def median_seconds(code: str, src: Path, repeats: int) -> float:
    env = dict(os.environ, PYTHONPATH=str(src))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], env=env, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def timings(src: Path, repeats: int) -> dict[str, float]:
    return {name: median_seconds(code, src, repeats) for name, code in COMMANDS.items()}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", default="2ad6186", help="git revision to compare with ('' for none)")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    ours = timings(ROOT / "src", args.repeats)
    theirs = None
    if args.baseline:
        with tempfile.TemporaryDirectory() as tmp:
            tree = Path(tmp) / "baseline"
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), args.baseline],
                           check=True)
            try:
                theirs = timings(tree / "src", args.repeats)
            finally:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=True)
    print(f"median of {args.repeats} fresh interpreters, seconds")
    header = f"{'command':<18}{'this checkout':>15}"
    if theirs:
        header += f"{'baseline ' + args.baseline:>20}{'ratio':>8}"
    print(header + "  target")
    failed = False
    for name, seconds in ours.items():
        line = f"{name:<18}{seconds:>15.3f}"
        if theirs:
            line += f"{theirs[name]:>20.3f}{theirs[name] / seconds:>7.1f}x"
        if name.startswith(("import metaeval", "metaeval")):
            ok = seconds <= TARGET_S
            failed |= not ok
            line += f"  <= {TARGET_S} s {'ok' if ok else 'MISSED'}"
        print(line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
