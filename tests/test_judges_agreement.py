"""Judges against humans (accuracy, kappa, alpha, ranking tau, judge-vs-judge tests), audits and the alt-test."""
from __future__ import annotations

import numpy as np
import pytest

import metaeval as me
from metaeval.errors import DegenerateDataError, ParameterError
from metaeval.judges.agreement import key_verdicts
from metaeval.judges.alt_test import alt_test_arrays
from metaeval.judges.audit import logistic_fit


def _comparisons(rows, systems=("A", "B", "C"), judges=("h1", "h2", "h3", "llm"), repeat=None, lengths=None):
    a = np.array(rows)
    extra = {}
    if lengths is not None:
        extra = {"first_length": lengths[0], "second_length": lengths[1]}
    return me.make_comparisons(systems=systems, inputs=[f"q{k}" for k in range(int(a[:, 0].max()) + 1)],
                               judges=judges, input=a[:, 0], first=a[:, 1], second=a[:, 2], judge=a[:, 3],
                               verdict=a[:, 4], repeat=repeat, **extra)


def test_key_verdicts_vote_and_orient():
    # input 0, pair (A, B): h1 says A (first) shown A-B, and A again shown B-A (second): A; a 1-1 split is a tie
    c = _comparisons([(0, 0, 1, 0, 0), (0, 1, 0, 0, 1), (0, 0, 2, 0, 0), (0, 2, 0, 0, 0)])
    keys, verdict = key_verdicts(c)
    assert keys.tolist() == [0, 1] and verdict.tolist() == [0, 2]


def test_agreement_statistics_against_sklearn_and_krippendorff():
    cohen_kappa_score = pytest.importorskip("sklearn.metrics").cohen_kappa_score
    krippendorff = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(3)
    rows = []
    for q in range(30):
        for a, b in ((0, 1), (0, 2), (1, 2)):
            truth = rng.integers(0, 3)
            rows.append((q, a, b, 0, truth))
            rows.append((q, a, b, 3, truth if rng.random() < 0.6 else rng.integers(0, 3)))
    c = _comparisons(rows)
    r = me.judge_agreement(c, "llm", humans=["h1"], n_resamples=0, n_permutations=10)
    row = r.table.iloc[0]
    human = np.array([v for (_, _, _, j, v) in rows if j == 0])
    judge = np.array([v for (_, _, _, j, v) in rows if j == 3])
    assert row["keys"] == 90
    assert row["accuracy"] == pytest.approx(np.mean(human == judge))
    decisive = (human != 2) & (judge != 2)
    assert row["accuracy_no_ties"] == pytest.approx(np.mean(human[decisive] == judge[decisive]))
    # every key counted in both orientations (docs/judges.md): sklearn's and krippendorff's on the doubled rows
    mirror = lambda v: np.where(v == 2, 2, 1 - v)  # noqa: E731
    judge2, human2 = np.concatenate([judge, mirror(judge)]), np.concatenate([human, mirror(human)])
    assert row["kappa"] == pytest.approx(cohen_kappa_score(judge2, human2), abs=1e-12)
    ref = krippendorff.alpha(reliability_data=np.vstack([judge2, human2]).astype(float),
                             level_of_measurement="nominal")
    assert row["alpha"] == pytest.approx(ref, abs=1e-12)


def _file_rows(rng, n_inputs=25):
    """Rows (input, first, second, judge, verdict) of 2 humans and a judge over 4 systems, both orders."""
    rows = []
    for q in range(n_inputs):
        for a, b in ((0, 1), (0, 2), (1, 2), (2, 3), (0, 3)):
            truth = rng.integers(0, 3)
            for judge in (0, 1, 3):
                noisy = truth if rng.random() < 0.6 else rng.integers(0, 3)
                first, second = (a, b) if rng.random() < 0.5 else (b, a)
                v = noisy if (first, second) == (a, b) or noisy == 2 else 1 - noisy
                rows.append((q, first, second, judge, v))
    return rows


def _agreement_of(rows, systems=("A", "B", "C", "D")):
    a = np.array(rows)
    inputs = sorted(set(int(q) for q in a[:, 0]))
    # systems and inputs coded in order of first appearance, as the reader does
    order = list(dict.fromkeys(int(x) for pair in a[:, 1:3] for x in pair))
    code = {s: k for k, s in enumerate(order)}
    c = me.make_comparisons(systems=[systems[s] for s in order], inputs=[f"q{q}" for q in inputs],
                            judges=("h1", "h2", "h3", "llm"), input=a[:, 0],
                            first=[code[int(x)] for x in a[:, 1]], second=[code[int(x)] for x in a[:, 2]],
                            judge=a[:, 3], verdict=a[:, 4])
    t = me.judge_agreement(c, "llm", humans=["h1", "h2"], n_resamples=0, n_permutations=10, rng=0).table.iloc[0]
    return {k: t[k] for k in ("accuracy", "accuracy_no_ties", "kappa", "alpha", "vote_agreement",
                              "vote_agreement_no_ties")}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kappa_and_alpha_do_not_depend_on_row_order_or_column_order(seed):
    """Issue 39.1: with the verdicts oriented by the order of first appearance, kappa moved 0.070 -> 0.191 when
    the rows were sorted; counting each key both ways makes every statistic invariant."""
    rng = np.random.default_rng(seed)
    rows = _file_rows(rng)
    base = _agreement_of(rows)
    shuffled = [rows[k] for k in rng.permutation(len(rows))]
    swapped = [(q, s, f, j, v if v == 2 else 1 - v) for (q, f, s, j, v) in rows]  # the same data, columns swapped
    mirrored = [(q, s, f, j, v) for (q, f, s, j, v) in rows]  # the columns swapped, verdicts kept: a mirror image
    for other in (shuffled, sorted(rows, key=lambda r: (r[1], r[2])), swapped, mirrored,
                  [swapped[k] for k in rng.permutation(len(rows))]):
        got = _agreement_of(other)
        for name, value in base.items():
            assert got[name] == pytest.approx(value, abs=1e-12), name


def test_vote_level_agreement_as_fastchat_counts_it():
    """MT-Bench's agreement (FastChat compute_agreement.py): every (judge verdict, human vote) pair of a key,
    and every pair of human votes of a key; S2 leaves out the pairs with a tie on either side."""
    # key (q0, A-B): humans vote A, A, tie; the judge says A. key (q1, A-B): humans B, A; the judge ties.
    rows = [(0, 0, 1, 0, 0), (0, 0, 1, 1, 0), (0, 1, 0, 2, 2), (0, 0, 1, 3, 0),
            (1, 0, 1, 0, 1), (1, 1, 0, 1, 1), (1, 0, 1, 3, 2)]
    c = _comparisons(rows, systems=("A", "B"))
    r = me.judge_agreement(c, "llm", humans=["h1", "h2", "h3"], n_resamples=0, n_permutations=10, rng=0)
    row = r.table.iloc[0]
    # S1: q0: A vs (A, A, tie) -> 2 of 3; q1: tie vs (B, A) -> 0 of 2
    assert row["vote_pairs"] == 5 and row["vote_agreement"] == pytest.approx(2 / 5)
    # S2: q0: 2 of 2 decisive votes; q1: the judge ties -> left out
    assert row["vote_pairs_no_ties"] == 2 and row["vote_agreement_no_ties"] == 1.0
    # humans: q0 pairs (A,A) (A,t) (A,t) -> 1 of 3; q1 (B,A) -> 0 of 1; S2: q0 1 of 1, q1 0 of 1
    h = r.human_agreement
    assert h["vote_pairs"] == 4 and h["vote_agreement"] == pytest.approx(1 / 4)
    assert h["vote_pairs_no_ties"] == 2 and h["vote_agreement_no_ties"] == pytest.approx(1 / 2)
    # the majority statistics: q0 humans' majority A = judge; q1 humans split evenly (B, A): the judge's tie
    # names neither side, 0 under MT-Bench's half rule (the default), agreement under even_split='tie'
    assert row["accuracy"] == 0.5
    as_tie = me.judge_agreement(c, "llm", humans=["h1", "h2", "h3"], n_resamples=0, n_permutations=10, rng=0,
                                even_split="tie")
    assert as_tie.table.iloc[0]["accuracy"] == 1.0
    assert as_tie.table.iloc[0]["vote_agreement"] == row["vote_agreement"]  # no even-split rule at vote level
    assert "human_agreement" in r.to_dict()


def test_ranking_agreement_and_judge_tests_on_summeval():
    ds = me.load_dataset("summeval")
    c = me.comparisons_from_scores(ds, ["expert.relevance", "rouge-2.recall", "rouge-1.recall"], annotators=True)
    humans = ["expert.relevance/1", "expert.relevance/2", "expert.relevance/3"]
    r = me.judge_agreement(c, ["rouge-2.recall", "rouge-1.recall"], humans=humans, n_resamples=100,
                           n_permutations=200, rng=0)
    table = r.table.set_index("judge")
    assert table.loc["rouge-2.recall", "keys"] == 12000
    for judge in table.index:
        row = table.loc[judge]
        assert row["accuracy_low"] <= row["accuracy"] <= row["accuracy_high"]
        assert row["ranking_tau_low"] <= row["ranking_tau"] <= row["ranking_tau_high"]
    # the ranking tau is Kendall between the two Bradley-Terry rankings of the full data
    human_rank = me.rank_systems(c, judges=humans, n_resamples=0)
    judge_rank = me.rank_systems(c, judges="rouge-2.recall", n_resamples=0)
    order = list(human_rank.systems)
    from scipy.stats import kendalltau

    expected = kendalltau(human_rank.scores, [judge_rank.scores[judge_rank.systems.index(s)] for s in order])[0]
    assert table.loc["rouge-2.recall", "ranking_tau"] == pytest.approx(expected)
    assert r.pvalues.shape == (2, 2) and np.isnan(np.diag(r.pvalues)).all()
    assert set(r.table["rank"]) <= {1, 2}


def test_agreement_errors():
    c = _comparisons([(0, 0, 1, 0, 0), (0, 0, 1, 3, 0)])
    with pytest.raises(ParameterError, match=r"`humans` must name judges of the comparisons \('h1', 'h2', 'h3',"
                                             r" 'llm'\); got 'nobody'."):
        me.judge_agreement(c, "llm", humans=["nobody"])
    with pytest.raises(ParameterError, match="`judges` and `humans` must not share a name; got 'h1' in both."):
        me.judge_agreement(c, ["h1"], humans=["h1"])


def test_alt_test_hand_case():
    # 3 annotators, 4 instances; the judge always equals annotator 1
    humans = np.array([[0, 1, 2, 0], [0, 1, 1, 0], [1, 1, 2, 0]], dtype=float)
    judge = np.array([0, 1, 2, 0], dtype=float)
    rho_f, rho_h, n, t, p, p_by, rejected, tested = alt_test_arrays(judge, humans, epsilon=0.2, alpha=0.05)
    # leaving annotator 1 out: the judge and annotator 1 agree with the others equally everywhere: W^f = W^h = 1
    assert rho_f[0] == 1.0 and rho_h[0] == 1.0 and n.tolist() == [4, 4, 4]
    assert p[0] == 0.0  # every d_i = 0 < epsilon
    # leaving annotator 2 out: instance 3 - others say (2, 2), the judge 2, annotator 2 says 1: judge wins
    assert rho_f[1] == 1.0 and rho_h[1] == 0.75
    # leaving annotator 3 out: instance 1 - others (0, 0), judge 0, annotator 3 says 1
    assert rho_f[2] == 1.0 and rho_h[2] == 0.75
    from scipy.stats import ttest_1samp

    d = np.array([0, 0, -1, 0])
    assert p[1] == pytest.approx(ttest_1samp(d - 0.2, 0.0, alternative="less").pvalue)
    from statsmodels.stats.multitest import multipletests

    np.testing.assert_allclose(p_by, multipletests(p, method="fdr_by")[1])


def test_alt_test_on_summeval_metrics_and_errors():
    ds = me.load_dataset("summeval")
    c = me.comparisons_from_scores(ds, ["expert.relevance", "rouge-2.recall"], annotators=True)
    humans = ["expert.relevance/1", "expert.relevance/2", "expert.relevance/3"]
    strict = me.alt_test(c, "rouge-2.recall", humans=humans, epsilon=0.1)
    lenient = me.alt_test(c, "rouge-2.recall", humans=humans, epsilon=0.2)
    assert lenient.winning_rate >= strict.winning_rate
    assert lenient.advantage_probability == strict.advantage_probability
    assert (strict.table["rho_judge"] < strict.table["rho_human"]).all()  # ROUGE-2 is no expert
    assert strict.verdict.startswith("rouge-2.recall cannot replace the annotators: it wins against")
    with pytest.raises(ParameterError) as e:
        me.alt_test(c, "rouge-2.recall", humans=humans[:1])
    assert str(e.value) == ("`humans` must name at least 2 annotators (the test leaves one out and compares with the"
                            " rest); got 1.")
    with pytest.raises(ParameterError, match=r"`epsilon` must be a number in \[0, 1\); got 1.5."):
        me.alt_test(c, "rouge-2.recall", humans=humans, epsilon=1.5)
    apart = _comparisons([(0, 0, 1, 0, 0), (0, 0, 1, 1, 0), (1, 0, 2, 3, 1)])
    with pytest.raises(DegenerateDataError, match="has no instance"):
        me.alt_test(apart, "llm", humans=["h1", "h2"])


def test_logistic_fit_against_statsmodels():
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(0)
    x = rng.normal(size=400)
    groups = np.repeat(np.arange(80), 5)
    y = (rng.random(400) < 1 / (1 + np.exp(-(0.2 + 0.8 * x)))).astype(float)
    beta, model_cov, robust = logistic_fit(x, y, groups)
    X = sm.add_constant(x)
    fit = sm.Logit(y, X).fit(disp=0)
    np.testing.assert_allclose(beta, fit.params, atol=1e-8)
    np.testing.assert_allclose(model_cov, fit.cov_params(), rtol=1e-6)
    clustered = sm.Logit(y, X).fit(disp=0, cov_type="cluster", cov_kwds={"groups": groups})
    np.testing.assert_allclose(robust, clustered.cov_params(), rtol=1e-6)


def test_audit_measures_on_a_constructed_judge():
    rng = np.random.default_rng(1)
    rows, repeat, first_len, second_len = [], [], [], []
    for q in range(60):
        for a, b in ((0, 1), (0, 2), (1, 2)):
            for order in ((a, b), (b, a)):
                for rep in range(2):
                    # the judge prefers the first position 70% of the time, whatever the systems
                    rows.append((q, order[0], order[1], 3, 0 if rng.random() < 0.7 else 1))
                    repeat.append(rep)
                    la, lb = rng.integers(50, 300, 2)
                    first_len.append(la)
                    second_len.append(lb)
    c = _comparisons(rows, systems=("A", "B", "llm"), repeat=np.array(repeat),
                     lengths=(np.array(first_len, float), np.array(second_len, float)))
    audit = me.judge_audit(c, "llm", n_resamples=100, rng=0)
    row = audit.table.iloc[0]
    assert row["swap_groups"] == 180 and row["repeat_groups"] == 360
    assert row["first_rate"] == pytest.approx(0.7, abs=0.05)
    assert row["preference_fairness"] < -0.2  # primacy
    assert row["position_consistency_low"] <= row["position_consistency"] <= row["position_consistency_high"]
    assert row["length_effect_low"] < 0 < row["length_effect_high"]  # lengths were random: no length effect
    assert row["position_effect"] > 0.5
    # the judge 'llm' is also a system, but no other judge compared its pairs
    assert "llm: self-preference cannot be measured: no other judge compared the judge's own systems." in audit.notes
    # repeats: the share counts every repeat; each query's majority verdict once gives another share (noted)
    assert any(note.startswith("llm: first chosen counts every repeat (720 comparisons of 360 queries): ")
               for note in audit.notes)


def test_self_preference():
    rng = np.random.default_rng(2)
    rows = []
    for q in range(80):
        for a, b in ((0, 2), (1, 2), (0, 1)):
            own = b == 2
            rows.append((q, a, b, 3, 1 if own and rng.random() < 0.9 else rng.integers(0, 2)))  # llm picks itself
            rows.append((q, a, b, 0, rng.integers(0, 2)))  # h1 is indifferent
    c = _comparisons(rows, systems=("A", "B", "llm"))
    audit = me.judge_audit(c, "llm", n_resamples=200, rng=0)
    row = audit.table.iloc[0]
    assert row["self_keys"] == 160
    assert row["self_preference"] == pytest.approx(0.45, abs=0.1)
    assert row["self_preference_low"] > 0.2


def test_audit_says_what_cannot_be_measured():
    ds = me.load_dataset("summeval")
    c = me.comparisons_from_scores(ds, ["rouge-2.recall", "rouge-1.recall"])
    audit = me.judge_audit(c, n_resamples=0)
    assert audit.notes == (
        "every judge: position measures not applicable: comparisons made from scores have no presentation order"
        " (first is the score file's system order).",
        "every judge: repetition stability cannot be measured: the comparisons have no repeat column.",
        "every judge: length bias cannot be measured: the comparisons have no length columns.",
        "every judge: self-preference not applicable: the judge is not one of the systems (name its family with"
        " families=, --judge-family JUDGE=SYSTEM).")
    assert "first_rate" not in audit.table  # no presentation order: no first-shown share either
    assert np.isnan(audit.table.get("position_consistency", np.full(2, np.nan))).all()


def test_benjamini_yekutieli_against_statsmodels():
    from statsmodels.stats.multitest import multipletests

    from metaeval.stats.significance.corrections import benjamini_yekutieli

    p = np.array([0.01, 0.04, 0.03, 0.005, 0.2, 0.0001, 0.7])
    np.testing.assert_allclose(benjamini_yekutieli(p), multipletests(p, method="fdr_by")[1])
    with_nan = benjamini_yekutieli([0.01, np.nan, 0.03])
    assert np.isnan(with_nan[1])
    np.testing.assert_allclose(with_nan[[0, 2]], multipletests([0.01, 0.03], method="fdr_by")[1])
    with pytest.raises(ParameterError, match=r"`pvalues` must be in \[0, 1\] \(or NaN\); got 1.5."):
        benjamini_yekutieli([1.5])


def _alt_test_by_the_definition(llm, humans, epsilon, score):
    """The alt-test as the paper defines it, one annotator and one instance at a time (dicts of annotations)."""
    from scipy.stats import ttest_1samp

    out = []
    for j, mine in humans.items():
        wf, wh = [], []
        for i, value in mine.items():
            others = [h[i] for name, h in humans.items() if name != j and i in h]
            if i not in llm or not others:
                continue
            sf, sh = score(llm[i], others), score(value, others)
            wf.append(float(sf >= sh))
            wh.append(float(sh >= sf))
        d = np.array(wh) - np.array(wf)
        p = ttest_1samp(d - epsilon, 0.0, alternative="less").pvalue if d.std() > 0 else float(d.mean() >= epsilon)
        out.append((np.mean(wf), np.mean(wh), len(d), p))
    return out


def test_alt_test_on_numeric_ratings_with_negative_rmse():
    """Issue 39.6: the authors' neg_rmse alignment on numeric ratings, against the definition computed one
    instance at a time; the humans are only those named."""
    rng = np.random.default_rng(5)
    n_sys, n_inp = 6, 12
    truth = rng.normal(size=(n_sys, n_inp))
    raters = truth[..., None] + rng.normal(scale=0.7, size=(n_sys, n_inp, 3))
    raters[rng.random(raters.shape) < 0.2] = np.nan
    llm = truth + rng.normal(scale=0.5, size=(n_sys, n_inp))
    ds = me.ScoreSet.from_matrices({"rating": raters, "llm": llm, "other": rng.normal(size=(n_sys, n_inp))},
                                 systems=[f"s{k}" for k in range(n_sys)], inputs=[f"q{k}" for k in range(n_inp)])
    c = me.comparisons_from_scores(ds, ["rating", "llm", "other"], annotators=True)
    r = me.alt_test(c, "llm", humans="rating/*", epsilon=0.1, alignment="neg-rmse", min_instances=10)
    assert list(r.table["annotator"]) == ["rating/1", "rating/2", "rating/3"]  # 'other' is no human
    cells = [(a, b) for a in range(n_sys) for b in range(n_inp)]
    humans = {k: {cell: raters[cell + (k,)] for cell in cells if np.isfinite(raters[cell + (k,)])} for k in range(3)}
    llm_d = {cell: llm[cell] for cell in cells}
    neg_rmse = lambda v, others: -np.sqrt(np.mean([(v - o) ** 2 for o in others]))  # noqa: E731
    expected = _alt_test_by_the_definition(llm_d, humans, 0.1, neg_rmse)
    for row, (rho_f, rho_h, n, p) in zip(r.table.to_dict("records"), expected):
        assert row["instances"] == n and row["rho_judge"] == pytest.approx(rho_f) and row["rho_human"] == pytest.approx(rho_h)
        assert row["pvalue"] == pytest.approx(p, rel=1e-9, abs=1e-15)
    assert r.signature.as_dict()["alignment"] == "neg-rmse"
    same = me.alt_test(c, "llm", humans="rating/*", epsilon=0.1, alignment=lambda v, o: -np.sqrt(np.mean((v - o) ** 2)),
                       min_instances=10)
    np.testing.assert_allclose(same.table["pvalue"], r.table["pvalue"])
    with pytest.raises(ParameterError, match=r"^`alignment` must be one of 'accuracy', 'neg-rmse' or a callable; got"
                                             r" 'rmse'.$"):
        me.alt_test(c, "llm", humans="rating/*", alignment="rmse")


def test_alt_test_skips_annotators_under_min_instances():
    rng = np.random.default_rng(1)
    rows = []
    for q in range(40):
        for a, b in ((0, 1), (0, 2), (1, 2)):
            truth = int(rng.integers(0, 3))
            for judge in (0, 1, 3):
                rows.append((q, a, b, judge, truth if rng.random() < 0.8 else int(rng.integers(0, 3))))
            if q < 5:
                rows.append((q, a, b, 2, truth))  # h3 annotates 15 keys only
    c = _comparisons(rows)
    r = me.alt_test(c, "llm", humans=["h1", "h2", "h3"], epsilon=0.2)
    assert r.skipped == ("h3",) and r.table["tested"].tolist() == [True, True, False]
    assert np.isnan(r.table["pvalue"].iloc[2])
    assert r.winning_rate == float(r.table["rejected"].iloc[:2].mean())
    assert "(1 annotator with fewer than 30 instances skipped)" in r.verdict
    with pytest.raises(ParameterError, match="`humans` must name the human annotators"):
        me.alt_test(c, "llm", humans=None)


def _length_judge(seed, effect=0.6, n_inputs=300):
    """A judge whose verdicts follow system strengths and a planted length effect (per sd of the difference)."""
    rng = np.random.default_rng(seed)
    strength = np.array([1.2, 0.4, 0.0, -0.9])
    rows, first_len, second_len = [], [], []
    for q in range(n_inputs):
        lengths = rng.normal(300, 80, 4)
        for a in range(4):
            for b in range(a + 1, 4):
                f, s = (a, b) if rng.random() < 0.5 else (b, a)
                z = (lengths[f] - lengths[s]) / (80 * np.sqrt(2))
                p = 1 / (1 + np.exp(-(strength[f] - strength[s] + effect * z)))
                rows.append((q, f, s, 0, 0 if rng.random() < p else 1))
                first_len.append(lengths[f])
                second_len.append(lengths[s])
    return _comparisons(rows, systems=("A", "B", "C", "D"), judges=("llm",),
                        lengths=(np.array(first_len), np.array(second_len)))


def test_length_effect_with_system_effects_against_statsmodels():
    """Issue 39.4d: the length effect adjusted for the systems compared (a planted 0.6 read as 0.38 without)."""
    sm = pytest.importorskip("statsmodels.api")
    from metaeval.judges.length_bias import system_design

    c = _length_judge(0)
    audit = me.judge_audit(c, n_resamples=0, rng=0)
    row = audit.table.iloc[0]
    decisive = c.verdict != 2
    diff = (c.first_length - c.second_length)[decisive]
    z = diff / np.std(diff, ddof=1)
    X = np.column_stack([np.ones(z.size), z, system_design(c.first[decisive], c.second[decisive])])
    y = (c.verdict[decisive] == 0).astype(float)
    fit = sm.Logit(y, X).fit(disp=0, cov_type="cluster", cov_kwds={"groups": c.input[decisive]})
    assert row["length_effect"] == pytest.approx(fit.params[1], abs=1e-8)
    se = fit.bse[1]
    assert row["length_effect_high"] - row["length_effect"] == pytest.approx(1.959963984540054 * se, rel=1e-6)
    assert row["length_effect_low"] < 0.6 < row["length_effect_high"]
    assert abs(row["length_effect"] - 0.6) < abs(row["length_effect_unadjusted"] - 0.6)
    assert "logistic-with-system-effects" in str(audit.signature)


def _decisive_judges(seed, bias=0.0, n_inputs=120):
    """A reference judge that ties often and an LLM judge 'llm' (also a system) that rarely ties; ``bias``
    shifts the LLM's verdicts towards its own system."""
    rng = np.random.default_rng(seed)
    strength = np.array([0.3, 0.0, -0.2])  # A, B, llm
    rows = []
    for q in range(n_inputs):
        for a, b in ((0, 2), (1, 2), (0, 1)):
            p = 1 / (1 + np.exp(-(strength[a] - strength[b])))
            for judge, tie in ((0, 0.45), (3, 0.05)):
                shift = bias if judge == 3 and b == 2 else 0.0
                u = rng.random()
                verdict = 2 if u < tie else (0 if rng.random() < p - shift else 1)
                rows.append((q, a, b, judge, verdict))
    return _comparisons(rows, systems=("A", "B", "llm"))


def test_self_preference_of_a_merely_decisive_judge_is_calibrated():
    """Issue 39.4a: a judge more decisive than the reference judges was flagged in 150 of 150 simulations;
    compared on the keys both decided, an unbiased judge is flagged about as often as the level allows."""
    flagged = 0
    for seed in range(30):
        row = me.judge_audit(_decisive_judges(seed), "llm", n_resamples=200, rng=seed).table.iloc[0]
        flagged += not (row["self_preference_low"] <= 0 <= row["self_preference_high"])
    assert flagged <= 5  # 30 unbiased judges at 95%: 1.5 expected
    biased = me.judge_audit(_decisive_judges(99, bias=0.25), "llm", n_resamples=200, rng=0).table.iloc[0]
    assert biased["self_preference_low"] > 0


def test_family_preference_from_a_map():
    c = _decisive_judges(1, bias=0.25)
    renamed = me.make_comparisons(systems=("A", "B", "gpt-4o"), inputs=c.inputs, judges=("h1", "h2", "h3", "gpt-4"),
                                  input=c.input, first=c.first, second=c.second, judge=c.judge, verdict=c.verdict)
    plain = me.judge_audit(renamed, "gpt-4", n_resamples=0, rng=0)
    assert "self-preference not applicable" in plain.notes[-1]
    family = me.judge_audit(renamed, "gpt-4", n_resamples=100, families={"gpt-4": ["gpt-4o"]}, rng=0)
    assert family.table.iloc[0]["self_preference"] > 0.1
    with pytest.raises(ParameterError, match=r"`families` must map a judge to systems of the comparisons \('A', 'B',"
                                             r" 'gpt-4o'\); got 'gpt-5' for 'gpt-4'."):
        me.judge_audit(renamed, "gpt-4", families={"gpt-4": "gpt-5"})


def test_audit_of_many_judges_notes_the_multiplicity():
    rng = np.random.default_rng(2)
    rows = [(q, f, s_, j, int(rng.integers(0, 3))) for q in range(40) for a, b in ((0, 1), (0, 2), (1, 2))
            for f, s_ in ((a, b), (b, a)) for j in (0, 3)]
    audit = me.judge_audit(_comparisons(rows), ["h1", "llm"], n_resamples=50, rng=0)
    assert ("4 intervals over 2 judges, each at 95% on its own: about 5% of them miss by chance; for all at once use"
            " confidence level 0.9875 (Bonferroni).") in audit.notes


def test_even_split_counts_half_or_a_tie():
    """Issue 39.2: MT-Bench counts agreeing with one side of an even split of the human votes as half an
    agreement (`even_split='half'`, the default); `'tie'` makes the humans' majority a tie."""
    # q0 (A-B): humans A, B (1-1 split), judge A; q1: humans A, B, tie (three-way), judge tie; q2: A, A, judge B
    rows = [(0, 0, 1, 0, 0), (0, 0, 1, 1, 1), (0, 0, 1, 3, 0),
            (1, 0, 1, 0, 0), (1, 0, 1, 1, 1), (1, 0, 1, 2, 2), (1, 0, 1, 3, 2),
            (2, 0, 1, 0, 0), (2, 0, 1, 1, 0), (2, 0, 1, 3, 1)]
    c = _comparisons(rows, systems=("A", "B"))
    half = me.judge_agreement(c, "llm", humans=["h1", "h2", "h3"], n_resamples=0, n_permutations=10, rng=0)
    tie = me.judge_agreement(c, "llm", humans=["h1", "h2", "h3"], n_resamples=0, n_permutations=10, rng=0,
                             even_split="tie")
    h, t = half.table.iloc[0], tie.table.iloc[0]
    assert h["accuracy"] == pytest.approx((1 / 2 + 1 / 3 + 0) / 3)
    assert t["accuracy"] == pytest.approx((0 + 1 + 0) / 3)
    # no ties: q0's two half rows are decisive (weight 1, 1/2 agreeing), q1's judge ties, q2 disagrees (weight 1)
    assert h["accuracy_no_ties"] == pytest.approx(0.5 / 2) and h["keys_no_ties"] == 2
    assert t["accuracy_no_ties"] == 0.0 and t["keys_no_ties"] == 1
    assert half.signature.as_dict()["even_split"] == "half" and tie.signature.as_dict()["even_split"] == "tie"
    assert h["vote_agreement"] == t["vote_agreement"]
    with pytest.raises(ParameterError, match=r"^`even_split` must be one of 'half', 'tie'; got 'halves'.$"):
        me.judge_agreement(c, "llm", humans=["h1", "h2"], even_split="halves")


def test_even_split_kappa_and_alpha_against_sklearn_and_krippendorff():
    """The half rule's weighted rows: kappa is sklearn's with sample weights; alpha with integer weights is
    krippendorff's on the rows repeated, with unit weights metaeval's own krippendorff_alpha."""
    cohen_kappa_score = pytest.importorskip("sklearn.metrics").cohen_kappa_score
    krippendorff = pytest.importorskip("krippendorff")
    from metaeval.judges.agreement import majority_rows, mirrored, nominal_alpha

    rng = np.random.default_rng(11)
    rows = []
    for q in range(40):
        for a, b in ((0, 1), (0, 2), (1, 2)):
            truth = int(rng.integers(0, 3))
            for human in range(int(rng.integers(1, 4))):
                rows.append((q, a, b, human, truth if rng.random() < 0.5 else int(rng.integers(0, 3))))
            rows.append((q, a, b, 3, truth if rng.random() < 0.6 else int(rng.integers(0, 3))))
    c = _comparisons(rows)
    r = me.judge_agreement(c, "llm", humans=["h1", "h2", "h3"], n_resamples=0, n_permutations=10, rng=0)
    row = r.table.iloc[0]
    # the weighted rows by hand: each key's human votes, the outcomes at the top weighted 1/k
    votes, judge = {}, {}
    for q, a, b, j, v in rows:
        if j == 3:
            judge[q, a, b] = v
        else:
            votes.setdefault((q, a, b), [0, 0, 0])[v] += 1
    ha, hb, hw = [], [], []
    for key, count in votes.items():
        top = [o for o in range(3) if count[o] == max(count)]
        for o in top:
            ha.append(judge[key]), hb.append(o), hw.append(1 / len(top))
    ha, hb, hw = np.array(ha), np.array(hb), np.array(hw)
    assert (hw < 1).any()  # some even splits
    assert row["accuracy"] == pytest.approx(np.sum(hw * (ha == hb)) / np.sum(hw), abs=1e-12)
    both = (np.concatenate([ha, mirrored(ha)]), np.concatenate([hb, mirrored(hb)]), np.concatenate([hw, hw]))
    assert row["kappa"] == pytest.approx(cohen_kappa_score(both[0], both[1], sample_weight=both[2]), abs=1e-12)
    assert row["alpha"] == pytest.approx(nominal_alpha(*both), abs=1e-12)
    # nominal_alpha: integer weights = the units repeated; unit weights = krippendorff_alpha
    weights = rng.integers(1, 4, size=both[0].size)
    repeated = np.vstack([np.repeat(both[0], weights), np.repeat(both[1], weights)]).astype(float)
    assert nominal_alpha(both[0], both[1], weights) == pytest.approx(
        krippendorff.alpha(reliability_data=repeated, level_of_measurement="nominal"), abs=1e-12)
    assert nominal_alpha(both[0], both[1], np.ones(both[0].size)) == pytest.approx(
        me.krippendorff_alpha(np.vstack(both[:2]).astype(float), level="nominal"), abs=1e-12)
    key, verdict, share = majority_rows(np.array([[1, 1, 0], [2, 0, 1], [1, 1, 1]]), "half")
    assert key.tolist() == [0, 0, 1, 2, 2, 2] and verdict.tolist() == [0, 1, 0, 0, 1, 2]
    assert share.tolist() == pytest.approx([0.5, 0.5, 1, 1 / 3, 1 / 3, 1 / 3])
    key, verdict, share = majority_rows(np.array([[1, 1, 0], [2, 0, 1], [1, 1, 1]]), "tie")
    assert verdict.tolist() == [2, 0, 2] and share.tolist() == [1, 1, 1]


def test_even_split_from_the_cli(capsys):
    from metaeval.cli.main import main

    args = ["judge", "agree", "--dataset", "summeval", "--scorer", "expert.relevance", "--annotators", "--scorer",
            "rouge-2.recall", "--human", "expert.relevance/*", "--n-resamples", "0", "--n-permutations", "10",
            "--seed", "0", "--format", "json"]
    import json

    out = {}
    for rule in ("half", "tie"):
        assert main([*args, "--even-split", rule]) == 0
        out[rule] = json.loads(capsys.readouterr().out)
        assert f"even_split:{rule}" in out[rule]["signature"]
    half, tie = out["half"]["judges"][0], out["tie"]["judges"][0]
    assert half["accuracy"] != tie["accuracy"] and half["vote_agreement"] == tie["vote_agreement"]
    api = me.judge_agreement(me.comparisons_from_scores(me.load_dataset("summeval"), ["expert.relevance",
                                                                                    "rouge-2.recall"],
                                                        annotators=True),
                             "rouge-2.recall", humans="expert.relevance/*", n_resamples=0, n_permutations=10, rng=0,
                             even_split="tie")
    assert api.table.iloc[0]["accuracy"] == pytest.approx(tie["accuracy"], abs=1e-12)
    assert main([*args, "--even-split", "halves"]) == 2
