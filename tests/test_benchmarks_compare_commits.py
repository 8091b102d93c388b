"""benchmarks/compare_commits.py stays runnable: its quick mode on this checkout's sources, two sides."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "compare_commits.py"


def test_quick_mode_times_both_sides_and_prints_ratios_and_digests():
    rows = ["tie-heavy by-system kendall-b PERM-BOTH all pairs k=200"]
    argv = [sys.executable, str(SCRIPT), ".", ".", "--quick", "--no-cold", "--repeats", "1"]
    for row in rows:
        argv += ["--only", row]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, PYTHONPATH=str(REPO / "src")))
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    for row in rows:
        assert row in out
    timed = re.findall(r"^  \. +wall +[\d.]+ / +[\d.]+ +CPU +[\d.]+ / +[\d.]+ +compile - +spread [\d.]+ +digest (\S+)$",
                       out, flags=re.M)
    assert len(timed) == 2 and timed[0] == timed[1]  # the same sources: the same bits
    ratios = re.findall(r"^  \. / \.: wall +[\d.]+ \(min +[\d.]+\) +CPU +[\d.]+ \(min +[\d.]+\)(.*)$", out, flags=re.M)
    assert [r.strip() for r in ratios] == ["same bits"]


def test_list_names_every_row():
    done = subprocess.run([sys.executable, str(SCRIPT), ".", "--list"], capture_output=True, text=True, check=True)
    names = done.stdout.splitlines()
    assert "tie-heavy global kendall-b PERM-BOTH all pairs k=1000" in names
    assert "metaeval mt audit, WMT20 en-de + 10 metrics (bench_mt_audit)" in names
