"""Coverage and power simulations (Deutsch, Dror & Roth 2021, Sec. 5) and the degraded ROUGE generator."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import metaeval as me
from metaeval.stats.kernels.pearson.power import boot_pearson, perm_pearson
from metaeval.analyses.power import _swap_bits
from metaeval.metrics.degraded import DegradedRouge, tokenize
from metaeval.stats.resampling.bootstrap import bootstrap_samples
from metaeval.stats.significance.permutation import reference_deltas as _reference_batch, standardize
from metaeval.stats.resampling.draws import PermutationDraws, bootstrap_draws

CANDIDATES = ["the cat sat on the mat the end", "a dog barked at the cat", "nothing here matches"]
REFERENCES = [["the cat was on the mat"], ["the dog barked", "a cat and a dog"], ["something else"]]


# -- degraded ROUGE ------------------------------------------------------------------------------------

def _recall(tokens, refs):
    scores = []
    for ref in refs:
        rc = Counter(tokenize(ref, "simple"))
        cc = Counter(tokens)
        scores.append(sum(min(n, rc[t]) for t, n in cc.items()) / sum(rc.values()))
    return float(np.mean(scores))


def test_full_degraded_rouge_is_rouge1_recall():
    rouge = DegradedRouge(CANDIDATES, REFERENCES, tokenizer="simple")
    expected = [_recall(tokenize(c, "simple"), r) for c, r in zip(CANDIDATES, REFERENCES)]
    np.testing.assert_allclose(rouge.full(), expected)
    np.testing.assert_array_equal(rouge.scores(1.0, 3, 0), np.tile(rouge.full(), (3, 1)))


def test_degraded_rouge_keeps_exactly_floor_p_n_tokens_uniformly():
    rouge = DegradedRouge(["a b c d"], [["a b"]], tokenizer="simple")
    assert rouge.n_kept(0.5).tolist() == [2]
    scores = rouge.scores(0.5, 6000, 0)[:, 0]
    # 2 of 4 tokens kept: matches with {a, b} are 0 (1/6), 1 (4/6) or 2 (1/6) -> recall 0, 0.5, 1
    values, counts = np.unique(scores, return_counts=True)
    assert values.tolist() == [0.0, 0.5, 1.0]
    np.testing.assert_allclose(counts / 6000, [1 / 6, 4 / 6, 1 / 6], atol=0.02)
    np.testing.assert_array_equal(rouge.scores(0.5, 50, 9), rouge.scores(0.5, 50, 9))


def test_degraded_rouge_validation():
    with pytest.raises(me.ParameterError) as info:
        DegradedRouge(["a"], [[]], tokenizer="simple")
    assert str(info.value) == "`references[0]` must be a non-empty list of texts; got []."
    with pytest.raises(me.ParameterError) as info:
        DegradedRouge(["a"], [["a"]], tokenizer="rouge").scores(0.5, 1, 0)
    assert str(info.value) == "`tokenizer` must be one of 'rouge155', 'simple'; got 'rouge'."
    with pytest.raises(me.ParameterError) as info:
        DegradedRouge(["a"], [["a"]], tokenizer="simple").scores(0.0, 1, 0)
    assert str(info.value) == "`proportion` must be a number in (0, 1]; got 0.0."


# -- fused Pearson kernels of the power simulation equal the generic stats path -----------------------

@pytest.mark.parametrize("level", ["system", "summary"])
def test_power_kernels_equal_the_reference(level):
    rng = np.random.default_rng(2)
    z = np.round(rng.normal(size=(9, 12)) * 2) / 3  # tie-heavy, like averaged Likert scores
    x = z + rng.normal(size=z.shape)
    y = z + 2 * rng.normal(size=z.shape)
    xs, ys = standardize(x), standardize(y)
    bits = _swap_bits(9, 12, 200, np.random.default_rng(0))
    draws = PermutationDraws("both", 9, 12, bits.astype(bool).transpose(1, 2, 0))
    px, py = perm_pearson(xs, ys, z, bits, level)
    rx, ry = _reference_batch(xs, ys, z, draws, slice(None), level, "pearson", "skip", 0.0)
    np.testing.assert_allclose(px, rx, atol=1e-12)
    np.testing.assert_allclose(py, ry, atol=1e-12)
    boot = bootstrap_draws(9, 12, method="both", n_resamples=200, rng=1)
    sx, sy = boot_pearson(x, y, z, boot, level)
    kw = dict(level=level, coefficient="pearson", draws=boot, engine="reference")
    np.testing.assert_allclose(sx, bootstrap_samples(x, z, **kw), atol=1e-12)
    np.testing.assert_allclose(sy, bootstrap_samples(y, z, **kw), atol=1e-12)


# -- coverage --------------------------------------------------------------------------------------------

def test_coverage_small_run_is_reproducible(shared_data):
    ds = me.load_dataset("summeval")
    kw = dict(n_trials=8, n_resamples=100, rng=5)
    a = me.simulate_coverage(ds, "qa-eval.f1", "expert.relevance", **kw)
    b = me.simulate_coverage(ds, "qa-eval.f1", "expert.relevance", **kw)
    np.testing.assert_array_equal(a.counts, b.counts)
    assert a.counts.sum(axis=-1).max() == 8
    assert a.table().shape == (4, 2)
    assert set(a.to_frame()["method"]) == {"fisher", "boot-systems", "boot-inputs", "boot-both"}
    assert "trials:8" in str(a.signature) and "seed:5" in str(a.signature)


def test_coverage_with_too_few_systems_is_nan(tiny_scoreset):
    ds = tiny_scoreset.subset(systems=["s0", "s1", "s2", "s3", "s4"])
    with pytest.warns(me.DegenerateWarning, match="each half must hold 3 systems"):
        res = me.simulate_coverage(ds, "a", "human", n_trials=3, n_resamples=10, rng=0)
    assert np.isnan(res.coverage).all()


def test_coverage_validation(tiny_scoreset):
    with pytest.raises(me.ParameterError) as info:
        me.simulate_coverage(tiny_scoreset, "a", "human", levels=["global"])
    assert str(info.value) == "`levels` must hold 'system' or 'summary'; got 'global'."
    with pytest.raises(me.ParameterError) as info:
        me.simulate_coverage(tiny_scoreset, "a", "human", methods=["bca"])
    assert str(info.value) == "`methods` must be one of 'fisher', 'boot-systems', 'boot-inputs', 'boot-both'; got 'bca'."
    with pytest.raises(me.ParameterError) as info:
        me.simulate_coverage(tiny_scoreset, "a", "human", coefficients=["accuracy"])
    assert str(info.value).startswith("`coefficients` must be one of 'pearson', 'spearman'")
    with pytest.raises(me.ParameterError) as info:
        me.simulate_coverage(tiny_scoreset, "a", "human", n_trials=0)
    assert str(info.value) == "`n_trials` must be an integer >= 1; got 0."


@pytest.mark.slow
@pytest.mark.parametrize("name,human", [("summeval", "expert.relevance"), ("realsumm", "litepyramid.recall")])
def test_coverage_reproduces_the_pattern_of_table_1(shared_data, name, human):
    res = me.simulate_coverage(me.load_dataset(name), "qa-eval.f1", human, n_trials=1000, rng=0)
    table = res.table()
    gap = (table - 0.95).abs().mean(axis=1)  # mean distance to 0.95 over the two levels
    assert gap.idxmin() == "boot-both"
    assert table.mean(axis=1).idxmin() == "boot-inputs"
    assert table.loc["fisher", "summary"] > 0.99  # Fisher is far too wide at the summary level


# -- power -----------------------------------------------------------------------------------------------

def _texts(ds):
    candidates = {s: {i: f"alpha {'beta ' * (a % 3)}word{(a + k) % 3} gamma{a % 2} x{a} y{k}"
                      for k, i in enumerate(ds.inputs)} for a, s in enumerate(ds.systems)}
    references = {i: ["alpha beta beta gamma1 delta", "beta word1 word2"] for i in ds.inputs}
    return candidates, references


def test_power_small_run(tiny_scoreset):
    candidates, references = _texts(tiny_scoreset)
    res = me.simulate_power(tiny_scoreset, "human", candidates=candidates, references=references,
                            proportions=(0.5, 1.0), n_trials=3, n_resamples=50, tokenizer="simple", rng=0)
    assert res.rejections.shape == (2, 3, 2)
    assert (res.power[:, :, 1] == 0).all()  # at p = 1 the degraded metric is ROUGE-1 itself: no test rejects
    assert res.table("summary").shape == (3, 2)
    again = me.simulate_power(tiny_scoreset, "human", candidates=candidates, references=references,
                              proportions=(0.5, 1.0), n_trials=3, n_resamples=50, tokenizer="simple", rng=0)
    np.testing.assert_array_equal(res.rejections, again.rejections)


def test_power_validation(tiny_scoreset):
    candidates, references = _texts(tiny_scoreset)
    kw = dict(candidates=candidates, references=references, tokenizer="simple")
    with pytest.raises(me.ParameterError) as info:
        me.simulate_power(tiny_scoreset, "human", proportions=(0.0,), **kw)
    assert str(info.value) == "`proportions` must be numbers in (0, 1]; got [0.0]."
    with pytest.raises(me.ParameterError) as info:
        me.simulate_power(tiny_scoreset, "human", coefficient="kendall", **kw)
    assert str(info.value) == "`tests` must not include 'williams' unless coefficient is 'pearson'; got 'kendall-b'."
    with pytest.raises(me.ParameterError) as info:
        me.simulate_power(tiny_scoreset, "human", candidates={}, references=references, tokenizer="simple")
    assert str(info.value) == "`candidates` must hold every system of the ScoreSet; got none for 's0'."


def test_load_texts_and_cli(shared_data, tmp_path):
    candidates, references = me.load_texts("realsumm", directory=shared_data)
    ds = me.load_dataset("realsumm")
    assert set(candidates) == set(ds.systems) and set(references) == set(ds.inputs)
    from metaeval.cli.main import main

    out = tmp_path / "coverage.csv"
    assert main(["simulate", "coverage", "--dataset", "summeval", "--metric", "qa-eval.f1", "--n-trials", "3",
                 "--n-resamples", "50", "--format", "csv", "--output", str(out)]) == 0
    assert out.read_text().startswith("level,coefficient,method,coverage")
    assert main(["simulate", "coverage", "--dataset", "summeval", "--n-trials", "3"]) == 2


def test_coverage_with_all_tied_human_scores_is_nan(tiny_scoreset):
    ds = me.ScoreSet.from_matrices({"a": tiny_scoreset.matrix("a"), "human": np.ones((12, 6))}, humans=["human"])
    with pytest.warns(me.DegenerateWarning, match="undefined and left out of the coverage"):
        res = me.simulate_coverage(ds, "a", "human", n_trials=2, n_resamples=20, rng=0)
    assert np.isnan(res.coverage).all() and (res.to_frame()["n_undefined"] == 2).all()
