"""`--aggregation` is refused, not silently ignored, by every command that reads a gold with one score per cell
(an MQM ratings file's `mqm` is already the mean of its raters), as `metaeval mt` refuses it (issue 41 item 2)."""
from __future__ import annotations

import warnings

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


# -- the Python API refuses it too (issue 41 item 2): the same message, naming `aggregation` ------------------------

PYTHON_MESSAGE = MESSAGE.removeprefix("metaeval: error: ").replace("`--aggregation`", "`aggregation`")


def _median(ratings_path):
    ds = me.read_mqm_ratings(ratings_path).scores
    rng = np.random.default_rng(0)
    mats = {s: ds.matrix(s) for s in ds.scorers}
    mats.update({"metric-A": ds.matrix("mqm") + rng.normal(size=ds.shape),
                 "metric-B": ds.matrix("mqm") + 3 * rng.normal(size=ds.shape)})
    return me.ScoreSet(mats, systems=ds.systems, inputs=ds.inputs, humans=ds.humans, description=ds.description,
                       aggregation="median")


CALLS = {
    "correlate": lambda ds: me.correlate(ds, "metric-A", "mqm", level="system"),
    "bootstrap_ci": lambda ds: me.bootstrap_ci(ds, "metric-A", "mqm", level="system", n_resamples=10, rng=0),
    "fisher_ci": lambda ds: me.fisher_ci(ds, "metric-A", "mqm", level="system"),
    "permutation_test": lambda ds: me.permutation_test(ds, "metric-A", "metric-B", "mqm", level="system",
                                                        n_resamples=10, rng=0),
    "compare_metrics": lambda ds: me.compare_metrics(ds, ["metric-A", "metric-B"], "mqm", level="system",
                                                      n_resamples=10, rng=0),
    "correlation_table": lambda ds: me.correlation_table(ds, "mqm", ["metric-A"], levels=["system"],
                                                          coefficients=["pearson"]),
}


@pytest.mark.parametrize("call", list(CALLS))
def test_the_python_api_refuses_it(ratings, call):
    median = _median(ratings[0])
    with pytest.raises(me.ParameterError) as err:
        CALLS[call](median)
    assert str(err.value) == PYTHON_MESSAGE
    with warnings.catch_warnings():  # 10 resamples of 9 systems: a degenerate-bootstrap warning is not the point
        warnings.simplefilter("ignore", me.DegenerateWarning)
        warnings.simplefilter("ignore", me.SignificanceWarning)
        CALLS[call](median.with_aggregation("mean"))  # the default is accepted


@pytest.mark.parametrize("call", ["mt_evaluate", "mt_audit"])
def test_mt_evaluate_and_mt_audit_refuse_it_naming_the_language_pair(ratings, call):
    median = _median(ratings[0])
    with pytest.raises(me.ParameterError) as err:
        getattr(me, call)({"en-de": median}, ["metric-A", "metric-B"], "mqm", n_resamples=10, rng=0)
    assert str(err.value) == PYTHON_MESSAGE.replace("cell ('mqm'", "cell (language pair 'en-de': 'mqm'")


def test_several_raters_per_cell_still_take_it():
    ds = me.load_dataset("summeval").with_aggregation("median")  # expert.* hold 3 annotators per cell
    assert ds.n_annotators("expert.relevance") == 3
    assert np.isfinite(me.correlate(ds, "rouge-2.recall", "expert.relevance", level="system").statistic)
