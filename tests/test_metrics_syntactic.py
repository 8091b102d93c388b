"""STM, HWCM and DSTM (Liu & Gildea, ACL-05 workshop): readers, the paper's worked examples, hand cases,
corpus statistics, the CLI, the fixture of parsed MT-like sentences (tests/data/syntactic)."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from metaeval.errors import InputFileError, ParameterError
from metaeval.metrics import CorpusScorer, Dstm, Hwcm, Stm, get_scorer
from metaeval.metrics.corpus_statistics import CorpusStatistic
from metaeval.metrics.syntactic import overlap_score, overlap_statistics
from metaeval.metrics.syntactic_heads import head_child, to_dependencies
from metaeval.metrics.syntactic_trees import (
    DependencyTree,
    dependency_subtrees,
    headword_chains,
    parse_brackets,
    parse_conll,
    read_brackets,
    read_conll,
    subtrees,
)

FIXTURE = Path(__file__).parent / "data" / "syntactic"

# Figure 2 of the paper is lost in the text; this pair reproduces every number its prose gives: depth-1
# labels S NP VP PRON V NP (+ a second PRON, clipped) = 6/7, depth-2 S->NP VP, NP->PRON, VP->V NP (one
# NP->PRON clipped) = 3/4, depth-3 1/2, STM = (6/7 + 3/4 + 1/2) / 3 = 0.702.
FIGURE2_REF = "(S (NP (PRON I)) (VP (V had) (NP (ART a) (N dog))))"
FIGURE2_HYP = "(S (NP (PRON I)) (VP (V have) (NP (PRON it))))"

# "I have a red pen" (Section 2.1): have -> I, pen; pen -> a, red.
RED_PEN = """# text = I have a red pen
1\tI\tI\tPRON\tPRP\t_\t2\tnsubj\t_\t_
2\thave\thave\tVERB\tVBP\t_\t0\troot\t_\t_
3\ta\ta\tDET\tDT\t_\t5\tdet\t_\t_
4\tred\tred\tADJ\tJJ\t_\t5\tamod\t_\t_
5\tpen\tpen\tNOUN\tNN\t_\t2\tobj\t_\t_
"""


def conll(words: str, heads: list[int]) -> str:
    return "\n".join(f"{i}\t{w}\t_\t_\t_\t_\t{h}\t_\t_\t_" for i, (w, h) in enumerate(zip(words.split(), heads), 1))


# ------------------------------------------------------------------ validation (messages pinned)
@pytest.mark.parametrize("text, message", [
    ("(S (NP (PRP I))", "got line 1: 1 bracket(s) opened (the last on line 1) are never closed (unbalanced brackets)."),
    ("(S (NP x)))", "got line 1: a ')' closes no open bracket (unbalanced brackets)."),
    ("(S x) y", "got line 1: the word 'y' stands outside any bracket."),
    ("(S ())", "got line 1: an empty node '()' has neither a label nor children."),
    ("(S\n (NP))", "got line 2: the node (NP ...) has no children (a word or a node)."),
    ("(S (NP x) y)", "got line 1: the node (S ...) mixes words and nodes as children."),
    ("( (S x) (S y) )", "got line 1: a node without a label must be the Treebank's wrapper around exactly one tree."),
])
def test_bracket_errors(text, message):
    with pytest.raises(ParameterError) as info:
        parse_brackets(text, name="candidate")
    assert str(info.value) == "`candidate` must be well-formed parse trees; " + message


def test_bracket_reader_edge_cases():
    assert parse_brackets("( (S (NP (PRP I)) (VP (VBP am))) )") == [("S", (("NP", (("PRP", ("I",)),)),
                                                                        ("VP", (("VBP", ("am",)),))))]
    assert len(parse_brackets("(S (X a))\n(S (X b))")) == 2
    with pytest.raises(ParameterError) as info:
        parse_brackets("   ")
    assert str(info.value) == "`tree` must hold at least one bracketed parse tree; got '   '."
    with pytest.raises(ParameterError) as info:
        parse_brackets(3)
    assert str(info.value) == "`tree` must be a text of bracketed parse trees (str); got 3."


@pytest.mark.parametrize("text, message", [
    ("1\tI\t_\t_\t_\t_\t0", None),
    ("1\tI\t_\t_\t_\t0", "got line 1: a token line must have at least 7 columns (ID FORM LEMMA UPOS XPOS FEATS HEAD); got 6."),
    (conll("a b", [0, 3]), "got line 2: HEAD (column 7) must be between 0 and 2 (the sentence's tokens); got 3."),
    (conll("a b", [0, 2]), "got line 2: HEAD (column 7) must not be the token itself; got 2 for token 2."),
    (conll("a b c", [0, 3, 2]), "got line 2: the HEAD links must form a tree; got a cycle through tokens [2, 3]."),
    (conll("a b", [0, 1]).replace("\t1\t", "\t_\t"), "got line 2: HEAD (column 7) must be a token ID or 0; got '_'."),
    ("2\ta\t_\t_\t_\t_\t0", "got line 1: token IDs must run 1, 2, ... within a sentence; got ID '2' where 1 was expected."),
])
def test_conll_errors(text, message):
    if message is None:
        assert parse_conll(text) == [DependencyTree(("I",), (0,))]
        return
    with pytest.raises(ParameterError) as info:
        parse_conll(text, name="references")
    assert str(info.value) == "`references` must be well-formed parse trees; " + message


def test_file_readers_name_file_and_line(tmp_path):
    trees = tmp_path / "hyp.trees"
    trees.write_text("(S (X a))\n\n(S (X b)\n", encoding="utf-8")
    with pytest.raises(InputFileError) as info:
        read_brackets(trees)
    assert str(info.value) == (f"{trees}, row 3: 1 bracket(s) opened (the last on line 1) are never closed "
                               "(unbalanced brackets).")
    trees.write_text("(S (X a))\n\n(S (X b))\n", encoding="utf-8")
    assert [len(t) for t in read_brackets(trees)] == [1, 1]
    deps = tmp_path / "hyp.conllu"
    deps.write_text(RED_PEN + "\n" + conll("x y", [2, 1]) + "\n", encoding="utf-8")
    with pytest.raises(InputFileError) as info:
        read_conll(deps)
    assert str(info.value) == f"{deps}, row 8: the HEAD links must form a tree; got a cycle through tokens [1, 2]."
    deps.write_text(RED_PEN + "\n1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n" + conll("do n't", [0, 1]) + "\n")
    assert [t.words for t in read_conll(deps)] == [("I", "have", "a", "red", "pen"), ("do", "n't")]


def test_scorer_option_messages():
    with pytest.raises(ParameterError) as info:
        Stm(depth=0)
    assert str(info.value) == "`depth` must be an integer >= 1; got 0."
    with pytest.raises(ParameterError) as info:
        Hwcm(trees="penn")
    assert str(info.value) == "`trees` must be one of 'conll', 'brackets'; got 'penn'."
    with pytest.raises(ParameterError) as info:
        Stm().score(FIGURE2_HYP, FIGURE2_REF)
    assert str(info.value).startswith("`references` must be a non-empty list of references (each a text of parse "
                                      "trees); got '(S")
    with pytest.raises(ParameterError) as info:
        Stm().score(7, [FIGURE2_REF])
    assert str(info.value) == "`candidate` must be a text of parse trees or a list of such texts (str); got 7."


# ------------------------------------------------------------------ the paper's worked examples
def test_stm_figure2_worked_example():
    stm = Stm(depth=3)
    stats = stm.statistics(FIGURE2_HYP, [FIGURE2_REF])
    assert stats.tolist() == [6, 3, 1, 7, 4, 2]
    assert stm.score(FIGURE2_HYP, [FIGURE2_REF])["stm"] == pytest.approx((6 / 7 + 3 / 4 + 1 / 2) / 3)
    assert round(stm.score(FIGURE2_HYP, [FIGURE2_REF])["stm"], 3) == 0.702


def test_stm_figure2_units_by_depth():
    hyp = subtrees(parse_brackets(FIGURE2_HYP), 3)
    assert hyp[0] == Counter({("S",): 1, ("NP",): 2, ("VP",): 1, ("PRON",): 2, ("V",): 1})
    assert hyp[1] == Counter({("S", (("NP",), ("VP",))): 1, ("NP", (("PRON",),)): 2, ("VP", (("V",), ("NP",))): 1})
    assert hyp[2] == Counter({("S", (("NP", (("PRON",),)), ("VP", (("V",), ("NP",))))): 1,
                              ("VP", (("V", ()), ("NP", (("PRON",),)))): 1})


def test_hwcm_red_pen_chains():
    chains = headword_chains(parse_conll(RED_PEN), 3)
    assert set(chains[0]) == {("I",), ("have",), ("a",), ("red",), ("pen",)}
    assert set(chains[1]) == {("have", "I"), ("have", "pen"), ("pen", "a"), ("pen", "red")}
    assert set(chains[2]) == {("have", "pen", "a"), ("have", "pen", "red")}
    assert headword_chains(parse_conll(RED_PEN), 4)[3] == Counter()


def test_red_pen_from_brackets_by_collins_heads():
    tree = parse_brackets("(S (NP (PRP I)) (VP (VBP have) (NP (DT a) (JJ red) (NN pen))))")[0]
    assert to_dependencies(tree) == DependencyTree(("I", "have", "a", "red", "pen"), (2, 0, 5, 5, 2))
    bracketed = "(S (NP (PRP I)) (VP (VBP have) (NP (DT a) (JJ red) (NN pen))))"
    short = "(S (NP (PRP I)) (VP (VBP have) (NP (DT a) (NN pen))))"
    assert Hwcm(trees="brackets").statistics(bracketed, [short]).tolist() == Hwcm().statistics(
        RED_PEN, [conll("I have a pen", [2, 0, 4, 2])]).tolist() == [4, 3, 1, 0, 5, 4, 2, 0]


def test_collins_head_rules():
    assert head_child("PP", ["IN", "NP"]) == 0
    assert head_child("VP", ["MD", "VP"]) == 0
    assert head_child("S", ["NP", "VP", "."]) == 1
    assert head_child("NP", ["DT", "JJ", "NN"]) == 2
    assert head_child("NP", ["NP", "POS"]) == 1
    assert head_child("NP", ["NP", "PP"]) == 0
    assert head_child("NP-SBJ", ["DT", "NNS", ","]) == 1
    assert head_child("SBAR", ["IN", "S"]) == 0
    assert head_child("X", [".", "NN"]) == 1  # unknown label: leftmost non-punctuation child


# ------------------------------------------------------------------ hand-computed cases
def test_stm_hand_cases_depth_1_to_3():
    hyp = "(S (NP (DT the) (NN cat)) (VP (VBD sat)))"
    ref = "(S (NP (DT a) (NN dog)) (VP (VBD sat) (PP (IN on) (NP (NN mats)))))"
    # depth 1: S NP DT NN VP VBD -> all six in ref: 6/6. depth 2: S->NP VP ok, NP->DT NN ok,
    # VP->VBD (ref VP->VBD PP) no: 2/3. depth 3: S(NP(DT NN) VP(VBD)) vs ref S(NP(DT NN) VP(VBD PP)): 0/1.
    assert Stm(depth=1).statistics(hyp, [ref]).tolist() == [6, 6]
    assert Stm(depth=2).statistics(hyp, [ref]).tolist() == [6, 2, 6, 3]
    assert Stm(depth=3).statistics(hyp, [ref]).tolist() == [6, 2, 0, 6, 3, 1]
    assert Stm(depth=3).score(hyp, [ref])["stm"] == pytest.approx((1 + 2 / 3 + 0) / 3)
    # words are ignored
    assert Stm().score(hyp, [hyp.replace("cat", "dog")])["stm"] == 1.0


def test_clipping_takes_the_max_over_single_references():
    hyp = conll("a a a", [0, 1, 1])  # chains: a a a | a-a a-a
    one, two = conll("a b", [0, 1]), conll("a a b", [0, 1, 1])
    assert Hwcm(depth=2).statistics(hyp, [one]).tolist() == [1, 0, 3, 2]
    assert Hwcm(depth=2).statistics(hyp, [one, two]).tolist() == [2, 1, 3, 2]  # max(1, 2), not 1 + 2
    assert overlap_statistics([Counter({"x": 3})], [[Counter({"x": 1})], [Counter({"x": 2})]]).tolist() == [2, 3]


def test_dstm_counts_siblings_that_no_chain_holds():
    ref = RED_PEN
    swapped = conll("I have a red pen", [2, 0, 4, 5, 2])  # pen -> red -> a: same words, other structure
    assert Hwcm(depth=1).score(swapped, [ref])["hwcm"] == 1.0
    units = dependency_subtrees(parse_conll(ref), 2)[1]
    assert units == Counter({("have", (("I",), ("pen",))): 1, ("pen", (("a",), ("red",))): 1})
    # depth 2 of the swapped tree: have(I pen) matches, pen(red) and red(a) do not
    assert Dstm(depth=2).statistics(swapped, [ref]).tolist() == [5, 1, 5, 3]
    # HWCM: the 2-chains have-I, have-pen, pen-red match; red-a does not
    assert Hwcm(depth=2).statistics(swapped, [ref]).tolist() == [5, 3, 5, 4]


def test_lowercase_and_effective_depth():
    upper, lower = conll("The Cat", [2, 0]), conll("the cat", [2, 0])
    assert Hwcm().score(upper, [lower])["hwcm"] == 0.0
    assert Hwcm(lowercase=True).score(upper, [lower])["hwcm"] == 1.0
    # no 3- or 4-word chain in a two-word sentence: only sizes 1 and 2 are averaged
    assert Hwcm(depth=4).statistics(lower, [lower]).tolist() == [2, 1, 0, 0, 2, 1, 0, 0]
    assert Hwcm(depth=4).score(lower, [lower])["hwcm"] == 1.0
    assert Stm(lowercase=True).score("(s (np (nn x)))", ["(S (NP (NN y)))"])["stm"] == 1.0
    assert np.isnan(overlap_score(np.zeros(4)))


# ------------------------------------------------------------------ protocol, corpus statistics
def test_scorers_satisfy_the_protocols_and_signatures():
    for name in ("stm", "hwcm", "dstm"):
        scorer = get_scorer(name)
        assert isinstance(scorer, CorpusScorer) and isinstance(scorer, CorpusStatistic)
    assert str(Stm().signature).startswith(
        "metric:stm|depth:3|lowercase:no|trees:brackets|references:clip-max|scale:0-1|version:")
    assert str(Hwcm(depth=2, trees="brackets").signature).startswith(
        "metric:hwcm|depth:2|lowercase:no|trees:brackets-collins99-heads|")
    assert str(Dstm(lowercase=True).signature).startswith("metric:dstm|depth:3|lowercase:yes|trees:conll|")


def _fixture():
    candidates = [json.loads(line) for line in (FIXTURE / "candidates.jsonl").read_text().splitlines()]
    references = {r["input"]: r["references"] for r in map(json.loads, (FIXTURE / "references.jsonl").read_text()
                                                           .splitlines())}
    return candidates, references


def test_corpus_score_sums_statistics():
    candidates, references = _fixture()
    stm = Stm()
    rows = [c for c in candidates if c["system"] == "B"]
    stats = [stm.statistics(c["candidate"], references[c["input"]]) for c in rows]
    sums = np.sum(stats, axis=0)
    expected = np.mean(sums[:3] / sums[3:])
    assert stm.corpus_score(stats)["stm"] == pytest.approx(expected)
    assert stm.corpus_score(stats)["stm"] != pytest.approx(np.mean([stm.score(c["candidate"], references[c["input"]])
                                                                     ["stm"] for c in rows]))
    hyps = [c["candidate"] for c in rows]
    streams = [[references[c["input"]][r] for c in rows] for r in range(2)]
    assert np.array_equal(stm.item_statistics(hyps, streams), np.vstack(stats))
    assert stm.aggregate(np.vstack(stats).sum(axis=0)) == pytest.approx(expected)
    with pytest.raises(ParameterError) as info:
        stm.corpus_score([])
    assert str(info.value) == "`statistics` must be a non-empty list of statistics arrays; got []."


def test_fixture_ranks_the_fluent_system_first():
    """The fixture's systems are written fluent (A), with grammatical slips (B) and word salad (C)."""
    candidates, references = _fixture()
    for scorer in (Stm(), Hwcm(trees="brackets"), Dstm(trees="brackets")):
        corpus = {}
        for system in "ABC":
            rows = [c for c in candidates if c["system"] == system]
            corpus[system] = scorer.corpus_score([scorer.statistics(c["candidate"], references[c["input"]])
                                                  for c in rows])[scorer.name]
        assert corpus["A"] > corpus["B"] > corpus["C"], (scorer.name, corpus)


def test_inputs_not_mutated_and_list_of_lines_equals_text():
    refs = [RED_PEN]
    Hwcm().score(RED_PEN, refs)
    assert refs == [RED_PEN]
    assert Hwcm().score(RED_PEN.splitlines(), [RED_PEN]) == Hwcm().score(RED_PEN, [RED_PEN])


# ------------------------------------------------------------------ CLI
def _run(argv, capsys):
    from metaeval.cli.main import main

    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_score_command_with_trees(tmp_path, capsys):
    out = tmp_path / "scores.csv"
    code, stdout, err = _run([
        "score", "--candidates", str(FIXTURE / "candidates.jsonl"), "--references", str(FIXTURE / "references.jsonl"),
        "--metric", "stm", "--metric", "hwcm", "--metric-option", "hwcm.trees=brackets",
        "--metric-option", "stm.depth=2", "--output", str(out), "--no-progress"], capsys)
    assert code == 0, err
    assert "metric:hwcm|depth:4|lowercase:no|trees:brackets-collins99-heads" in (stdout + err).replace("\n  ", "")
    import pandas as pd

    frame = pd.read_csv(out)
    assert list(frame.columns) == ["system", "input", "stm", "hwcm"] and len(frame) == 18
    candidates, references = _fixture()
    first = candidates[0]
    row = frame[(frame.system == first["system"]) & (frame.input == int(first["input"]))].iloc[0]
    assert row.stm == pytest.approx(Stm(depth=2).score(first["candidate"], references[first["input"]])["stm"])


def test_score_command_malformed_tree_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"system": "A", "input": "1", "candidate": "(S (NP (NN x))"}) + "\n")
    code, stdout, err = _run(["score", "--candidates", bad, "--references", FIXTURE / "references.jsonl",
                              "--metric", "stm", "--output", tmp_path / "o.csv", "--no-progress"], capsys)
    assert code == 2
    assert err.strip().splitlines() == [(
        "metaeval: error: `candidate` must be well-formed parse trees; got line 1: 1 bracket(s) opened (the last on "
        "line 1) are never closed (unbalanced brackets).")]
    assert not (tmp_path / "o.csv").exists()


def test_corpus_statistics_for_corpus_metric(tmp_path):
    """`--corpus-metric hwcm` path: statistics per (system, input) cell aligned with a ScoreSet."""
    import metaeval as me
    from metaeval.scoring.corpus import CORPUS_METRICS, corpus_statistics

    assert {"stm", "hwcm", "dstm"} <= set(CORPUS_METRICS)
    candidates, references = _fixture()
    ds = me.score(FIXTURE / "candidates.jsonl", FIXTURE / "references.jsonl", metrics=[Stm()])
    stats, aggregate = corpus_statistics(ds, FIXTURE / "candidates.jsonl", FIXTURE / "references.jsonl", "hwcm",
                                         trees="brackets")
    assert stats.shape == (3, 6, 8)
    hwcm = Hwcm(trees="brackets")
    row = ds.systems.index("C") if isinstance(ds.systems, list) else list(ds.systems).index("C")
    expected = hwcm.corpus_score([hwcm.statistics(c["candidate"], references[c["input"]])
                                  for c in candidates if c["system"] == "C"])["hwcm"]
    assert aggregate(stats[row].sum(axis=0)) == pytest.approx(expected)


# ------------------------------------------------------------------ real data: SummEval parsed with spaCy
def test_summeval_statistics_match_the_texts(shared_data):
    """scripts/syntactic_summeval.py stored HWCM/DSTM statistics of SummEval parsed by spaCy (numbers only).

    Size-1 units need no parse: t1 is the summary's token count, m1 its lower-cased unigram matches clipped
    by the max over the 11 references; the file must agree on all 1600 rows (for HWCM and DSTM alike).
    """
    import pandas as pd

    stats = pd.read_csv(FIXTURE / "summeval_statistics.csv.gz")
    texts = [json.loads(line) for line in (shared_data / "summeval" / "texts.jsonl").read_text().splitlines()]
    assert len(stats) == len(texts) == 1600
    for row, record in zip(stats.itertuples(index=False), texts):
        assert (row.system, row.input) == (record["system_id"], record["doc_id"])
        hyp = Counter(record["summary"].lower().split())
        refs = [Counter(r.lower().split()) for r in record["references"]]
        clipped = sum(min(c, max(r[w] for r in refs)) for w, c in hyp.items())
        assert row[2] == clipped and row[6] == sum(hyp.values()), record["doc_id"]  # hwcm.m1, hwcm.t1
        assert row[10] == clipped and row[13] == sum(hyp.values())  # dstm.m1, dstm.t1
    values = stats.iloc[:, 2:].to_numpy()
    for name, start, depth in (("hwcm", 0, 4), ("dstm", 8, 3)):
        m, t = values[:, start:start + depth], values[:, start + depth:start + 2 * depth]
        assert (m <= t).all() and (m >= 0).all(), name
        assert (np.diff(t, axis=1) <= 0).all(), name  # fewer chains / subtrees as the size grows


def test_deep_trees_up_to_the_limit_and_one_line_error_beyond():
    from metaeval.metrics.syntactic_trees import MAX_TREE_DEPTH

    n = MAX_TREE_DEPTH
    tree = "(X " * n + "w" + ")" * n
    chain = conll(" ".join(["w"] * n), [i + 1 if i < n else 0 for i in range(1, n + 1)])
    for scorer, text in ((Stm(), tree), (Hwcm(trees="brackets"), tree), (Dstm(trees="brackets"), tree),
                         (Hwcm(), chain), (Dstm(), chain)):
        assert scorer.score(text, [text])[scorer.name] == 1.0, scorer
    with pytest.raises(ParameterError) as info:
        Stm().score("(X " + tree + ")", [tree])
    assert str(info.value) == ("`candidate` must be well-formed parse trees; got line 1: brackets must nest at most "
                               "300 deep; got a deeper tree.")
    deeper = conll(" ".join(["w"] * (n + 1)), [i + 1 if i <= n else 0 for i in range(1, n + 2)])
    with pytest.raises(ParameterError) as info:
        Hwcm().score(deeper, [chain])
    assert str(info.value) == ("`candidate` must be well-formed parse trees; got line 1: a path from a token to its "
                               "root must have at most 300 tokens; got 301.")


def test_score_command_with_conll_texts(tmp_path, capsys):
    cands = tmp_path / "c.jsonl"
    refs = tmp_path / "r.jsonl"
    cands.write_text("\n".join(json.dumps({"system": s, "input": "1", "candidate": text}) for s, text in
                               (("full", RED_PEN), ("short", conll("I have a pen", [2, 0, 4, 2])))) + "\n")
    refs.write_text(json.dumps({"input": "1", "references": [RED_PEN]}) + "\n")
    out = tmp_path / "s.csv"
    code, _, err = _run(["score", "--candidates", cands, "--references", refs, "--metric", "hwcm", "--metric",
                         "dstm", "--metric-option", "hwcm.depth=2", "--output", out, "--no-progress"], capsys)
    assert code == 0, err
    import pandas as pd

    frame = pd.read_csv(out).set_index("system")
    assert frame.loc["full", "hwcm"] == 1.0 and frame.loc["full", "dstm"] == 1.0
    assert frame.loc["short", "hwcm"] == pytest.approx((4 / 4 + 3 / 3) / 2)  # all its units are in the reference
    # dstm depth 2 of "I have a pen": have(I pen) matches, pen(a) does not (the reference has pen(a red))
    assert frame.loc["short", "dstm"] == pytest.approx((4 / 4 + 1 / 2 + 0 / 1) / 3)


def test_reference_memo_does_not_change_scores_nor_travel():
    import pickle

    candidates, references = _fixture()
    fresh = [Stm().statistics(c["candidate"], references[c["input"]]) for c in candidates]
    stm = Stm()
    again = [stm.statistics(c["candidate"], references[c["input"]]) for c in candidates]
    assert all(np.array_equal(a, b) for a, b in zip(fresh, again))
    assert len(stm._memo) == 12 and pickle.loads(pickle.dumps(stm))._memo == {}
