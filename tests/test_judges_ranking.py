"""Comparison files, scorers as judges, and Bradley-Terry rankings with bootstrap intervals."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import metaeval as me
from metaeval.errors import DataWarning, DegenerateDataError, DegenerateWarning, InputFileError, ParameterError
from metaeval.stats.frameworks import bradley_terry as bt
from metaeval.judges import resampling as rs

ROWS = [("q1", "A", "B", "j1", "first"), ("q1", "B", "C", "j1", "second"), ("q2", "A", "C", "j1", "tie"),
        ("q2", "C", "A", "j2", "first"), ("q3", "B", "A", "j2", "first"), ("q3", "C", "B", "j1", "second"),
        ("q4", "A", "B", "j2", "second"), ("q4", "C", "A", "j2", "tie")]


def _write(tmp_path, rows=ROWS, name="c.csv", header="input,first,second,judge,verdict"):
    path = tmp_path / name
    path.write_text(header + "\n" + "\n".join(",".join(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_reader_codes_and_orientation(tmp_path):
    c = me.read_comparisons(_write(tmp_path))
    assert c.systems == ("A", "B", "C") and c.inputs == ("q1", "q2", "q3", "q4") and c.judges == ("j1", "j2")
    assert c.verdict.tolist() == [0, 1, 2, 0, 0, 1, 1, 2]
    counts = c.pair_counts()  # pairs (A,B), (A,C), (B,C): low wins, high wins, ties
    assert counts.tolist() == [[1, 2, 0], [0, 1, 2], [1, 1, 0]]


@pytest.mark.parametrize("fmt", ["tsv", "jsonl", "parquet"])
def test_every_format_reads_the_same(tmp_path, fmt):
    frame = pd.DataFrame(ROWS, columns=["input", "first", "second", "judge", "verdict"])
    path = tmp_path / f"c.{fmt}"
    if fmt == "tsv":
        frame.to_csv(path, sep="\t", index=False)
    elif fmt == "jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path)
    c = me.read_comparisons(path)
    assert c.pair_counts().tolist() == [[1, 2, 0], [0, 1, 2], [1, 1, 0]]


def test_arena_columns_and_mapping(tmp_path):
    rows = [("1", "x", "y", "model_a"), ("2", "y", "x", "tie (bothbad)"), ("3", "x", "y", "model_b")]
    c = me.read_comparisons(_write(tmp_path, rows, header="question_id,model_a,model_b,winner"))
    assert c.verdict.tolist() == [0, 2, 1] and c.judges == ("c",)
    mapped = me.read_comparisons(_write(tmp_path, rows, "m.csv", header="qid,left,right,pref"),
                                 columns={"input": "qid", "first": "left", "second": "right", "verdict": "pref"})
    assert mapped.verdict.tolist() == [0, 2, 1]


def test_reader_errors_are_one_line(tmp_path):
    bad = _write(tmp_path, [("q1", "A", "B", "j1", "maybe")], "bad.csv")
    with pytest.raises(InputFileError) as e:
        me.read_comparisons(bad)
    assert str(e.value) == (f"{bad}, row 2, column 'verdict': a verdict must be one of 'first', 'second', 'tie' (or"
                            " model_a, model_b, a, b, draw, tie (bothbad)); got 'maybe' (map other labels with"
                            " `verdict_map={OLD: NEW}`, NEW one of first, second, tie or drop).")
    same = _write(tmp_path, [("q1", "A", "A", "j1", "tie")], "same.csv")
    with pytest.raises(InputFileError, match=r"row 2, column 'second': a comparison must be between two different"
                                             r" systems; got 'A' twice."):
        me.read_comparisons(same)
    nojudge = _write(tmp_path, [("q1", "A", "B", "", "tie")], "nojudge.csv")
    with pytest.raises(InputFileError, match="row 2, column 'judge': every comparison must have a judge; got an empty"):
        me.read_comparisons(nojudge)
    missing = _write(tmp_path, [("q1", "A", "B", "j1")], "missing.csv", header="input,first,second,judge")
    with pytest.raises(InputFileError, match="a comparison file must have a column 'verdict' or 'winner'"):
        me.read_comparisons(missing)


def test_scorers_become_judges_with_the_tie_rule():
    ds = me.ScoreSet.from_matrices({"h": np.array([[1.0, 2.0], [1.0, 3.0], [2.0, np.nan]]),
                                    "m": np.array([[0.3, 0.1], [0.1 + 0.2, 0.5], [0.2, 0.4]])},
                                   systems=["s1", "s2", "s3"], inputs=["d1", "d2"], humans=["h"])
    c = me.comparisons_from_scores(ds, ["h", "m"])
    h = c.judged_by("h")
    # d1: s1-s2 tie, s1<s3, s2<s3; d2: s1<s2 (s3 missing)
    assert list(zip(h.input, h.first, h.second, h.verdict)) == [(0, 0, 1, 2), (0, 0, 2, 1), (0, 1, 2, 1), (1, 0, 1, 1)]
    m = c.judged_by("m")
    assert m.verdict[0] == 2  # 0.3 and 0.1 + 0.2 are tied under the tie rule, not by float equality


def test_summeval_annotators_as_judges():
    ds = me.load_dataset("summeval")
    c = me.comparisons_from_scores(ds, "expert.relevance", annotators=True)
    assert c.judges == ("expert.relevance/1", "expert.relevance/2", "expert.relevance/3")
    assert c.n_comparisons == 3 * 120 * 100


def test_cluster_counts_equal_an_explicit_resample(tmp_path):
    c = me.read_comparisons(_write(tmp_path))
    rng = np.random.default_rng(0)
    weights = rs.cluster_weights(rng, len(c.inputs), 5)
    fast = rs.cluster_counts(rs.cluster_matrix(c, "inputs"), weights)
    for b in range(5):
        rows = np.concatenate([np.repeat(np.flatnonzero(c.input == k), int(weights[b, k])) for k in range(4)])
        assert np.array_equal(fast[b], c.take(rows.astype(int)).pair_counts())


def test_multinomial_resamples_have_the_comparisons_distribution():
    counts = np.array([[30.0, 10.0, 5.0], [20.0, 20.0, 0.0]])
    draws = rs.comparison_counts(np.random.default_rng(1), counts, 4000)
    assert np.all(draws.sum(axis=(1, 2)) == counts.sum())
    np.testing.assert_allclose(draws.mean(axis=0), counts, atol=0.5)
    # variance of one cell: n p (1 - p)
    p = 30 / 85
    assert draws[:, 0, 0].var() == pytest.approx(85 * p * (1 - p), rel=0.1)


def _simulated_comparisons(n=6, per_input=30, inputs=40, seed=0):
    rng = np.random.default_rng(seed)
    strength = np.linspace(1.5, -1.5, n)
    rows = []
    for q in range(inputs):
        for _ in range(per_input):
            a, b = rng.choice(n, 2, replace=False)
            p = 1 / (1 + np.exp(-(strength[a] - strength[b])))
            u = rng.random()
            verdict = 2 if u < 0.15 else (0 if rng.random() < p else 1)
            rows.append((q, a, b, 0, verdict))
    a = np.array(rows)
    return me.make_comparisons(systems=[f"s{k}" for k in range(n)], inputs=[f"q{k}" for k in range(inputs)],
                               judges=["j"], input=a[:, 0], first=a[:, 1], second=a[:, 2], judge=a[:, 3],
                               verdict=a[:, 4])


def test_rank_systems_orders_intervals_and_rank_probabilities():
    c = _simulated_comparisons()
    r = me.rank_systems(c, n_resamples=300, rng=0)
    assert r.systems == ("s0", "s1", "s2", "s3", "s4", "s5")
    assert np.all(np.diff(r.scores) < 0) and r.ranks.tolist() == [1, 2, 3, 4, 5, 6]
    assert np.all(r.ci[0] <= r.scores) and np.all(r.scores <= r.ci[1])
    assert np.all(r.rank_low <= r.ranks) and np.all(r.ranks <= r.rank_high)
    np.testing.assert_allclose(r.rank_probabilities.sum(axis=1), 1.0)
    np.testing.assert_allclose(r.rank_probabilities.sum(axis=0), 1.0)
    # the point estimate is the fit of the pooled counts
    s, _, _, _ = bt.fit(c.pair_counts(), *bt.pairs_of(6), 6)
    np.testing.assert_allclose(r.scores, s, atol=1e-9)
    again = me.rank_systems(c, n_resamples=300, rng=0)
    np.testing.assert_array_equal(again.ci[0], r.ci[0])
    payload = json.loads(json.dumps(r.to_dict()))
    assert [row["system"] for row in payload["systems"]] == list(r.systems)


def test_bootstrap_choices_differ_and_judges_need_two():
    c = _simulated_comparisons()
    widths = {m: np.mean(np.subtract(*me.rank_systems(c, resampling=m, n_resamples=200, rng=1).ci[::-1]))
              for m in ("comparisons", "inputs")}
    assert all(w > 0 for w in widths.values())
    with pytest.raises(ParameterError, match=r"`resampling` 'judges' needs comparisons of at least 2 judges; got 1 \('j'\)."):
        me.rank_systems(c, resampling="judges", n_resamples=10)


def test_a_system_that_never_loses_is_refused_then_regularised(tmp_path):
    rows = [("q1", "A", "B", "j", "first"), ("q1", "A", "C", "j", "first"), ("q2", "B", "C", "j", "first"),
            ("q2", "C", "B", "j", "first")]
    c = me.read_comparisons(_write(tmp_path, rows))
    with pytest.raises(DegenerateDataError) as e:
        me.rank_systems(c, n_resamples=0)
    assert str(e.value) == ("the maximum-likelihood Bradley-Terry scores diverge (no finite maximum): 'A' never loses;"
                            " rank with a Gaussian prior (regularization > 0, --regularization) to get finite scores.")
    r = me.rank_systems(c, n_resamples=50, regularization=0.1, rng=0)
    assert r.systems[0] == "A" and np.all(np.isfinite(r.scores))


def test_a_disconnected_graph_is_ranked_per_component(tmp_path):
    rows = [("q1", "A", "B", "j", "first"), ("q1", "B", "A", "j", "tie"), ("q2", "C", "D", "j", "second"),
            ("q2", "D", "C", "j", "tie"), ("q3", "E", "F", "j", "tie")]
    c = me.read_comparisons(_write(tmp_path, rows))
    with pytest.warns(DataWarning, match=r"fall into 3 disconnected groups .*1: 'A', 'B'; 2: 'C', 'D'; 3: 'E', 'F'"):
        r = me.rank_systems(c, n_resamples=0)
    assert r.component.tolist() == [0, 0, 1, 1, 2, 2]
    assert r.systems[:4] == ("A", "B", "D", "C") and r.ranks.tolist() == [1, 2, 1, 2, 1, 1]


def test_davidson_needs_ties_and_inputs_judged_by_nobody_are_named():
    ds = me.ScoreSet.from_matrices({"m": np.array([[1.0, 2.0, np.nan], [2.0, 1.0, np.nan], [3.0, 0.0, 5.0]])},
                                   systems=["a", "b", "c"], inputs=["d1", "d2", "d3"])
    c = me.comparisons_from_scores(ds, "m")
    with pytest.raises(DegenerateDataError, match="Davidson's tie model needs ties; the comparisons hold none"), \
            pytest.warns(DataWarning):
        me.rank_systems(c, ties="davidson", n_resamples=0)
    with pytest.warns(DataWarning, match=r"1 of 3 inputs have no comparison \(judged by nobody\) and are left out: 'd3'"):
        me.rank_systems(c, n_resamples=0)


def test_summeval_expert_ranking_matches_evalica():
    evalica = pytest.importorskip("evalica")
    ds = me.load_dataset("summeval")
    c = me.comparisons_from_scores(ds, "expert.relevance")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = me.rank_systems(c, n_resamples=100, rng=0)
    names = [ds.systems[k] for k in range(16)]
    winner = [evalica.Winner.X if v == 0 else evalica.Winner.Y if v == 1 else evalica.Winner.Draw for v in c.verdict]
    ref = evalica.bradley_terry([names[k] for k in c.first], [names[k] for k in c.second], winner,
                                tolerance=1e-14, limit=100000).scores
    log_ref = np.log(ref[list(r.systems)].to_numpy())
    np.testing.assert_allclose(r.scores, log_ref - log_ref.mean(), atol=1e-8)
    assert r.systems[0] in ("M17", "M23", "M22") and r.systems[-1] == "M11"


def test_parameters_are_checked():
    c = _simulated_comparisons(inputs=5)
    with pytest.raises(ParameterError, match=r"`regularization` must be a finite number >= 0; got -1.0."):
        me.rank_systems(c, regularization=-1)
    with pytest.raises(ParameterError, match=r"`ties` must be one of 'half', 'davidson', 'drop'; got 'none'."):
        me.rank_systems(c, ties="none")
    with pytest.raises(ParameterError, match=r"`judges` must name judges of the comparisons \('j'\); got 'x'."):
        me.rank_systems(c, judges="x")
    with pytest.raises(ParameterError, match="`comparisons` must be a Comparisons"):
        me.rank_systems([1, 2])


def test_davidson_ranking_with_intervals():
    c = _simulated_comparisons(seed=3)
    r = me.rank_systems(c, ties="davidson", n_resamples=100, rng=0)
    assert r.systems[0] == "s0" and 0 < r.nu < 1
    assert np.all(r.ci[0] <= r.scores) and np.all(r.scores <= r.ci[1])


def test_a_bootstrap_over_three_annotators_warns():
    ds = me.load_dataset("summeval")
    c = me.comparisons_from_scores(ds, "expert.relevance", annotators=True)
    with pytest.warns(DegenerateWarning, match="a bootstrap over 3 judges has only 10 distinct resamples"):
        r = me.rank_systems(c, resampling="judges", n_resamples=50, rng=0)
    assert r.resampling == "judges"


def test_invariances_row_order_presentation_and_labels():
    c = _simulated_comparisons(seed=5)
    base = me.rank_systems(c, n_resamples=0)
    rng = np.random.default_rng(0)
    rows = rng.permutation(c.n_comparisons)
    shuffled = me.rank_systems(c.take(rows), n_resamples=0)
    np.testing.assert_allclose(shuffled.scores, base.scores, atol=1e-10)
    # showing every pair the other way round, with the verdict flipped, changes no ranking
    flipped = np.where(c.verdict == 2, 2, 1 - c.verdict)
    swapped = me.make_comparisons(systems=c.systems, inputs=c.inputs, judges=c.judges, input=c.input, first=c.second,
                                  second=c.first, judge=c.judge, verdict=flipped)
    np.testing.assert_allclose(me.rank_systems(swapped, n_resamples=0).scores, base.scores, atol=1e-10)
    # renaming (re-coding) the systems moves the labels, not the scores
    perm = rng.permutation(len(c.systems))
    recoded = me.make_comparisons(systems=[c.systems[k] for k in np.argsort(perm)], inputs=c.inputs, judges=c.judges,
                                  input=c.input, first=perm[c.first], second=perm[c.second], judge=c.judge,
                                  verdict=c.verdict)
    again = me.rank_systems(recoded, n_resamples=0)
    assert again.systems == base.systems
    np.testing.assert_allclose(again.scores, base.scores, atol=1e-10)


def test_the_tie_tolerance_is_a_field_of_the_signature_not_of_the_source():
    """Issue 38.4: the tolerance was recorded inside the `source` string."""
    ds = me.load_dataset("summeval")
    loose = me.comparisons_from_scores(ds, "rouge-2.recall", tie_tolerance=1e-4)
    default = me.comparisons_from_scores(ds, "rouge-2.recall")
    assert loose.source == default.source == "scores:rouge-2.recall"
    sig = me.rank_systems(loose, n_resamples=0, rng=0).signature
    assert sig.as_dict()["tie_tolerance"] == 1e-4 and sig.as_dict()["source"] == "scores:rouge-2.recall"
    assert "tie_tolerance" not in me.rank_systems(default, n_resamples=0, rng=0).signature.as_dict()
    audit = me.judge_audit(loose, n_resamples=0, rng=0)
    assert str(audit.signature).startswith("analysis:judge-audit|source:scores:rouge-2.recall|tie_tolerance:0.0001|")


def test_rng_none_draws_fresh_seeds_and_progress_counts_the_resamples():
    c = me.comparisons_from_scores(me.load_dataset("summeval"), "rouge-2.recall")
    calls = []
    r = me.rank_systems(c, n_resamples=300, progress=lambda units=1, **kw: calls.append(units))
    assert sum(calls) == 300 and len(calls) >= 2
    assert "seed" in r.signature.as_dict()
    import inspect

    for fn in (me.rank_systems, me.judge_agreement, me.judge_audit):
        assert inspect.signature(fn).parameters["rng"].default is None
