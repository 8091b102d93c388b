"""`--aggregation` is refused, not silently ignored, by every command that reads a gold with one score per cell
(an MQM ratings file's `mqm` is already the mean of its raters), as `metaeval mt` refuses it (issue 41 item 2)."""
from __future__ import annotations

import numpy as np
import pytest

import metaeval as me
from metaeval.cli.main import main

MESSAGE = ("metaeval: error: `--aggregation` must be 'mean' when the gold has one score per cell ('mqm', the mean of"
           " its raters as an MQM ratings file gives it; nothing to aggregate); got 'median'.")


@pytest.fixture
def ratings(shared_data, tmp_path):
    path = shared_data / "wmt" / "mqm_ratings" / "sxs_mqm_generalMT2023_ende.3ratings.tsv.gz"
    ds = me.read_mqm_ratings(path).scores
    rng = np.random.default_rng(0)
    mats = {name: ds.matrix("mqm") + scale * rng.normal(size=ds.shape) for name, scale in (("metric-A", 1), ("metric-B", 3))}
    me.write_scores(me.ScoreSet(mats, systems=ds.systems, inputs=ds.inputs), tmp_path / "m.csv")
    return path, tmp_path / "m.csv"


@pytest.mark.parametrize("command", [
    ["correlate", "--level", "system", "--coefficient", "pearson", "--metric", "metric-A"],
    ["compare", "--level", "system", "--n-resamples", "20", "--metric", "metric-A", "--metric", "metric-B"],
])
def test_other_commands_refuse_it(ratings, capsys, command):
    path, metric = ratings
    argv = [*command, "--scores", str(path), "--scores", str(metric), "--human", "mqm"]
    assert main([*argv, "--aggregation", "median"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == MESSAGE
    assert main(argv) == 0  # the default is accepted


def test_mt_still_refuses_it(ratings, capsys):
    path, metric = ratings
    assert main(["mt", "--scores", f"en-de={path}", "--scores", f"en-de={metric}", "--human", "mqm",
                 "--aggregation", "median", "--task", "system/pearson", "--n-resamples", "10"]) == 2
    assert capsys.readouterr().err.strip() == MESSAGE
