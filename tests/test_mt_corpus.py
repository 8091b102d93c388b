"""Corpus-level MT system scores from the command line (issue 12, item 2): `metaeval mt --corpus-metric`."""
from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

import metaeval as me
from metaeval.cli.main import main
from metaeval.mt.evaluate import mt_evaluate
from metaeval.errors import ParameterError, ScoreSetError
from metaeval.scoring.corpus import corpus_statistics

sacrebleu = pytest.importorskip("sacrebleu")

WORDS = "the a cat dog sat ran on under mat rug house garden quickly slowly red blue".split()


def _corpus(tmp_path, n_systems=5, n_segments=12, seed=0):
    rng = np.random.default_rng(seed)
    refs = [" ".join(rng.choice(WORDS, size=8)) for _ in range(n_segments)]
    cands, rows = {}, []
    scorer = me.metrics.get_scorer("bleu")
    for i in range(n_systems):
        sys_out = []
        for j, ref in enumerate(refs):
            words = ref.split()
            keep = rng.random(len(words)) < 0.35 + 0.12 * i  # better systems keep more of the reference
            hyp = " ".join(w if k else str(rng.choice(WORDS)) for w, k in zip(words, keep))
            sys_out.append(hyp)
            rows.append({"system": f"s{i}", "input": str(j), "candidate": hyp})
        cands[f"s{i}"] = sys_out
    (tmp_path / "cands.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "refs.jsonl").write_text("".join(json.dumps({"input": str(j), "references": [r]}) + "\n"
                                                 for j, r in enumerate(refs)))
    human = np.array([[i + rng.normal() for _ in range(n_segments)] for i in range(n_systems)])
    lines = ["system,input,bleu,length,mqm"]
    for i, (name, outs) in enumerate(cands.items()):
        for j, hyp in enumerate(outs):
            lines.append(f"{name},{j},{scorer.score(hyp, [refs[j]])['bleu']},{len(hyp)},{human[i, j]}")
    (tmp_path / "scores.csv").write_text("\n".join(lines) + "\n")
    corpus = [sacrebleu.corpus_bleu(outs, [refs]).score for outs in cands.values()]
    return corpus, human.mean(axis=1)


def test_corpus_system_scores_are_sacrebleu_corpus_bleu(tmp_path):
    corpus, human = _corpus(tmp_path)
    ds = me.read_scores(tmp_path / "scores.csv", humans=["mqm"])
    computed = corpus_statistics(ds, str(tmp_path / "cands.jsonl"), str(tmp_path / "refs.jsonl"), "bleu")
    statistics, aggregate = computed
    np.testing.assert_allclose(aggregate(statistics.sum(axis=1)), corpus, rtol=0, atol=1e-9)
    result = mt_evaluate({"en-de": ds}, ["bleu", "length"], "mqm", tasks=["system/pearson"], n_resamples=50,
                         rng=0, corpus_statistics={"bleu": {"en-de": computed}})
    expected = stats.pearsonr(corpus, human).statistic
    assert float(result.statistics[0, 0]) == pytest.approx(expected, abs=1e-12)
    plain = mt_evaluate({"en-de": ds}, ["bleu", "length"], "mqm", tasks=["system/pearson"], n_resamples=50, rng=0)
    assert float(plain.statistics[0, 0]) != pytest.approx(expected, abs=1e-6)  # the mean of sentence BLEU differs


def test_cli_corpus_metric(tmp_path, capsys):
    corpus, human = _corpus(tmp_path)
    out = tmp_path / "mt.json"
    argv = ["mt", "--scores", f"en-de={tmp_path / 'scores.csv'}", "--human", "mqm", "--task", "system/pearson",
            "--n-resamples", "50", "--corpus-metric", "bleu", "--candidates", f"en-de={tmp_path / 'cands.jsonl'}",
            "--references", f"en-de={tmp_path / 'refs.jsonl'}", "--format", "json", "--output", str(out)]
    assert main(argv) == 0, capsys.readouterr().err
    text = out.read_text()
    assert "corpus_level:bleu" in text
    assert f"{stats.pearsonr(corpus, human).statistic:.6f}"[:6] in text


@pytest.mark.parametrize("extra, message", [
    (["--corpus-metric", "bleu"], "`--candidates` must give a file for every language pair with --corpus-metric; "
                                  "got none for 'en-de'."),
    (["--candidates", "en-de=x.jsonl"], "`--candidates` and `--references` must come with `--corpus-metric`; got no"
                                        " --corpus-metric."),
    (["--corpus-metric", "chrf", "--candidates", "en-de=c", "--references", "en-de=r"],
     "`--corpus-metric` must name a metric of language pair 'en-de'; got 'chrf', which is not one (score its"
     " segments with `metaeval score --metric chrf` too)."),
])
def test_cli_corpus_metric_errors(tmp_path, capsys, extra, message):
    _corpus(tmp_path)
    argv = ["mt", "--scores", f"en-de={tmp_path / 'scores.csv'}", "--human", "mqm", "--n-resamples", "5", *extra]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == f"metaeval: error: {message}"


def test_corpus_statistics_validation(tmp_path):
    _corpus(tmp_path)
    ds = me.read_scores(tmp_path / "scores.csv", humans=["mqm"])
    with pytest.raises(ParameterError) as info:
        corpus_statistics(ds, str(tmp_path / "cands.jsonl"), str(tmp_path / "refs.jsonl"), "meteor")
    assert str(info.value) == ("`metric` must be one of 'bleu', 'chrf', 'ter', 'nist', 'stm', 'hwcm', 'dstm' "
                               "(metrics with sufficient statistics); got 'meteor'.")
    other = ds.subset(systems=["s0", "s1", "s2"])
    records = [{"system": "x", "input": "0", "candidate": "the cat"}]
    with pytest.raises(ScoreSetError, match="the candidates must name systems and inputs of the scores; got none"):
        corpus_statistics(other, records, [{"input": "0", "references": ["the cat"]}], "bleu")


def test_soft_pairwise_accuracy_of_a_corpus_metric_compares_corpus_scores(tmp_path):
    _corpus(tmp_path)
    ds = me.read_scores(tmp_path / "scores.csv", humans=["mqm"])
    computed = corpus_statistics(ds, str(tmp_path / "cands.jsonl"), str(tmp_path / "refs.jsonl"), "bleu")
    statistics, aggregate = computed
    kw = dict(tasks=["system/soft-accuracy"], n_resamples=20, rng=0, spa_permutations=200, significance="bootstrap")
    with pytest.raises(ParameterError) as err:  # corpus scores have no cells to exchange
        mt_evaluate({"en-de": ds}, ["bleu", "length"], "mqm", **{**kw, "significance": "permutation"},
                    corpus_statistics={"bleu": {"en-de": computed}})
    assert str(err.value) == ("`significance` must be 'bootstrap' for soft pairwise accuracy with corpus metrics "
                              "(their segment cells cannot be exchanged); got 'permutation'.")
    plain = mt_evaluate({"en-de": ds}, ["bleu", "length"], "mqm", **kw)
    as_mean = np.stack([ds.matrix("bleu"), np.ones(ds.shape)], axis=-1)  # the segment scores as (score, 1)
    same = mt_evaluate({"en-de": ds}, ["bleu", "length"], "mqm", **kw,
                       corpus_statistics={"bleu": {"en-de": (as_mean, lambda s: s[..., 0] / s[..., 1])}})
    np.testing.assert_allclose(same.statistics, plain.statistics, atol=1e-12)
    corpus = mt_evaluate({"en-de": ds}, ["bleu", "length"], "mqm", **kw,
                         corpus_statistics={"bleu": {"en-de": (statistics, aggregate)}})
    assert corpus.statistics[0, 0] != plain.statistics[0, 0]  # corpus BLEU of the swapped test sets
    assert corpus.statistics[0, 1] == plain.statistics[0, 1]
