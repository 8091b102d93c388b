"""A system without any human score (or without any score of a metric) is left out, with one warning naming
it, by every function and command (issue 21 item 1: one such model turned every system-level result into n/a)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metaeval as me
from metaeval.cli.main import main
from metaeval.errors import DataWarning

WARNING = "left out 1 system(s) without any score: 'M99-mine' (no score of 'expert.relevance')."


@pytest.fixture(scope="module")
def with_mine():
    """SummEval's 16 judged systems plus one scored by the metrics only."""
    se = me.load_dataset("summeval")
    names = ["expert.relevance", "rouge-2.recall", "bertscore.f1"]
    mats = {n: se.matrix(n) for n in names}
    extra = {n: (np.full((1, len(se.inputs)), np.nan) if n == "expert.relevance" else mats[n][:1] * 1.01)
             for n in names}
    full = {n: np.vstack([mats[n], extra[n]]) for n in names}
    judged = me.ScoreSet.from_matrices(mats, systems=se.systems, inputs=se.inputs, humans=["expert.relevance"])
    mine = me.ScoreSet.from_matrices(full, systems=[*se.systems, "M99-mine"], inputs=se.inputs,
                                     humans=["expert.relevance"])
    return judged, mine


def test_correlate_leaves_the_unjudged_system_out(with_mine):
    judged, mine = with_mine
    with pytest.warns(DataWarning) as record:
        got = me.correlate(mine, "rouge-2.recall", "expert.relevance", level="system", coefficient="kendall-b")
    assert [str(w.message) for w in record if issubclass(w.category, DataWarning)] == [WARNING]
    want = me.correlate(judged, "rouge-2.recall", "expert.relevance", level="system", coefficient="kendall-b")
    assert got.statistic == want.statistic and got.n_used == 16
    assert "without unscored systems M99-mine" in str(got.signature)


def test_compare_table_and_analyses_use_the_same_rule(with_mine):
    judged, mine = with_mine
    metrics = ["rouge-2.recall", "bertscore.f1"]
    with pytest.warns(DataWarning, match="M99-mine"):
        got = me.compare_metrics(mine, metrics, "expert.relevance", level="system", n_resamples=200, rng=0)
    want = me.compare_metrics(judged, metrics, "expert.relevance", level="system", n_resamples=200, rng=0)
    np.testing.assert_array_equal(got.pvalues, want.pvalues)
    with pytest.warns(DataWarning, match="M99-mine"):
        table = me.correlation_table(mine, "expert.relevance", metrics, levels=["system"], ci="none")
    assert np.isfinite(table.to_frame()["statistic"]).all()
    with pytest.warns(DataWarning, match="M99-mine"):
        delta = me.delta_correlations(mine, metrics, "expert.relevance", n_resamples=20, rng=0)
    assert "|systems:16|" in str(delta.signature)


def test_a_system_without_a_metric_score_is_left_out_too(with_mine):
    judged, _ = with_mine
    rouge = judged.matrix("rouge-2.recall").copy()
    rouge[3] = np.nan
    ds = me.ScoreSet.from_matrices({"expert.relevance": judged.matrix("expert.relevance"), "rouge-2.recall": rouge},
                                   systems=judged.systems, inputs=judged.inputs, humans=["expert.relevance"])
    with pytest.warns(DataWarning, match=r"'M5' \(no score of 'rouge-2\.recall'\)"):
        got = me.correlate(ds, "rouge-2.recall", "expert.relevance", level="system")
    assert got.n_used == 15


def test_cli_join_of_ratings_and_a_metric_file_with_an_own_model(tmp_path, capsys, with_mine):
    judged, mine = with_mine
    me.write_scores(judged.subset(scorers=["expert.relevance"]), tmp_path / "ratings.csv")
    me.write_scores(mine.subset(scorers=["rouge-2.recall", "bertscore.f1"]), tmp_path / "metrics.csv")
    for command in (["correlate", "--level", "system", "--ci", "none"], ["compare", "--n-resamples", "100"]):
        code = main([*command, "--scores", str(tmp_path / "ratings.csv"), "--scores", str(tmp_path / "metrics.csv"),
                     "--human", "expert.relevance"])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert f"metaeval: warning: {WARNING}" in err.splitlines()
        assert "n/a" not in out
