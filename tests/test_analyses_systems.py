"""compare_systems, the CorpusStatistic protocol (BLEU through sacrebleu) and system_verdicts."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import metaeval as me
from metaeval.analyses.verdicts import confusion_matrix, verdict_labels, weighted_f1
from metaeval.metrics.corpus_statistics import MeanStatistic


def _set(matrices, n_inputs=None):
    first = next(iter(matrices.values()))
    return me.ScoreSet.from_matrices(matrices, systems=[f"s{i}" for i in range(first.shape[0])],
                                     humans=["human"] if "human" in matrices else (), name="toy")


# -- validation: every message pinned -----------------------------------------------------------------

@pytest.mark.parametrize("kwargs,message", [
    (dict(test="t"), "`test` must be one of 'bootstrap', 'randomization'; got 't'."),
    (dict(systems=["s0"]), "`systems` must name at least 2 distinct systems; got ['s0']."),
    (dict(systems="s0"), "`systems` must be a list of system labels; got the string 's0'."),
    (dict(systems=["s0", "zz"]), "`systems` must hold labels of the scores' systems; got 'zz'."),
    (dict(exact=True), "`exact` must be False unless `test` is 'randomization'; got test 'bootstrap'."),
    (dict(exact=1), "`exact` must be True or False; got 1."),
    (dict(correction="dunn"), "`correction` must be one of 'none', 'bonferroni', 'sidak', 'holm', 'holm-sidak', 'benjamini-hochberg'; "
                              "got 'dunn'."),
    (dict(n_resamples=0), "`n_resamples` must be an integer >= 1; got 0."),
])
def test_compare_systems_validation(tiny_scoreset, kwargs, message):
    with pytest.raises(me.MetaevalError) as info:
        me.compare_systems(tiny_scoreset, "a", **kwargs)
    assert str(info.value) == message


def test_compare_systems_validation_of_sources(tiny_scoreset):
    with pytest.raises(me.ParameterError) as info:
        me.compare_systems([[1.0]], "a")
    assert str(info.value) == "`ds` must be a ScoreSet or CorpusScores; got list."
    with pytest.raises(me.ParameterError) as info:
        me.compare_systems(tiny_scoreset)
    assert str(info.value) == "`scorer` must name a scorer of the ScoreSet; got None."
    ds = _set({"x": np.zeros((3, 25))})
    with pytest.raises(me.ParameterError) as info:
        me.compare_systems(ds, "x", test="randomization", exact=True)
    assert str(info.value) == "`exact` must be False for more than 20 inputs (2^M assignments); got 25 inputs."


# -- paired bootstrap ---------------------------------------------------------------------------------

def test_bootstrap_is_the_count_weighted_mean_difference(tiny_scoreset):
    res = me.compare_systems(tiny_scoreset, "human", systems=["s0", "s5"], n_resamples=50, rng=3)
    x = tiny_scoreset.matrix("human")
    gen = np.random.default_rng(3)
    cols = gen.integers(0, 6, size=(50, 6))  # bootstrap_draws: inputs only, one row of indices per resample
    expected = x[0, cols].mean(axis=1) - x[5, cols].mean(axis=1)
    np.testing.assert_allclose(res.samples[0], expected, rtol=0, atol=1e-12)
    assert res.deltas[0] == pytest.approx(x[0].mean() - x[5].mean())
    assert res.scores.tolist() == pytest.approx([x[0].mean(), x[5].mean()])


def test_identical_systems_give_p_one():
    x = np.random.default_rng(0).normal(size=(3, 8))
    x[1] = x[0]
    res = me.compare_systems(_set({"x": x}), "x", n_resamples=100, rng=0, correction="none")
    assert res.pvalues[0] == 1.0
    res = me.compare_systems(_set({"x": x}), "x", test="randomization", n_resamples=100, rng=0, correction="none")
    assert res.pvalues[0] == 1.0


def test_same_seed_same_result_and_shared_draws(tiny_scoreset):
    a = me.compare_systems(tiny_scoreset, "a", rng=7, n_resamples=200)
    b = me.compare_systems(tiny_scoreset, "a", rng=7, n_resamples=200)
    np.testing.assert_array_equal(a.samples, b.samples)
    assert "seed:7" in str(a.signature)
    # one set of draws for every pair: delta_s of (0, 2) = delta_s(0, 1) + delta_s(1, 2)
    index = {pair: p for p, pair in enumerate(a.pairs)}
    np.testing.assert_allclose(a.samples[index["s0", "s2"]],
                               a.samples[index["s0", "s1"]] + a.samples[index["s1", "s2"]], atol=1e-12)


def test_missing_cells_use_common_inputs_and_no_common_input_is_nan():
    x = np.array([[1.0, 2.0, np.nan, 4.0], [0.0, np.nan, 1.0, 1.0], [np.nan, np.nan, 5.0, np.nan]])
    ds = _set({"x": x})
    with pytest.warns(me.DegenerateWarning, match="no input in common"):
        res = me.compare_systems(ds, "x", n_resamples=20, rng=0)
    frame = res.to_frame()
    assert frame.loc[0, "n_used"] == 2 and frame.loc[0, "delta"] == pytest.approx((1 + 4) / 2 - (0 + 1) / 2)
    assert np.isnan(res.deltas[1]) and np.isnan(res.pvalues[1])  # s0 and s2 share no input
    assert not res.significant[1]


# -- approximate randomization ------------------------------------------------------------------------

def test_randomization_pvalue_is_c_plus_one_over_r_plus_one(tiny_scoreset):
    res = me.compare_systems(tiny_scoreset, "a", test="randomization", n_resamples=499, rng=1, correction="none")
    for p in range(len(res.pairs)):
        c = np.sum(np.abs(res.samples[p]) >= abs(res.deltas[p]) * (1 - 1e-12))
        assert res.pvalues[p] == pytest.approx((c + 1) / (499 + 1))


def test_randomization_exact_matches_brute_force_enumeration():
    x = np.array([[0.9, 0.4, 0.7, 0.3, 0.8, 0.6, 0.5], [0.2, 0.5, 0.1, 0.4, 0.3, 0.6, 0.2]])
    ds = _set({"x": x})
    res = me.compare_systems(ds, "x", test="randomization", exact=True, correction="none")
    d = x[0] - x[1]
    observed = d.mean()
    extreme = 0
    for signs in itertools.product([1, -1], repeat=d.size):  # all 2^7 ways to swap the pairs
        extreme += abs(np.mean(np.array(signs) * d)) >= abs(observed) - 1e-12
    assert res.n_resamples == 2 ** 7
    assert res.pvalues[0] == pytest.approx(extreme / 2 ** 7)
    approx = me.compare_systems(ds, "x", test="randomization", n_resamples=20000, rng=0, correction="none")
    assert approx.pvalues[0] == pytest.approx(extreme / 2 ** 7, abs=0.01)


# -- corpus-level metrics: BLEU on sufficient statistics ---------------------------------------------

HYPS = {
    "a": ["the cat sat on the mat", "a quick brown fox jumps", "it is raining today", "we like green tea"],
    "b": ["the cat is on a mat", "the fast brown fox jumped", "today it rains", "we love tea"],
    "c": ["cat mat", "fox", "rain", "tea"],
}
REFS = [["the cat sat on a mat", "a quick brown fox jumped", "it is raining today", "we like green tea a lot"]]


def test_bleu_statistics_reproduce_sacrebleu_corpus_bleu():
    sacrebleu = pytest.importorskip("sacrebleu")
    stat = me.BleuStatistic()
    corpus = me.CorpusScores.from_texts(stat, HYPS, REFS)
    assert corpus.statistics.shape == (3, 4, 10)
    for i, system in enumerate(HYPS):
        expected = sacrebleu.corpus_bleu(HYPS[system], REFS).score
        assert stat.aggregate(corpus.statistics[i].sum(axis=0)) == pytest.approx(expected, abs=1e-12)
    res = me.compare_systems(corpus, n_resamples=100, rng=0)
    assert res.scorer == "bleu" and res.scores[0] == pytest.approx(sacrebleu.corpus_bleu(HYPS["a"], REFS).score)
    # the resampled corpus BLEU is recomputed from summed statistics, not averaged over sentences
    weights = np.random.default_rng(0).integers(0, 4, size=(100, 4))
    counts = np.stack([np.bincount(w, minlength=4) for w in weights])
    expected = stat.aggregate(counts @ corpus.statistics[0]) - stat.aggregate(counts @ corpus.statistics[1])
    np.testing.assert_allclose(res.samples[0], expected, atol=1e-9)
    rand = me.compare_systems(corpus, test="randomization", exact=True, correction="none")
    assert rand.n_resamples == 16 and 0 < rand.pvalues[0] <= 1


def test_corpus_scores_validation():
    with pytest.raises(me.ParameterError) as info:
        me.CorpusScores.from_texts(me.BleuStatistic(), {"a": ["x", "y"]}, [["x"]])
    assert str(info.value) == "`hypotheses` and `references` must all have one length per input; got lengths [1, 2]."
    with pytest.raises(me.ParameterError) as info:
        me.CorpusScores.from_texts(object(), {"a": ["x"]}, [["x"]])
    assert str(info.value) == "`statistic` must implement CorpusStatistic; got object."


def test_mean_statistic_ignores_missing_items():
    stats = MeanStatistic.from_scores([1.0, np.nan, 3.0])
    assert MeanStatistic().aggregate(stats.sum(axis=0)) == 2.0


# -- verdicts and their agreement ---------------------------------------------------------------------

def test_weighted_f1_matches_the_sklearn_definition():
    truth = ["better", "better", "tie", "worse", "tie", "tie"]
    pred = ["better", "tie", "tie", "better", "worse", "tie"]
    # per class: better P=1/2 R=1/2 F=1/2 (n=2); worse P=0 R=0 F=0 (n=1); tie P=2/3 R=2/3 F=2/3 (n=3)
    assert weighted_f1(truth, pred) == pytest.approx((2 * 0.5 + 1 * 0 + 3 * 2 / 3) / 6)
    assert confusion_matrix(truth, pred).tolist() == [[1, 0, 1], [1, 0, 0], [0, 1, 2]]
    assert weighted_f1(truth, truth) == 1.0
    assert np.isnan(weighted_f1([], []))
    assert verdict_labels(np.array([1.0, -1.0, 1.0, np.nan]), np.array([0.01, 0.01, 0.2, np.nan]), 0.05).tolist() \
        == ["better", "worse", "tie", "undefined"]


def _verdict_set():
    """Systems with known verdicts: s0 = s1 (identical), s2 far above both; metrics agree or invert."""
    rng = np.random.default_rng(0)
    base = rng.normal(size=30)
    human = np.stack([base, base, base + 10.0])
    return _set({"human": human, "same": human * 2 + 1, "inverted": -human, "flat": np.zeros((3, 30)) + base})


@pytest.mark.parametrize("test", ["bootstrap", "randomization"])
def test_verdicts_on_a_constructed_case(test):
    ds = _verdict_set()
    res = me.system_verdicts(ds, ["same", "inverted", "flat"], "human", test=test, n_resamples=300, rng=0)
    assert res.pairs == (("s0", "s1"), ("s0", "s2"), ("s1", "s2"))
    assert list(res.human_verdicts) == ["tie", "worse", "worse"]
    assert list(res.metric_verdicts[0]) == ["tie", "worse", "worse"]
    assert list(res.metric_verdicts[1]) == ["tie", "better", "better"]
    assert list(res.metric_verdicts[2]) == ["tie", "tie", "tie"]
    assert res.f1[0] == 1.0
    assert res.f1[1] == pytest.approx(1 / 3)  # only the tie is right: F1_tie = 1 (n=1), F1_worse = 0 (n=2)
    assert res.f1[2] == pytest.approx((1 * 0.5 + 2 * 0) / 3)  # tie: P=1/3, R=1 -> F1=1/2; worse: 0
    assert res.confusion[1].tolist() == [[0, 0, 0], [2, 0, 0], [0, 0, 1]]
    assert res.to_frame()["f1"].tolist() == pytest.approx(res.f1.tolist())


def test_verdict_f1_is_deterministic_for_a_seed(shared_data):
    ds = me.load_dataset("realsumm")
    metrics = ["rouge-1.recall", "rouge-2.recall"]
    a = me.system_verdicts(ds, metrics, "litepyramid.recall", n_resamples=200, rng=11)
    b = me.system_verdicts(ds, metrics, "litepyramid.recall", n_resamples=200, rng=11)
    np.testing.assert_array_equal(a.f1, b.f1)
    np.testing.assert_array_equal(a.confusion, b.confusion)
    assert 0.5 < a.f1[1] <= 1 and a.n_used.tolist() == [276, 276]
    assert "seed:11" in str(a.signature)


def test_system_verdicts_validation(tiny_scoreset):
    with pytest.raises(me.ParameterError) as info:
        me.system_verdicts(tiny_scoreset, ["a"], None)
    assert str(info.value) == "`human` must name the human scorer; got None."
    with pytest.raises(me.ParameterError) as info:
        me.system_verdicts(tiny_scoreset, ["a", "a"], "human")
    assert str(info.value) == "`metrics` must not repeat a scorer; got ['a', 'a']."
    with pytest.raises(me.ParameterError) as info:
        me.system_verdicts(tiny_scoreset, ["a"], "human", confidence_level=1.5)
    assert str(info.value) == "`confidence_level` must be a number in (0, 1); got 1.5."


def test_cli_systems_and_verdicts(tmp_path):
    from metaeval.cli.main import main

    out = tmp_path / "systems.csv"
    assert main(["systems", "--dataset", "realsumm", "--system", "bart_out", "--system", "t5_out_11B",
                 "--n-resamples", "100", "--format", "csv", "--output", str(out)]) == 0
    assert out.read_text().startswith("system_a,system_b,score_a")
    out = tmp_path / "verdicts.json"
    assert main(["verdicts", "--dataset", "realsumm", "--metric", "rouge-2.recall", "--n-resamples", "50",
                 "--format", "json", "--output", str(out)]) == 0
    assert '"f1"' in out.read_text()
    assert main(["systems", "--dataset", "realsumm", "--test", "bootstrap", "--exact"]) == 2
