"""The human-baseline verdict table of `metaeval mt` fits 100 columns (issue 41 item 4): its lists of metrics wrap
at their words instead of splitting the table into column blocks."""
import io

import numpy as np

import metaeval as me
from metaeval.cli.mt_command import _verdict_table
from metaeval.report.escape import console


def _many_metrics(seed=0, n=8, m=40, p=9, prefix="a-metric-with-a-long-name-"):
    r = np.random.default_rng(seed)
    q = r.normal(size=(n, 1)) + r.normal(size=(n, m))
    mats = {"human": q, "second-rater": q + 0.5 * r.normal(size=(n, m))}
    mats.update({f"{prefix}{i:02d}": q + (0.2 + i / 3) * r.normal(size=(n, m)) for i in range(p)})
    return me.ScoreSet.from_matrices(mats, humans=["human", "second-rater"], name="lp")


def test_verdict_table_wraps_at_100_columns_instead_of_splitting():
    ds = _many_metrics()
    res = me.mt_evaluate({"en-de": ds}, human="human", human_baselines=["second-rater"],
                         tasks=["system/pearson", "global/pearson"], n_resamples=50, rng=1)
    out = io.StringIO()
    console(file=out, width=100).print(_verdict_table(res))
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 100
    header = [line for line in text.splitlines() if "scope" in line]
    assert len(header) == 1 and "verdict" in header[0] and "metrics" in header[0]  # one block, a row per verdict
    # every metric is named once per (scope, task): the verdicts of the table equal the result's
    cells = [line.split("│") for line in text.splitlines() if line.startswith("│")]
    named = " ".join(c[-2].strip() for c in cells)
    summary = res.baseline_verdicts(summary=True)
    for name in res.metrics[:-1]:
        assert named.count(name) == len(summary), name


def test_verdict_table_that_fits_keeps_one_row_per_task():
    ds = _many_metrics(p=2, prefix="m")
    res = me.mt_evaluate({"en-de": ds}, human="human", human_baselines=["second-rater"],
                         tasks=["system/pearson"], n_resamples=50, rng=1)
    out = io.StringIO()
    console(file=out, width=100).print(_verdict_table(res))
    header = [line for line in out.getvalue().splitlines() if "scope" in line]
    assert len(header) == 1 and "above" in header[0] and "verdict" not in header[0]
