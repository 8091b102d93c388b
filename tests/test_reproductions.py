"""Published results reproduced: Deutsch, Dror & Roth (2021) Sec. 5.2 / Fig. 3 with the paper's ROUGE-1
variant, and REALSumm's summary-level numbers with the notebook's two choices (reproduction options)."""
from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pytest

import metaeval as me
from metaeval.metrics.degraded import DegradedRouge, tokenize

CANDIDATES = ["the cat sat on the mat the end", "a dog barked at the cat", "nothing here matches"]
REFERENCES = [["the cat was on the mat"], ["the dog barked", "a cat and a dog"], ["something else"]]


# -- the degraded metric's variants ---------------------------------------------------------------------

def _variant(tokens, refs, variant):
    """Per-reference P, R, F of clipped unigram matches (0 when a denominator is 0), averaged over refs."""
    out = []
    cc = Counter(tokens)
    for ref in refs:
        rc = Counter(tokenize(ref, "simple"))
        match = sum(min(n, rc[t]) for t, n in cc.items())
        r = match / sum(rc.values()) if rc else 0.0
        p = match / len(tokens) if tokens else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        out.append({"recall": r, "precision": p, "f1": f}[variant])
    return float(np.mean(out))


@pytest.mark.parametrize("variant", ["recall", "precision", "f1"])
def test_degraded_rouge_variants_are_hand_computed(variant):
    rouge = DegradedRouge(CANDIDATES, REFERENCES, tokenizer="simple", variant=variant)
    expected = [_variant(tokenize(c, "simple"), r, variant) for c, r in zip(CANDIDATES, REFERENCES)]
    np.testing.assert_allclose(rouge.full(), expected, rtol=1e-12)
    np.testing.assert_array_equal(rouge.scores(1.0, 2, 0), np.tile(rouge.full(), (2, 1)))


def test_degraded_f1_of_a_sample_is_hand_computed():
    # "a b c d" against "a b": keeping 2 tokens, matches m in {0, 1, 2}: P = m/2, R = m/2, F1 = m/2
    rouge = DegradedRouge(["a b c d"], [["a b"]], tokenizer="simple", variant="f1")
    assert sorted(set(rouge.scores(0.5, 500, 0)[:, 0].tolist())) == [0.0, 0.5, 1.0]
    # no kept token: precision and F1 are 0 (SacreROUGE's rule), not undefined
    short = DegradedRouge(["a b"], [["a"]], tokenizer="simple", variant="precision")
    assert short.scores(0.4, 3, 0).tolist() == [[0.0], [0.0], [0.0]]


def test_degraded_variant_validation():
    with pytest.raises(me.ParameterError) as info:
        DegradedRouge(["a"], [["a"]], tokenizer="simple", variant="f2")
    assert str(info.value) == "`variant` must be one of 'recall', 'precision', 'f1'; got 'f2'."


# -- power: rouge_variant and x_metric ------------------------------------------------------------------

def _texts(ds):
    candidates = {s: {i: f"alpha {'beta ' * (a % 3)}word{(a + k) % 3} gamma{a % 2} x{a} y{k}"
                      for k, i in enumerate(ds.inputs)} for a, s in enumerate(ds.systems)}
    references = {i: ["alpha beta beta gamma1 delta", "beta word1 word2"] for i in ds.inputs}
    return candidates, references


def test_power_x_metric_is_used_as_x(tiny_scoreset):
    candidates, references = _texts(tiny_scoreset)
    flat_c = [candidates[s][i] for s in tiny_scoreset.systems for i in tiny_scoreset.inputs]
    flat_r = [references[i] for s in tiny_scoreset.systems for i in tiny_scoreset.inputs]
    full = DegradedRouge(flat_c, flat_r, tokenizer="simple", variant="f1").full().reshape(tiny_scoreset.shape)
    shifted = 3 * full + 1  # an affine copy of X: every test statistic is invariant
    ds = me.ScoreSet.from_matrices({"x": shifted, "human": tiny_scoreset.matrix("human")},
                                   systems=tiny_scoreset.systems, inputs=tiny_scoreset.inputs, humans=["human"])
    kw = dict(candidates=candidates, references=references, proportions=(0.5, 1.0), n_trials=4, n_resamples=60,
              tokenizer="simple", rouge_variant="f1", rng=3)
    recomputed = me.simulate_power(ds, "human", **kw)
    packaged = me.simulate_power(ds, "human", x_metric="x", **kw)
    np.testing.assert_array_equal(recomputed.rejections, packaged.rejections)
    assert packaged.x_metric == "x" and "x:x" in str(packaged.signature)
    assert "rouge_variant:f1" in str(recomputed.signature) and "x:recomputed" in str(recomputed.signature)


def test_power_variant_validation(tiny_scoreset):
    candidates, references = _texts(tiny_scoreset)
    kw = dict(candidates=candidates, references=references, tokenizer="simple", n_trials=1)
    with pytest.raises(me.ParameterError) as info:
        me.simulate_power(tiny_scoreset, "human", rouge_variant="rouge-1", **kw)
    assert str(info.value) == "`rouge_variant` must be one of 'recall', 'precision', 'f1'; got 'rouge-1'."
    a = tiny_scoreset.matrix("a").copy()
    a[0, 0] = np.nan
    ds = me.ScoreSet.from_matrices({"a": a, "human": tiny_scoreset.matrix("human")}, systems=tiny_scoreset.systems,
                                   inputs=tiny_scoreset.inputs, humans=["human"])
    with pytest.raises(me.ParameterError) as info:
        me.simulate_power(ds, "human", x_metric="a", **kw)
    assert str(info.value) == ("`x_metric` must have a score in every cell for the power simulation; got 1 missing "
                               "cells of 'a'.")


@pytest.fixture(scope="module")
def summeval_texts(shared_data):
    return me.load_texts("summeval", directory=shared_data)


def test_power_default_variant_is_the_papers_per_dataset(shared_data, summeval_texts):
    assert me.analyses.power.default_rouge_variant("summeval") == "f1"
    assert me.analyses.power.default_rouge_variant("realsumm") == "recall"
    assert me.analyses.power.default_rouge_variant(None) == "recall"
    c, r = summeval_texts
    res = me.simulate_power(me.load_dataset("summeval"), "expert.relevance", candidates=c, references=r,
                            proportions=(1.0,), tests=("williams",), n_trials=1, rng=0)
    assert res.rouge_variant == "f1" and "rouge_variant:f1" in str(res.signature)
    c, r = me.load_texts("realsumm", directory=shared_data)
    res = me.simulate_power(me.load_dataset("realsumm"), "litepyramid.recall", candidates=c, references=r,
                            proportions=(1.0,), tests=("williams",), n_trials=1, rng=0)
    assert res.rouge_variant == "recall"


def test_recomputed_rouge1_f1_matches_the_packaged_column(shared_data, summeval_texts):
    ds = me.load_dataset("summeval")
    c, r = summeval_texts
    flat_c = [c[s][i] for s in ds.systems for i in ds.inputs]
    flat_r = [r[i] for s in ds.systems for i in ds.inputs]
    ours = DegradedRouge(flat_c, flat_r, variant="f1").full().reshape(ds.shape) * 100
    packaged = ds.matrix("rouge-1.f1")
    assert np.corrcoef(ours.ravel(), packaged.ravel())[0, 1] > 0.999
    assert np.median(np.abs(ours - packaged)) < 0.05


def test_power_with_f1_reproduces_section_5_2(shared_data, summeval_texts):
    """Deutsch, Dror & Roth (2021) Sec. 5.2 on SummEval with ROUGE-1 F1 (footnote 9): PERM-BOTH has the
    highest power; at the system level BOOT-BOTH and Williams are ~0 for every k (Figure 3's caption)."""
    c, r = summeval_texts
    ds = me.load_dataset("summeval")
    kw = dict(candidates=c, references=r, proportions=(0.05, 0.1, 0.5), n_trials=40, rng=0)
    res = me.simulate_power(ds, "expert.relevance", **kw)
    assert res.rouge_variant == "f1"
    system, summary = res.table("system"), res.table("summary")
    assert (system.loc["perm-both", ["0.05", "0.1"]] >= 0.9).all()
    assert (system.loc["boot-both"] <= 0.05).all() and (system.loc["williams"] <= 0.05).all()
    assert (summary.loc["perm-both"] >= summary.loc["boot-both"]).all()
    assert (summary.loc["williams"] <= 0.05).all()
    # with recall (what metaeval used to run on SummEval) Williams rejects most of the time: not the paper
    recall = me.simulate_power(ds, "expert.relevance", rouge_variant="recall", tests=("williams",), **kw)
    assert recall.table("system").loc["williams", "0.1"] >= 0.6


def test_power_cli_rouge_variant_and_x_metric(shared_data, tmp_path):
    from metaeval.cli.main import main

    out = tmp_path / "power.csv"
    assert main(["simulate", "power", "--dataset", "summeval", "--texts-dir", str(shared_data), "--n-trials", "2",
                 "--n-resamples", "20", "--proportion", "0.5", "--test", "williams", "--rouge-variant", "precision",
                 "--x-metric", "rouge-1.precision", "--format", "json", "--output", str(out)]) == 0
    text = out.read_text()
    assert '"rouge_variant": "precision"' in text and '"x_metric": "rouge-1.precision"' in text
    assert main(["simulate", "power", "--dataset", "summeval", "--texts-dir", str(shared_data),
                 "--rouge-variant", "f2"]) == 2


# -- REALSumm: the notebook's summary level --------------------------------------------------------------

REALSUMM_METRICS = ["bertscore.recall", "moverscore", "rouge-1.recall", "rouge-2.recall", "rouge-l.recall", "js-2"]
#: The REALSumm notebook's output (neulab/REALSumm analysis/analysis.ipynb, Exp-IV, last column: each metric
#: against litepyramid_recall; the mix with BART twice and the p <= 0.05 document filter).
REALSUMM_NOTEBOOK = [0.46838622087890563, 0.43599197955352864, 0.48913594431561247, 0.4859542610414608,
                     0.4870908341119741, 0.4254850921291276]


def _paper(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", me.PaperProcedureWarning)
        ds = me.load_dataset("realsumm", paper_mix_duplicate_bart=True)
        return me.paper_summary_level(ds, "litepyramid.recall", REALSUMM_METRICS, significant_documents_only=True,
                                      **kw)


def test_realsumm_notebook_numbers_reproduce_with_both_paper_options():
    # exact ties (tie_tolerance=0) as scipy: JS-2 of non-overlapping summaries is -ln 2 up to float noise
    res = _paper(tie_tolerance=0)
    np.testing.assert_allclose(res.statistic, REALSUMM_NOTEBOOK, rtol=0, atol=1e-12)
    assert res.n_used.tolist() == [58, 46, 72, 58, 70, 46]
    assert (res.n_used + res.n_not_significant + res.n_undefined == 100).all()
    # metaeval's default tie rule treats those float-noise values as ties: only JS-2 moves
    default = _paper()
    np.testing.assert_allclose(default.statistic[:5], REALSUMM_NOTEBOOK[:5], atol=1e-12)
    assert abs(default.statistic[5] - REALSUMM_NOTEBOOK[5]) > 1e-4


def test_realsumm_all_documents_24_systems_is_metaevals_summary_level():
    ds = me.load_dataset("realsumm")
    res = me.paper_summary_level(ds, "litepyramid.recall", REALSUMM_METRICS)
    assert res.n_used.tolist() == [100] * 6 and res.n_not_significant.tolist() == [0] * 6
    for a, metric in enumerate(REALSUMM_METRICS):
        ref = me.correlate(ds, metric, "litepyramid.recall", level="summary", coefficient="kendall-b")
        assert res.statistic[a] == pytest.approx(ref.statistic, abs=1e-12)
    assert round(float(res.statistic[2 + 1]), 4) == 0.3502  # ROUGE-2 recall, against 0.4860 in the notebook
    assert (res.statistic < _paper(tie_tolerance=0).statistic).all()  # the filter is biased upward


def test_paper_options_warn_and_are_recorded():
    with pytest.warns(me.PaperProcedureWarning, match="holds BART twice"):
        ds = me.load_dataset("realsumm", paper_mix_duplicate_bart="true")
    assert ds.shape == (25, 100) and ds.systems[-1] == "bart_out_abs"
    np.testing.assert_array_equal(ds.matrix("rouge-2.recall")[-1],
                                  ds.matrix("rouge-2.recall")[ds.systems.index("bart_out")])
    assert "subset:paper_mix_duplicate_bart=true" in str(me.correlate(ds, "rouge-2.recall", "litepyramid.recall")
                                                         .signature)
    assert me.load_dataset("realsumm", paper_mix_duplicate_bart=False).shape == (24, 100)
    with pytest.warns(me.PaperProcedureWarning, match=r"significant \(p <= 0.05\), as the REALSumm notebook: "
                                                      "biased upward"):
        res = me.paper_summary_level(me.load_dataset("realsumm"), "litepyramid.recall", ["rouge-2.recall"],
                                     significant_documents_only=True)
    assert "document_filter:p<=0.05" in str(res.signature)


def test_paper_options_validation():
    with pytest.raises(me.ParameterError) as info:
        me.load_dataset("realsumm", paper_mix_duplicate_bart="maybe")
    assert str(info.value) == "`paper_mix_duplicate_bart` must be true or false; got 'maybe'."
    with pytest.raises(me.ParameterError) as info:
        me.load_dataset("summeval", paper_mix_duplicate_bart=True)
    assert str(info.value) == "options of dataset 'summeval' must be among (none); got 'paper_mix_duplicate_bart'."
    ds = me.load_dataset("realsumm")
    with pytest.raises(me.ParameterError) as info:
        me.paper_summary_level(ds, "litepyramid.recall", ["js-2"], significant_documents_only="yes")
    assert str(info.value) == "`significant_documents_only` must be True or False; got 'yes'."
    with pytest.raises(me.ParameterError) as info:
        me.paper_summary_level(ds, "litepyramid.recall", ["js-2"], coefficient="accuracy")
    assert str(info.value) == ("`coefficient` must be one of 'pearson', 'spearman', 'kendall-b', 'kendall-c' (a "
                               "p-value per document); got 'accuracy'.")


def test_reproduce_cli(tmp_path):
    from metaeval.cli.main import main

    out = tmp_path / "paper.csv"
    args = ["reproduce", "summary-level", "--dataset", "realsumm", "--dataset-option",
            "paper_mix_duplicate_bart=true", "--metric", "rouge-2.recall", "--paper-document-filter",
            "--format", "csv", "--output", str(out)]
    assert main(args) == 0
    assert out.read_text().splitlines()[1].startswith("rouge-2.recall,0.48595426104146")
    assert main(["reproduce", "summary-level", "--dataset", "realsumm", "--dataset-option",
                 "paper_mix_duplicate_bart=maybe"]) == 2


# -- MT: WMT19 baselines (Ma et al. 2019, Table 3) and WMT20 MQM system scores (Freitag et al. 2021) --------

#: Ma et al. (2019), Table 3: |Pearson| of system-level baseline metrics with DA, newstest2019 de-en.
WMT19_DE_EN = {"bleu": 0.849, "cder": 0.890, "chrf": 0.917, "chrf+": 0.916, "nist": 0.813, "per": 0.883,
               "sacrebleu-bleu": 0.813, "sacrebleu-chrf": 0.910, "ter": 0.874, "wer": 0.863}
#: Expert MQM system scores of newstest2020 (google/wmt-mqm-human-evaluation README; Freitag et al. 2021).
WMT20_MQM = {
    "ende": {"Human-B.0": 0.75, "Human-A.0": 0.91, "Human-P.0": 1.41, "Tohoku-AIP-NTT.890": 2.02, "OPPO.1535": 2.25,
             "eTranslation.737": 2.33, "Tencent_Translation.1520": 2.35, "Huoshan_Translate.832": 2.45,
             "Online-B.1590": 2.48, "Online-A.1574": 2.99},
    "zhen": {"Human-A.0": 3.43, "Human-B.0": 3.62, "Huoshan_Translate.919": 5.03, "WeChat_AI.1525": 5.13,
             "Tencent_Translation.1249": 5.19, "OPPO.1422": 5.20, "THUNLP.1498": 5.34, "DeepMind.381": 5.41,
             "DiDi_NLP.401": 5.48, "Online-B.1605": 5.85}}


def test_wmt19_baselines_match_the_published_table():
    ds = me.load_dataset("wmt19-da-sys", language_pair="de-en")
    for metric, published in WMT19_DE_EN.items():
        r = me.correlate(ds, metric, "da.z", level="system", coefficient="pearson").statistic
        assert abs(r - published) <= 0.0005 + 1e-12, metric


@pytest.mark.parametrize("pair", ["ende", "zhen"])
def test_wmt20_mqm_system_scores_match_the_published_ones(pair):
    ds = me.load_dataset(f"wmt20-mqm-{pair}")
    ours = dict(zip(ds.systems, -np.nanmean(ds.matrix("mqm"), axis=1)))
    assert set(ours) == set(WMT20_MQM[pair])
    for system, published in WMT20_MQM[pair].items():
        assert abs(ours[system] - published) <= 0.005 + 1e-12, system


def test_paper_summary_level_counts_undefined_documents_and_missing_cells():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(8, 5))
    x = z + rng.normal(size=(8, 5))
    x[0, 0] = np.nan  # a missing cell: that document correlates over 7 systems
    x[:, 1] = 1.0  # a constant document: undefined, counted, left out
    ds = me.ScoreSet.from_matrices({"x": x, "h": z}, humans=["h"])
    res = me.paper_summary_level(ds, "h", ["x"])
    assert res.n_used.tolist() == [4] and res.n_undefined.tolist() == [1]
    assert res.statistic[0] == pytest.approx(me.correlate(ds, "x", "h", level="summary", coefficient="kendall")
                                             .statistic, abs=1e-12)
    from scipy import stats

    with pytest.warns(me.PaperProcedureWarning):
        kept = me.paper_summary_level(ds, "h", ["x"], significant_documents_only=True, alpha=0.2)
    taus = [stats.kendalltau(x[:, j][np.isfinite(x[:, j])], z[:, j][np.isfinite(x[:, j])]) for j in (0, 2, 3, 4)]
    expected = [t.statistic for t in taus if t.pvalue <= 0.2]
    assert kept.n_used[0] == len(expected) and kept.statistic[0] == pytest.approx(np.mean(expected), abs=1e-12)
    assert kept.n_used[0] + kept.n_not_significant[0] == 4
