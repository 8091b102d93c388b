"""Corpus-level system scores in correlate / bootstrap_ci / fisher_ci / correlation_table / compare_metrics and
`metaeval correlate|compare --corpus-metric` (issue 12, item 2), on the SummEval texts of ../shared/data.

Oracle: sacrebleu.corpus_bleu of each system's 100 summaries against the 11 references, correlated with
the experts' mean relevance by scipy.
"""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from scipy import stats

import metaeval as me
from metaeval.cli.main import main
from metaeval.errors import ParameterError

sacrebleu = pytest.importorskip("sacrebleu")
HUMAN = "expert.relevance"


def test_system_scores_are_sacrebleu_corpus_bleu(summeval_bleu):
    ds, corpus, expected, *_ = summeval_bleu
    statistics, aggregate = corpus["bleu"]
    np.testing.assert_allclose(aggregate(statistics.sum(axis=1)), expected, rtol=0, atol=1e-9)
    r = me.correlate(ds, "bleu", HUMAN, level="system", coefficient="pearson", corpus_statistics=corpus)
    oracle = stats.pearsonr(expected, ds.matrix(HUMAN).mean(axis=1))
    assert r.statistic == pytest.approx(oracle.statistic, abs=1e-12)
    assert r.pvalue == pytest.approx(oracle.pvalue, abs=1e-12)
    assert "corpus_level:yes" in str(r.signature)
    plain = me.correlate(ds, "bleu", HUMAN, level="system", coefficient="pearson")
    assert plain.statistic != pytest.approx(oracle.statistic, abs=1e-4)  # the mean of sentence scores differs
    summary = me.correlate(ds, "bleu", HUMAN, level="summary", corpus_statistics=corpus)
    assert summary.statistic == me.correlate(ds, "bleu", HUMAN, level="summary").statistic
    assert "corpus_level" not in str(summary.signature)


def test_intervals_and_table_use_corpus_scores(summeval_bleu):
    ds, corpus, expected, *_ = summeval_bleu
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        boot = me.bootstrap_ci(ds, "bleu", HUMAN, level="system", coefficient="kendall", method="inputs",
                               n_resamples=200, rng=0, corpus_statistics=corpus)
        fisher = me.fisher_ci(ds, "bleu", HUMAN, level="system", coefficient="kendall", corpus_statistics=corpus)
        table = me.correlation_table(ds, HUMAN, ["bleu", "rouge-2.recall"], levels=["system", "summary"],
                                     coefficients=["kendall"], n_resamples=100, corpus_statistics=corpus)
    tau = stats.kendalltau(expected, ds.matrix(HUMAN).mean(axis=1)).statistic
    assert boot.statistic == pytest.approx(tau, abs=1e-12) == fisher.statistic
    assert boot.ci[0] < tau < boot.ci[1]
    assert table.get("bleu", "system", "kendall-b").statistic == pytest.approx(tau, abs=1e-12)
    assert "corpus_level:bleu" in str(table.signature)


def test_compare_metrics_tests_corpus_bleu_against_a_mean_metric(summeval_bleu):
    ds, corpus, *_ = summeval_bleu
    out = me.compare_metrics(ds, ["bleu", "rouge-2.recall"], HUMAN, level="system", test="bootstrap",
                             method="inputs", n_resamples=200, rng=0, corpus_statistics=corpus)
    assert out.correlations[0].statistic == me.correlate(ds, "bleu", HUMAN, level="system",
                                                         corpus_statistics=corpus).statistic
    assert 0 < out.pvalues[0, 1] <= 1 and "corpus_level:bleu" in str(out.signature)
    with pytest.raises(ParameterError, match=r"^`method` must be 'systems' for a permutation test with a corpus"):
        me.compare_metrics(ds, ["bleu", "rouge-2.recall"], HUMAN, level="system", test="permutation",
                           method="both", n_resamples=10, corpus_statistics=corpus)


def test_corpus_statistics_validation(summeval_bleu):
    ds, corpus, *_ = summeval_bleu
    statistics, aggregate = corpus["bleu"]
    with pytest.raises(ParameterError, match=r"^`corpus_statistics\['bleu'\]` must cover the 16 systems x 100 "
                                             r"inputs of the data; got statistics of shape \(16, 99, 10\)\.$"):
        me.correlate(ds, "bleu", HUMAN, level="system", corpus_statistics={"bleu": (statistics[:, 1:], aggregate)})
    with pytest.raises(ParameterError, match=r"^`corpus_statistics\['bleu'\]` must be a CorpusScores or a pair "
                                             r"\(statistics, aggregate\); got ndarray\.$"):
        me.correlate(ds, "bleu", HUMAN, level="system", corpus_statistics={"bleu": statistics})
    missing = statistics.copy()
    missing[3] = np.nan  # one system without any candidate
    with pytest.raises(ParameterError, match=r"^`corpus_statistics\['bleu'\]` must have statistics for every system "
                                             r"on at least one input \(a corpus score compares systems on one test "
                                             r"set\); got none; systems without any: 'M5'\.$"):
        me.correlate(ds, "bleu", HUMAN, level="system", corpus_statistics={"bleu": (missing, aggregate)})
    with pytest.raises(ParameterError, match=r"^`corpus_statistics` must be a mapping"):
        me.correlate(ds, "bleu", HUMAN, level="system", corpus_statistics=[statistics])


def test_cli_correlate_and_compare_with_corpus_bleu(summeval_bleu, tmp_path, capsys):
    ds, _, expected, cands, refs, scores = summeval_bleu
    out = tmp_path / "table.json"
    argv = ["correlate", "--scores", str(scores), "--human", HUMAN, "--level", "system", "--coefficient", "pearson",
            "--ci", "none", "--corpus-metric", "bleu", "--candidates", str(cands), "--references", str(refs),
            "--format", "json", "--output", str(out)]
    assert main(argv) == 0, capsys.readouterr().err
    rows = {r["metric"]: r for r in json.loads(out.read_text())["results"]}
    assert rows["bleu"]["statistic"] == pytest.approx(stats.pearsonr(expected, ds.matrix(HUMAN).mean(axis=1))[0],
                                                      abs=1e-12)
    argv = ["compare", "--scores", str(scores), "--human", HUMAN, "--level", "system", "--test", "bootstrap",
            "--method", "inputs", "--n-resamples", "100", "--corpus-metric", "bleu", "--candidates", str(cands),
            "--references", str(refs), "--no-progress"]
    assert main(argv) == 0
    assert "corpus_level:bleu" in capsys.readouterr().out


@pytest.mark.parametrize("extra, message", [
    (["--corpus-metric", "bleu"], "`--corpus-metric` must come with `--candidates` and `--references`; got neither."),
    (["--candidates", "c.jsonl"], "`--candidates` and `--references` must come with `--corpus-metric`; got no "
                                  "--corpus-metric."),
    (["--corpus-metric", "chrf", "--candidates", "c", "--references", "r"],
     "`--corpus-metric` must name a metric of the scores; got 'chrf', which is not one (score its segments with "
     "`metaeval score --metric chrf` too)."),
    (["--level", "system", "--test", "permutation", "--corpus-metric", "bleu", "--candidates", "CANDS",
      "--references", "REFS"],
     "`method` must be 'systems' for a permutation test with a corpus metric (PERM-INPUTS and PERM-BOTH swap "
     "cells, and a corpus score has none); got 'both'."),
])
def test_cli_corpus_errors(summeval_bleu, capsys, extra, message):
    *_, cands, refs, scores = summeval_bleu
    extra = [str(cands) if e == "CANDS" else str(refs) if e == "REFS" else e for e in extra]
    argv = ["compare", "--scores", str(scores), "--human", HUMAN, "--n-resamples", "5", "--no-progress", *extra]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == f"metaeval: error: {message}"


def test_single_pair_tests_with_corpus_bleu(summeval_bleu):
    ds, corpus, expected, *_ = summeval_bleu
    kw = dict(level="system", coefficient="kendall", n_resamples=200, rng=0, corpus_statistics=corpus)
    tau = stats.kendalltau(expected, ds.matrix(HUMAN).mean(axis=1)).statistic
    for method in ("systems", "inputs", "both"):
        boot = me.bootstrap_test(ds, "bleu", "rouge-2.recall", HUMAN, method=method, **kw)
        assert boot.statistic_a == pytest.approx(tau, abs=1e-12) and "corpus_level:yes" in str(boot.signature)
        assert boot.ci[0] <= boot.statistic <= boot.ci[1]
    # PERM-SYSTEMS and Williams see system scores only: the same tests on a ScoreSet of system scores
    means = me.ScoreSet.from_matrices({"bleu": expected[:, None], "rouge-2.recall": ds.matrix("rouge-2.recall").mean(1)[:, None],
                                       HUMAN: ds.matrix(HUMAN).mean(1)[:, None]}, systems=ds.systems, humans=[HUMAN])
    perm = me.permutation_test(ds, "bleu", "rouge-2.recall", HUMAN, method="systems", **kw)
    again = me.permutation_test(means, "bleu", "rouge-2.recall", HUMAN, method="systems",
                                **{k: v for k, v in kw.items() if k != "corpus_statistics"})
    assert perm.pvalue == again.pvalue and perm.statistic == pytest.approx(again.statistic, abs=1e-12)
    will = me.williams_test(ds, "bleu", "rouge-2.recall", HUMAN, level="system", corpus_statistics=corpus)
    assert will.pvalue == pytest.approx(me.williams_test(means, "bleu", "rouge-2.recall", HUMAN,
                                                         level="system").pvalue, abs=1e-12)
    with pytest.raises(ParameterError, match=r"^`method` must be 'systems' for a permutation test with a corpus"):
        me.permutation_test(ds, "bleu", "rouge-2.recall", HUMAN, method="both", **kw)


def test_report_with_corpus_bleu(summeval_bleu, tmp_path):
    """`report --corpus-metric`: corpus scores in the correlations, the matrix (a paired bootstrap) and the
    analyses; the page says so and the reproduction command carries the options."""
    ds, corpus, expected, cands, refs, scores = summeval_bleu
    out = tmp_path / "report"
    argv = ["report", "--scores", str(scores), "--human", HUMAN, "--quick", "--n-repetitions", "5",
            "--analysis", "topk", "--analysis", "verdicts", "--corpus-metric", "bleu", "--candidates", str(cands),
            "--references", str(refs), "--output", str(out), "--no-progress"]
    assert main(argv) == 0
    results = json.loads((out / "results.json").read_text())
    tau = stats.kendalltau(expected, ds.matrix(HUMAN).mean(axis=1)).statistic
    system = [r for r in results["correlations"]["results"]
              if r["metric"] == "bleu" and r["level"] == "system" and r["coefficient"] == "kendall-b"]
    assert system[0]["statistic"] == pytest.approx(tau, abs=1e-12)
    assert results["comparison"]["test"] == "bootstrap" and "corpus_level:bleu" in results["comparison"]["signature"]
    assert results["settings"]["corpus_metrics"] == ["bleu"]
    assert "--corpus-metric bleu --candidates" in results["command"]
    assert "Corpus metrics (bleu)" in (out / "report.html").read_text()
    assert all("corpus_level:bleu" in results["analyses"][name]["signature"] for name in ("topk", "verdicts"))
