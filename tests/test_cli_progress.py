"""Progress bars: a count and an ETA on a terminal, nothing in a pipe or with --no-progress."""
from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")
LONG_CORRELATE = ["correlate", "--dataset", "summeval", "--metric", "rouge-1.f1", "--metric", "rouge-2.f1",
                  "--metric", "bertscore.f1", "--n-resamples", "6000"]


def _environment() -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=SRC, TERM="xterm-256color", COLUMNS="100", LINES="40")
    env.pop("NO_COLOR", None)
    return env


def _run_in_pty(args: list[str], timeout: float = 60.0) -> tuple[int, str]:
    """Run the CLI with stdin, stdout and stderr on a pseudo-terminal; return (exit code, all output)."""
    pty = pytest.importorskip("pty")
    main, child = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "metaeval.cli.main", *args], stdin=child, stdout=child,
                               stderr=child, env=_environment(), close_fds=True)
    os.close(child)
    chunks, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 0.2)
        if ready:
            try:
                data = os.read(main, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif process.poll() is not None:
            break
    os.close(main)
    code = process.wait(timeout=10)
    return code, b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_long_correlate_shows_count_and_eta_on_a_terminal():
    code, out = _run_in_pty(LONG_CORRELATE)
    assert code == 0, out
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out)
    counts = set(re.findall(r"\b(\d+)/18\b", plain))
    assert len(counts) >= 2, plain[-2000:]  # the count moves: 3 metrics x 2 levels x 3 coefficients
    assert re.search(r"elapsed 0:00:\d\d", plain) and re.search(r"ETA (\d:\d\d:\d\d|-:--:--)", plain)
    assert "correlations" in plain
    assert "summary-level correlation with expert.relevance" in plain  # the result follows the bar


def test_no_progress_in_a_pipe_or_with_no_progress():
    args = LONG_CORRELATE[:-1] + ["50"]
    for extra in ([], ["--no-progress"]):
        done = subprocess.run([sys.executable, "-m", "metaeval.cli.main", *args, *extra], capture_output=True,
                              text=True, env=_environment(), timeout=120)
        assert done.returncode == 0, done.stderr
        assert "/18" not in done.stderr and "ETA" not in done.stderr


@pytest.mark.parametrize("test", ["permutation", "bootstrap"])
@pytest.mark.parametrize("missing", [False, True])
def test_compare_and_delta_count_every_resample(test, missing):
    import numpy as np

    import metaeval as me

    ds = me.load_dataset("summeval").subset(scorers=["rouge-1.recall", "rouge-2.recall", "bertscore.recall",
                                                     "expert.relevance"])
    if missing:  # each pair on its own common cells: the per-pair path
        scores = {s: ds.matrix(s).copy() for s in ds.scorers}
        scores["rouge-1.recall"][0, :3] = np.nan
        ds = me.ScoreSet(scores, systems=ds.systems, inputs=ds.inputs, humans=["expert.relevance"])
    calls = []
    me.compare_metrics(ds, ["rouge-1.recall", "rouge-2.recall", "bertscore.recall"], "expert.relevance",
                       test=test, n_resamples=120, rng=0, progress=lambda: calls.append(1))
    assert len(calls) == 120
    calls.clear()
    me.delta_correlations(ds, ["rouge-2.recall"], "expert.relevance", n_resamples=50, rng=0,
                          progress=lambda: calls.append(1))
    assert len(calls) == 50
