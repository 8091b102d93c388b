"""ROUGE jackknifing over references and the cross-comprehension test (Kolluru & Gotoh 2005): metaeval.human
.jackknife and .cross, and `metaeval human jackknife|cross`."""
from __future__ import annotations

import copy
import json
from itertools import combinations

import numpy as np
import pandas as pd
import pytest

import metaeval as me
from metaeval.cli.main import main
from metaeval.errors import InputFileError, ParameterError
from metaeval.human import (
    cross_comprehension,
    cross_comprehension_labels,
    jackknife_scores,
    read_summary_texts,
)
from metaeval.metrics import Rouge

REFS = {"d1": ["the cat sat", "a cat sat down", "the dog ran"]}
CANDS = {"sys": {"d1": "the cat ran"}}


class PlainScorer:
    """Only score(): no pooling of per-reference statistics (the reference path)."""

    def __init__(self, scorer):
        self.inner = scorer

    def score(self, candidate, references):
        return self.inner.score(candidate, references)


# -- validation: every message pinned ---------------------------------------------------------------------


@pytest.mark.parametrize("kwargs,message", [
    (dict(references={"d1": ["only one"]}),
     "`references` must hold the same number (>= 2) of human summaries for every document; got [1]."),
    (dict(references={"d1": ["a b", "c d"], "d2": ["a", "b", "c"]}),
     "`references` must hold the same number (>= 2) of human summaries for every document; got [2, 3]."),
    (dict(references={}), "`references` must map each document to its human summaries; got {}."),
    (dict(candidates={"sys": {"d9": "x"}}), "`candidates` must summarize documents of `references`; got 'd9' for"
                                            " system 'sys'."),
    (dict(candidates={"sys": {}}), "`candidates` must map system 'sys' to a non-empty {document: summary}; got {}."),
    (dict(candidates=["x"]), "`candidates` must map each system to {document: summary}; got ['x']."),
    (dict(scorer=object()), "`scorer` must have a score(candidate, references) method; got <object>."),
    (dict(measure=""), "`measure` must be the name of one of the scorer's scores; got ''."),
    (dict(measure="rouge-3.recall"), "`measure` must be one of the scorer's scores (rouge-1.recall, rouge-1.precision,"
                                     " rouge-1.f1, rouge-l.recall, rouge-l.precision, rouge-l.f1); got 'rouge-3.recall'."),
])
def test_messages(kwargs, message):
    args = dict(candidates=CANDS, references=REFS, scorer=Rouge(n=1), measure="rouge-1.recall")
    args.update(kwargs)
    if isinstance(args["scorer"], object) and type(args["scorer"]) is object:
        message = message.replace("<object>", repr(args["scorer"]))
    with pytest.raises(ParameterError) as info:
        jackknife_scores(args["candidates"], args["references"], scorer=args["scorer"], measure=args["measure"])
    assert str(info.value) == message
    with pytest.raises(ParameterError) as info:
        cross_comprehension(args["references"], candidates=args["candidates"], scorer=args["scorer"],
                            measure=args["measure"])
    assert str(info.value) == message


@pytest.mark.parametrize("frame,message", [
    (pd.DataFrame({"document": ["d"], "summary": ["A"], "questions": ["B"]}),
     "`judgments` must have the columns document, summary, questions, label; got no 'label'."),
    (pd.DataFrame({"document": ["d"], "summary": ["A"], "questions": ["B"], "label": ["maybe"]}),
     "`label` must be one of 'relevant', 'partial', 'irrelevant', 'not-found'; got 'maybe'."),
    (pd.DataFrame({"document": ["d"], "summary": ["A"], "questions": ["A"], "label": ["relevant"]}),
     "`judgments` must cross summaries and questions of different authors; got author 'A' asked their own questions."),
    (pd.DataFrame({"document": [], "summary": [], "questions": [], "label": []}),
     "`judgments` must hold at least one judged question; got none."),
    ([1, 2], "`judgments` must be a pandas DataFrame; got list."),
])
def test_label_messages(frame, message):
    with pytest.raises(ParameterError) as info:
        cross_comprehension_labels(frame)
    assert str(info.value) == message


# -- hand-computed tiny cases -------------------------------------------------------------------------------


def test_jackknife_by_hand():
    # ROUGE-1 recall, -f A pools hits and reference lengths over the references of a subset:
    # sys "the cat ran" without r0: (1 + 2) / (4 + 3); without r1: (2 + 2) / (3 + 3); without r2: (2 + 1) / (3 + 4)
    result = jackknife_scores(CANDS, REFS, scorer=Rouge(n=1), measure="rouge-1.recall")
    expected = {"sys": (3 / 7 + 4 / 6 + 3 / 7) / 3,
                "ref0": (2 + 1) / (4 + 3),   # "the cat sat" against r1 (cat, sat) and r2 (the)
                "ref1": (2 + 0) / (3 + 3),   # "a cat sat down" against r0 (cat, sat) and r2
                "ref2": (1 + 0) / (3 + 4)}   # "the dog ran" against r0 (the) and r1
    got = dict(zip(result.peers["peer"], result.peers["score"]))
    assert got == pytest.approx(expected, rel=1e-12)
    assert list(result.peers["peer"]) == ["sys", "ref0", "ref1", "ref2"]
    assert list(result.peers["rank"]) == [1, 2, 3, 4] and list(result.peers["kind"]) == ["system"] + ["human"] * 3
    assert result.n_references == 3 and result.n_systems_below_humans == 0
    assert list(result.peers["mean_tokens"]) == [3.0, 3.0, 4.0, 3.0]
    assert result.scoreset.shape == (4, 1) and result.scoreset.scorers == ("rouge-1.recall",)
    assert "statistic:jackknife|measure:rouge-1.recall|references:3|systems:1|documents:1" in str(result.signature)


def test_a_system_without_some_documents():
    refs = {"d1": REFS["d1"], "d2": ["one two", "two three", "three four"]}
    result = jackknife_scores({"sys": {"d2": "two three"}}, refs, scorer=Rouge(n=1), measure="rouge-1.recall")
    matrix = result.scoreset.matrix("rouge-1.recall")
    assert np.isnan(matrix[0, 0]) and not np.isnan(matrix[1:]).any()  # missing stays NaN, never 0
    peers = result.peers.set_index("peer")
    assert peers.loc["sys", "n_documents"] == 1 and peers.loc["ref0", "n_documents"] == 2
    assert peers.loc["sys", "score"] == pytest.approx(matrix[0, 1])


def test_cross_comprehension_by_hand():
    result = cross_comprehension(REFS, scorer=Rouge(n=1), measure="rouge-1.recall", candidates=CANDS)
    x = np.array([[np.nan, 2 / 4, 1 / 3], [2 / 3, np.nan, 0.0], [1 / 3, 0.0, np.nan]])  # s(r_a, [r_b]), recall
    np.testing.assert_allclose(result.matrix.to_numpy(), x, rtol=1e-12)
    assert result.human_level == pytest.approx(np.nanmean(x))
    peers = result.peers.set_index("peer")
    np.testing.assert_allclose(peers.loc[["ref0", "ref1", "ref2"], "summary_relevance"], np.nanmean(x, axis=1))
    np.testing.assert_allclose(peers.loc[["ref0", "ref1", "ref2"], "questionnaire_relevance"], np.nanmean(x, axis=0))
    assert peers.loc["sys", "summary_relevance"] == pytest.approx((2 / 3 + 1 / 4 + 2 / 3) / 3)
    assert np.isnan(peers.loc["sys", "questionnaire_relevance"])
    assert list(peers.loc[["ref0", "ref1", "ref2", "sys"], "mean_tokens"]) == [3.0, 4.0, 3.0, 3.0]
    assert result.per_document.shape == (1, 3, 3)


def test_labels_paper_table3_and_table4():
    # Kolluru & Gotoh, Table 3: Subject A's summary asked B's questions (N, R, I, P), C's (R, R), D's (R, R, N)
    rows = [("story", "A", "B", lab) for lab in ("not-found", "relevant", "irrelevant", "partial")]
    rows += [("story", "A", "C", "relevant")] * 2
    rows += [("story", "A", "D", lab) for lab in ("relevant", "relevant", "not-found")]
    # Table 4 (section 6): D's three questions asked of B's summary (R, R, N) and of a machine summary (R, N, N)
    rows += [("nato", "B", "D", lab) for lab in ("relevant", "relevant", "not-found")]
    rows += [("nato", "machine", "D", lab) for lab in ("relevant", "not-found", "not-found")]
    frame = pd.DataFrame(rows, columns=["document", "summary", "questions", "label"])
    before = frame.copy()
    result = cross_comprehension_labels(frame)
    pd.testing.assert_frame_equal(frame, before)  # the input is not modified
    a = result.summaries.set_index("author").loc["A"]
    assert a["n_questions"] == 9
    assert (a["relevant"], a["partial"], a["irrelevant"], a["not-found"]) == pytest.approx((5 / 9, 1 / 9, 1 / 9, 2 / 9))
    assert a["relevant_or_partial"] == pytest.approx(6 / 9) and a["found"] == pytest.approx(7 / 9)
    summaries = result.summaries.set_index("author")
    assert summaries.loc["B", "relevant"] == pytest.approx(2 / 3)       # the human summary of Table 4
    assert summaries.loc["machine", "relevant"] == pytest.approx(1 / 3)  # the machine summary of Table 4
    q = result.questionnaires.set_index("author")
    assert q.loc["B", "relevant_or_partial"] == pytest.approx(2 / 4) and q.loc["C", "relevant"] == 1.0
    assert q.loc["D", "n_questions"] == 9 and q.loc["D", "relevant"] == pytest.approx(5 / 9)
    assert result.overall["n_questions"] == 15 and result.n_judgments == 15
    assert result.statistic == pytest.approx((5 + 1 + 2 + 1) / 15)
    assert set(result.to_frame()["view"]) == {"summary", "questions", "overall"}


# -- the pooled path equals the plain loop over subsets -----------------------------------------------------


@pytest.fixture(scope="module")
def summeval_texts(shared_data):
    return read_summary_texts(shared_data / "summeval" / "texts.jsonl", n_documents=4)


@pytest.mark.parametrize("options,measure", [
    (dict(n=2), "rouge-2.recall"),
    (dict(n=1, stem=True, remove_stopwords=True), "rouge-1.f1"),
    (dict(n=1, weight=1.2), "rouge-w-1.2.f1"),
    (dict(n=1, skip_distance=4, skip_unigrams=True), "rouge-su4.precision"),
    (dict(n=1), "rouge-l.recall"),
])
def test_jackknife_equals_a_plain_loop(summeval_texts, options, measure):
    candidates, references = summeval_texts
    cands = {s: candidates[s] for s in ("M0", "M8", "M23")}
    kept = copy.deepcopy((cands, references))
    pooled = jackknife_scores(cands, references, scorer=Rouge(**options), measure=measure)
    plain = jackknife_scores(cands, references, scorer=PlainScorer(Rouge(**options)), measure=measure)
    np.testing.assert_array_equal(pooled.scoreset.matrix(measure), plain.scoreset.matrix(measure))
    assert (cands, references) == kept  # the inputs are not modified
    # an explicit loop over every (M - 1)-subset, through Rouge.score
    rouge = Rouge(**options)
    outer, inner = measure.rsplit(".", 1)
    value = lambda c, refs: rouge.score(c, refs)[outer][inner]  # noqa: E731
    matrix = pooled.scoreset.matrix(measure)
    peers = list(pooled.scoreset.systems)
    for d, doc in enumerate(pooled.scoreset.inputs):
        refs = references[doc]
        m = len(refs)
        for system in cands:
            loop = np.mean([value(cands[system][doc], list(subset)) for subset in combinations(refs, m - 1)])
            assert matrix[peers.index(system), d] == pytest.approx(loop, rel=1e-12, abs=1e-15)
        for j in range(m):
            assert matrix[peers.index(f"ref{j}"), d] == value(refs[j], refs[:j] + refs[j + 1:])


# -- the real-data run: SummEval, 16 systems, 11 references ---------------------------------------------------


def test_summeval_humans_among_systems(shared_data):
    candidates, references = read_summary_texts(shared_data / "summeval" / "texts.jsonl")
    assert len(candidates) == 16 and len(references) == 100
    assert {len(r) for r in references.values()} == {11}
    recall = jackknife_scores(candidates, references, scorer=Rouge(n=2, lcs=False), measure="rouge-2.recall")
    f1 = jackknife_scores(candidates, references, scorer=Rouge(n=2, lcs=False), measure="rouge-2.f1")
    for result in (recall, f1):
        assert len(result.peers) == 27 and (result.peers["n_documents"] == 100).all()
        assert result.peers["score"].is_monotonic_decreasing
        assert result.scoreset.shape == (27, 100) and not np.isnan(result.scoreset.matrix(result.measure)).any()
    # a peer's score is the mean of its per-document jackknifed scores
    table = recall.peers.set_index("peer")["score"]
    matrix = recall.scoreset.matrix("rouge-2.recall")
    np.testing.assert_allclose(table.loc[list(recall.scoreset.systems)], matrix.mean(axis=1))
    lengths = recall.peers.set_index("peer")["mean_tokens"]
    assert lengths[list(candidates)].mean() > 60 > 50 > lengths[[f"ref{j}" for j in range(11)]].max()
    # SummEval's references are short and abstractive: under recall, longer extractive system outputs
    # outscore most humans; F1 (which charges the systems' length) moves the humans up
    human_rank = lambda r: r.peers.loc[r.peers["kind"] == "human", "rank"].mean()  # noqa: E731
    assert human_rank(f1) < human_rank(recall)
    best_human = table[[p.startswith("ref") for p in table.index]].max()
    assert list(table[(table > best_human).to_numpy()].index) == [p for p in table.index if p.startswith("M")][:15]
    assert set(table.index[(table < best_human).to_numpy()]) & set(candidates) == {"M20"}
    f1_table = f1.peers.set_index("peer")
    assert list(f1_table.loc[[f"ref{j}" for j in range(6)] + ["M20"], "rank"].sort_values()) == list(range(21, 28))
    # references 6-10 agree with each other more than with the rest: they are the five best humans under both
    for result in (recall, f1):
        humans = result.peers[result.peers["kind"] == "human"]
        assert set(humans["peer"][:5]) == {f"ref{j}" for j in range(6, 11)}


def test_summeval_cross_comprehension(shared_data):
    candidates, references = read_summary_texts(shared_data / "summeval" / "texts.jsonl", n_documents=20)
    result = cross_comprehension(references, scorer=Rouge(n=1, lcs=False), measure="rouge-1.recall",
                                 candidates=candidates)
    assert result.matrix.shape == (11, 11) and np.isnan(np.diag(result.matrix.to_numpy())).all()
    off = ~np.eye(11, dtype=bool)
    assert result.human_level == pytest.approx(result.per_document[:, off].mean())
    humans = result.peers[result.peers["kind"] == "human"].set_index("peer")
    # every author's row and column mean average to the same human level
    assert humans["summary_relevance"].mean() == pytest.approx(result.human_level)
    assert humans["questionnaire_relevance"].mean() == pytest.approx(result.human_level)
    assert len(result.peers) == 27 and (0 < result.peers["summary_relevance"]).all()
    # references 6-10 agree with each other more than references 1-5 do, and more than across the blocks
    first, second = [f"ref{j}" for j in range(1, 6)], [f"ref{j}" for j in range(6, 11)]
    block = lambda rows, cols: result.matrix.loc[rows, cols].stack().mean()  # noqa: E731 (NaN diagonal dropped)
    assert block(second, second) > block(first, first) + 0.1 and block(second, second) > block(first, second) + 0.1


# -- files and the CLI ---------------------------------------------------------------------------------------


def test_read_summary_texts_errors(tmp_path):
    path = tmp_path / "t.jsonl"
    lines = [{"doc_id": "d", "system_id": "s1", "summary": "x", "references": ["a", "b"]},
             {"doc_id": "d", "system_id": "s2", "summary": "y", "references": ["a", "c"]}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    with pytest.raises(InputFileError) as info:
        read_summary_texts(path)
    assert str(info.value) == (f"{path}, row 2, column 'references': the references of document 'd' must be the"
                               " same on each of its lines; got a different list.")
    lines[1]["references"] = ["a", "b"]
    lines[1]["system_id"] = "s1"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    with pytest.raises(InputFileError) as info:
        read_summary_texts(path)
    assert str(info.value) == f"{path}, row 2: (system_id, doc_id) must be unique; got ('s1', 'd') again."


def test_cli_jackknife_and_cross(shared_data, capsys, tmp_path):
    texts = str(shared_data / "summeval" / "texts.jsonl")
    assert main(["human", "jackknife", "--texts", texts, "--n-documents", "3", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    api = jackknife_scores(*read_summary_texts(texts, n_documents=3), scorer=Rouge(), measure="rouge-2.recall")
    assert [r["peer"] for r in out["peers"]] == list(api.peers["peer"])
    np.testing.assert_allclose([r["score"] for r in out["peers"]], api.peers["score"])
    assert main(["human", "cross", "--texts", texts, "--n-documents", "3", "--metric-option", "rouge.n=1",
                 "--measure", "rouge-1.recall", "--humans-only"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "cross-comprehension under rouge-1.recall: 11 human summaries per document, 3 documents" in out
    judgments = tmp_path / "j.csv"
    judgments.write_text("document,summary,questions,label\ns,A,B,relevant\ns,A,C,not-found\ns,B,A,partial\n",
                         encoding="utf-8")
    assert main(["human", "cross", "--judgments", str(judgments)]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the terminal wraps at 100 columns
    assert "3 judged questions; overall relevant 33.3%, relevant or partial 66.7%, found 66.7%" in out


@pytest.mark.parametrize("args,message", [
    (["human", "jackknife"], "metaeval: error: missing option '--texts' (see 'metaeval human jackknife --help')"),
    (["human", "cross"], "metaeval: error: exactly one of '--texts' and '--judgments' must be given (see 'metaeval"
                         " human cross --help')"),
    (["human", "jackknife", "--texts", "TEXTS", "--measure", "bleu"],
     "metaeval: error: `measure` must be one of the scorer's scores (rouge-1.recall, rouge-1.precision,"
     " rouge-1.f1, rouge-2.recall, rouge-2.precision, rouge-2.f1, rouge-l.recall, rouge-l.precision, rouge-l.f1);"
     " got 'bleu'."),
    (["human", "cross", "--judgments", "BAD"], "metaeval: error: BAD, row 2, column 'label': a label must be one of"
                                               " 'relevant', 'partial', 'irrelevant', 'not-found'; got 'yes'."),
])
def test_cli_errors(args, message, shared_data, tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("document,summary,questions,label\ns,A,B,yes\n", encoding="utf-8")
    texts = str(shared_data / "summeval" / "texts.jsonl")
    args = [texts if a == "TEXTS" else str(bad) if a == "BAD" else a for a in args]
    message = message.replace("TEXTS", texts).replace("BAD", str(bad))
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines() == [message]


def test_api_exports():
    assert me.jackknife_scores is jackknife_scores and me.cross_comprehension is cross_comprehension
    assert me.human.cross_comprehension_labels is cross_comprehension_labels
