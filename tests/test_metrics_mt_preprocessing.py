"""MT preprocessing (Leusch et al. 2005): each option and each reference-length strategy on hand-computed
cases, the paper's Table 1, equality with sacrebleu / mteval where the options coincide, signatures, and
unchanged defaults."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from metaeval.cli.main import main
from metaeval.errors import ParameterError
from metaeval.metrics import Bleu, Nist, Per, Ter, Wer, get_scorer
from metaeval.metrics.mt_preprocessing import (
    PRESETS,
    MtPreprocessing,
    expand_contractions,
    join_abbreviations,
    reference_errors,
    reference_length,
    resolve_preprocessing,
)

# Leusch et al. (2005), Table 1: one candidate under the four tokenization methods.
TABLE1 = 'Powell said: "We\'d not be alone; that\'s for sure."'


def _summeval(shared_data, n):
    with open(shared_data / "summeval" / "texts.jsonl", encoding="utf-8") as stream:
        rows = [json.loads(line) for line, _ in zip(stream, range(n))]
    return [r["summary"] for r in rows], [[r["references"][k] for r in rows] for k in range(11)]


# -- validation (messages pinned) ---------------------------------------------------------------------

@pytest.mark.parametrize("build, message", [
    (lambda: MtPreprocessing(tokenize="moses"),
     "`tokenize` must be one of 'whitespace', 'mteval', 'punctuation'; got 'moses'."),
    (lambda: MtPreprocessing(boundaries="top"), "`boundaries` must be one of 'none', 'start', 'end', 'both'; got 'top'."),
    (lambda: MtPreprocessing(lowercase="yes"), "`lowercase` must be True or False; got 'yes'."),
    (lambda: resolve_preprocessing("best"),
     "`preprocessing` must be one of 'none', 'mteval', 'leusch-baseline', 'leusch-best'; got 'best'."),
    (lambda: resolve_preprocessing({"case": True}),
     "the keys of `preprocessing` must be among 'preset', 'tokenize', 'lowercase', 'remove_punctuation', "
     "'contractions', 'abbreviations', 'boundaries'; got 'case'."),
    (lambda: resolve_preprocessing(3),
     "`preprocessing` must be None, a preset ('none', 'mteval', 'leusch-baseline', 'leusch-best'), a mapping of "
     "options or an MtPreprocessing; got 3."),
    (lambda: reference_length(3, [], "closest"), "`reference_lengths` must hold at least one length; got []."),
    (lambda: reference_length(3, [2, 4], "best"),
     "`distances` must give one distance per reference for ref_length='best'; got None."),
    (lambda: reference_length(3, [2], "longest"),
     "`ref_length` must be one of 'closest', 'shortest', 'average', 'nearest-to-average', 'average-nearest', "
     "'best'; got 'longest'."),
    (lambda: Bleu(ref_length="best"),
     "`ref_length` must be one of 'closest', 'shortest', 'average', 'nearest-to-average'; got 'best'."),
    (lambda: Bleu(preprocessing="mteval", tokenize="intl"),
     "`tokenize` must be 'none' (or left at '13a') when `preprocessing` is given, which tokenizes; got 'intl'."),
    (lambda: Nist(preprocessing="mteval", tokenize="char"),
     "`tokenize` must be 'none' (or left at '13a') when `preprocessing` is given, which tokenizes; got 'char'."),
    (lambda: Wer(preprocessing="mteval", tokenize="words"),
     "`tokenize` must be left at 'whitespace' when `preprocessing` is given, which tokenizes; got 'words'."),
])
def test_validation_messages(build, message):
    with pytest.raises(ParameterError) as info:
        build()
    assert str(info.value) == message


# -- tokenization, case, punctuation, contractions, abbreviations, boundaries ---------------------------

def test_paper_table1_tokenizations():
    def joined(**options):
        return " ".join(MtPreprocessing(**options).tokens(TABLE1))

    assert joined() == TABLE1  # "original candidate": spaces separate words
    assert joined(tokenize="punctuation", remove_punctuation=True) == "Powell said We d not be alone that s for sure"
    assert joined(tokenize="mteval") == 'Powell said : " We\'d not be alone ; that\'s for sure . "'
    # the paper's fourth row; we keep the case of "We" (Table 1 prints "we"; see docs/mt-preprocessing.md)
    assert joined(tokenize="mteval", contractions=True, abbreviations=True) == \
        'Powell said : " We would not be alone ; that is for sure . "'


def test_case_punctuation_and_mteval_exceptions():
    assert MtPreprocessing(lowercase=True).tokens("The U.N. Said") == ["the", "u.n.", "said"]
    assert MtPreprocessing(tokenize="mteval", remove_punctuation=True).tokens(TABLE1) == \
        ["Powell", "said", "We'd", "not", "be", "alone", "that's", "for", "sure"]
    # mteval keeps decimal points, thousands commas and hyphens inside words; 'punctuation' splits them all
    assert MtPreprocessing(tokenize="mteval").tokens("ex-wife paid 2.6 or 2,630 .") == \
        ["ex-wife", "paid", "2.6", "or", "2,630", "."]
    assert MtPreprocessing(tokenize="punctuation").tokens("ex-wife 2.6") == ["ex", "-", "wife", "2", ".", "6"]
    assert MtPreprocessing(remove_punctuation=True).tokens("a , b -- c 's") == ["a", "b", "c", "'s"]


def test_contractions_joined_and_treebank_forms():
    assert expand_contractions("I don't know ; he does n't ; we can't , they won't") == \
        "I do not know ; he does not ; we can not , they will not"
    assert expand_contractions("It's here , it 's Sterling 's car and the dog's ; let's go") == \
        "It is here , it is Sterling 's car and the dog's ; let us go"
    assert expand_contractions("I'm sure you're right , we've seen it , she'll go , they 'd say") == \
        "I am sure you are right , we have seen it , she will go , they would say"
    assert expand_contractions("DON'T ; Can\u2019t ; ain't ; rock'n'roll") == "DO NOT ; Can not ; ain't ; rock'n'roll"


def test_abbreviations():
    assert join_abbreviations("The U.S. and Mr. Smith , e.g. at 2.6 p.m.") == "The US and Mr Smith , eg at 2.6 pm"
    assert MtPreprocessing(tokenize="mteval").tokens("the U.S. team") == ["the", "U", ".", "S", ".", "team"]
    assert MtPreprocessing(tokenize="mteval", abbreviations=True).tokens("the U.S. team") == ["the", "US", "team"]


@pytest.mark.parametrize("boundaries, expected", [
    ("none", ["a", "b"]), ("start", ["<s>", "a", "b"]), ("end", ["a", "b", "</s>"]),
    ("both", ["<s>", "a", "b", "</s>"]),
])
def test_boundaries(boundaries, expected):
    options = MtPreprocessing(boundaries=boundaries, remove_punctuation=True)  # boundary words survive it
    assert options.tokens("a b") == expected and options.words("a b") == ["a", "b"]
    assert options.n_boundaries == len(expected) - 2


def test_presets_and_resolution():
    assert resolve_preprocessing(None) is None
    assert resolve_preprocessing("leusch-best") == MtPreprocessing(
        tokenize="mteval", lowercase=True, contractions=True, abbreviations=True, boundaries="both")
    assert resolve_preprocessing({"preset": "mteval", "boundaries": "start"}) == \
        MtPreprocessing(tokenize="mteval", boundaries="start")
    assert resolve_preprocessing({"lowercase": True}) == MtPreprocessing(lowercase=True)
    assert PRESETS["leusch-baseline"].boundaries == "none" and PRESETS["none"] == MtPreprocessing()
    assert PRESETS["leusch-best"].describe() == (
        "(tok:mteval,lc:yes,punct:keep,contractions:yes,abbreviations:yes,boundaries:both)")


# -- reference lengths ----------------------------------------------------------------------------------

def test_reference_length_strategies_by_hand():
    lengths, distances = [3, 7, 8], [2, 1, 1]
    assert reference_length(5, lengths, "closest") == 3  # |3-5| = |7-5|: the shorter
    assert reference_length(6, lengths, "closest") == 7
    assert reference_length(5, lengths, "shortest") == 3
    assert reference_length(5, lengths, "average") == 6
    assert reference_length(5, lengths, "nearest-to-average") == 7  # mean 6: 7 is nearest
    assert reference_length(5, [2, 4], "nearest-to-average") == 2  # tie around 3: the shorter
    assert reference_length(5, lengths, "average-nearest", distances=distances) == 7.5  # refs at distance 1
    assert reference_length(5, lengths, "best", distances=distances) == 8  # rates 2/3, 1/7, 1/8
    assert reference_errors(lengths, distances, "best") == 1 and reference_errors(lengths, [2, 1, 3], "best") == 1
    assert reference_errors(lengths, [2, 3, 3], "best") == 3  # 3/8 < 2/3: the best rate wins, not the fewest edits
    assert reference_errors(lengths, [2, 3, 3], "average") == 2
    assert reference_length(2, [0, 4], "best", distances=[0, 1]) == 0  # empty reference, no edits: rate 0


@pytest.mark.parametrize("metric", [Wer, Per])
def test_error_rate_strategies_by_hand(metric):
    # candidate "a b c": WER/PER distances 3 (6 words), 1 (3 words), 1 (2 words)
    refs = ["a b c d e f", "x b c", "a b"]
    expected = {"best": (1, 3), "closest": (1, 3), "shortest": (1, 2), "average": (1, 11 / 3),
                "nearest-to-average": (1, 3), "average-nearest": (1, 2.5)}
    for strategy, stats in expected.items():
        np.testing.assert_allclose(metric(ref_length=strategy).statistics("a b c", refs), stats)
    assert metric().score("a b c", refs) == metric(ref_length="best").score("a b c", refs)


def test_error_rates_ignore_boundaries_property():
    rng = np.random.default_rng(7)
    for _ in range(30):
        c = " ".join(rng.choice(list("abcd"), size=rng.integers(1, 7)))
        refs = [" ".join(rng.choice(list("abcd"), size=rng.integers(1, 7))) for _ in range(3)]
        for metric in (Wer, Per):
            for strategy in ("best", "average-nearest", "closest"):
                plain = metric(preprocessing="none", ref_length=strategy).statistics(c, refs)
                marked = metric(preprocessing={"boundaries": "both"}, ref_length=strategy).statistics(c, refs)
                np.testing.assert_array_equal(plain, marked)


def test_bleu_boundaries_by_hand():
    # "<s> a b </s>" vs "<s> a b c </s>": unigrams (boundaries out) 2/2, bigrams 2/3, trigrams 1/2, 4-grams 0/1
    stats = Bleu(preprocessing={"boundaries": "both"}).statistics("a b", ["a b c"])
    np.testing.assert_array_equal(stats, [2, 3, 2, 2, 1, 0, 2, 3, 2, 1])
    np.testing.assert_array_equal(Bleu(preprocessing="none").statistics("a b", ["a b c"]), [2, 3, 2, 1, 0, 0, 2, 1, 0, 0])
    start = Bleu(preprocessing={"boundaries": "start"}).statistics("a b", ["a b c"])
    np.testing.assert_array_equal(start, [2, 3, 2, 2, 1, 0, 2, 2, 1, 0])  # <s> a, a b | <s> a b | -


def test_bleu_reference_lengths_by_hand():
    refs = ["a b c", "a b c d e f g", "a b c d e f g h"]
    for strategy, r in {"closest": 3, "shortest": 3, "average": 6, "nearest-to-average": 7}.items():
        assert Bleu(ref_length=strategy).statistics("a b c d e", refs)[1] == r
    # fractional average: BP = exp(1 - 5/4), all precisions 1
    score = Bleu(ref_length="average").score("a b c d", ["a b c d", "a b c d e f"])["bleu"]
    assert score == pytest.approx(100 * math.exp(1 - 5 / 4))


def test_ter_reference_lengths_by_hand():
    refs = ["a b c d e f", "x y z w"]  # edits 3 (6 words) and 4 (4 words)
    expected = {"average": (3, 5), "closest": (3, 4), "shortest": (3, 4), "best": (3, 6), "average-nearest": (3, 6),
                "nearest-to-average": (3, 4)}
    for strategy, stats in expected.items():
        np.testing.assert_allclose(Ter(ref_length=strategy).statistics("a b c", refs), stats)
    assert Ter(ref_length="best").score("a b c", refs)["ter"] == pytest.approx(50.0)


def test_nist_boundaries_by_hand():
    # one item, reference "a b": Info(a) = Info(b) = log2(2 words / 1); every longer m-gram has weight 0
    plain = Nist(tokenize="none").statistics("a b", ["a b"])
    marked = Nist(preprocessing={"boundaries": "both"}).statistics("a b", ["a b"])
    np.testing.assert_array_equal(plain, [2, 0, 0, 0, 0, 2, 1, 0, 0, 0, 2])
    np.testing.assert_array_equal(marked, [2, 0, 0, 0, 0, 2, 3, 2, 1, 0, 2])
    assert Nist(preprocessing={"boundaries": "both"}).score("a b", ["a b"]) == {"nist": 1.0}


# -- equality with sacrebleu / mteval where the options coincide (real data) -----------------------------

def test_preprocessed_paths_equal_sacrebleu_on_summeval(shared_data):
    hyps, refs = _summeval(shared_data, 60)
    np.testing.assert_array_equal(Bleu(preprocessing="mteval").item_statistics(hyps, refs),
                                  Bleu().item_statistics(hyps, refs))
    np.testing.assert_array_equal(Bleu(preprocessing="none").item_statistics(hyps, refs),
                                  Bleu(tokenize="none").item_statistics(hyps, refs))
    np.testing.assert_array_equal(Nist(preprocessing="mteval").item_statistics(hyps, refs),
                                  Nist().item_statistics(hyps, refs))
    few = [r[:15] for r in refs]
    np.testing.assert_array_equal(Wer(preprocessing="none").item_statistics(hyps[:15], few),
                                  Wer().item_statistics(hyps[:15], few))
    # sacrebleu's TER (block shifts) takes ~0.4 s per SummEval pair: 3 items x 2 references
    few = [r[:3] for r in refs[:2]]
    np.testing.assert_allclose(Ter(preprocessing="none").item_statistics(hyps[:3], few),
                               Ter().item_statistics(hyps[:3], few))


def test_missing_references_in_a_stream():
    hyps, streams = ["a b c", "x y"], [["a b c", "x y z"], ["a b", None]]  # item 2 has one reference
    np.testing.assert_array_equal(Bleu(preprocessing="none").item_statistics(hyps, streams),
                                  Bleu(tokenize="none").item_statistics(hyps, streams))
    np.testing.assert_array_equal(Bleu(ref_length="average").item_statistics(hyps, streams)[:, 1], [2.5, 3])
    np.testing.assert_allclose(Ter(ref_length="shortest").item_statistics(hyps, streams), [[0, 2], [1, 3]])


def test_options_move_scores_on_summeval(shared_data):
    hyps, refs = _summeval(shared_data, 40)
    base = Bleu().corpus_score(Bleu().item_statistics(hyps, refs))["bleu"]
    for options in ({"preprocessing": "leusch-best"}, {"ref_length": "average"}, {"preprocessing": "leusch-baseline"}):
        bleu = Bleu(**options)
        assert bleu.corpus_score(bleu.item_statistics(hyps, refs))["bleu"] != pytest.approx(base)


# -- defaults and signatures --------------------------------------------------------------------------

def test_defaults_unchanged():
    import sacrebleu

    hyp, refs = "The cat sat on the mat .", ["The cat is on the mat .", "A cat sat on a mat ."]
    assert Bleu().score(hyp, refs)["bleu"] == pytest.approx(sacrebleu.sentence_bleu(hyp, refs).score, abs=0)
    assert Ter().score(hyp, refs)["ter"] == pytest.approx(sacrebleu.sentence_ter(hyp, refs).score, abs=0)
    v = sacrebleu.__version__
    assert str(Bleu().signature).startswith(
        f"metric:bleu|max_ngram_order:4|sacrebleu:(case:mixed|eff:yes|tok:13a|smooth:exp|version:{v})|scale:0-100|")
    assert str(Wer().signature).startswith("metric:wer|tokenize:whitespace|lowercase:no|references:best|scale:0-1|")
    assert "preprocessing" not in str(Nist().signature) and "preprocessing" not in str(Ter().signature)


def test_signatures_record_the_options():
    prep = PRESETS["leusch-best"].describe()
    assert str(Bleu(preprocessing="leusch-best", ref_length="average").signature).startswith(
        f"metric:bleu|max_ngram_order:4|preprocessing:{prep}|ref_length:average|sacrebleu:(case:mixed|eff:yes|tok:none|")
    assert str(Ter(ref_length="best").signature).startswith("metric:ter|ref_length:best|sacrebleu:(")
    assert str(Per(preprocessing="mteval", ref_length="closest").signature).startswith(
        "metric:per|tokenize:whitespace|lowercase:no|preprocessing:(tok:mteval,lc:no,punct:keep,contractions:no,"
        "abbreviations:no,boundaries:none)|references:closest|")
    assert f"|preprocessing:{prep}|max_ngram_order:5|ref_length:closest|" in str(
        Nist(preprocessing="leusch-best", ref_length="closest").signature)
    # equal options, equal signatures; get_scorer takes the same keywords
    assert str(get_scorer("bleu", preprocessing={"preset": "leusch-best"}).signature) == \
        str(Bleu(preprocessing="leusch-best").signature)


# -- CLI ------------------------------------------------------------------------------------------------

def test_cli_preset_and_options(tmp_path, capsys):
    c = tmp_path / "c.jsonl"
    r = tmp_path / "r.jsonl"
    c.write_text("".join(json.dumps({"system": s, "input": f"d{j}", "candidate": f"We don't know , {s} {j} ."}) + "\n"
                         for s in ("A", "B") for j in range(3)))
    r.write_text("".join(json.dumps({"input": f"d{j}", "references": [f"we do not know , A {j} .", "no idea"]}) + "\n"
                         for j in range(3)))
    out = tmp_path / "s.csv"
    code = main(["score", "--candidates", str(c), "--references", str(r), "--metric", "bleu", "--metric", "wer",
                 "--metric", "chrf", "--mt-preprocessing", "leusch-baseline", "--metric-option", "wer.ref_length=average",
                 "--output", str(out), "--workers", "1", "--no-progress"])
    stdout, err = capsys.readouterr()
    assert code == 0, err
    signatures = json.loads((tmp_path / "s.csv.signatures.json").read_text())["signatures"]
    assert "contractions:yes" in signatures["bleu"] and "references:average" in signatures["wer"]
    assert "preprocessing" not in signatures["chrf"]
    import pandas as pd

    scores = pd.read_csv(out).set_index(["system", "input"])
    assert scores.loc[("A", "d0"), "wer"] == 0.0  # "We don't" -> "we do not" (lower-cased, expanded)
    assert scores.loc[("A", "d0"), "bleu"] == pytest.approx(100.0)
    code = main(["score", "--candidates", str(c), "--references", str(r), "--metric", "chrf", "--mt-preprocessing",
                 "leusch-best", "--output", str(out)])
    stdout, err = capsys.readouterr()
    assert code == 2 and err.strip().splitlines() == [
        "metaeval: error: `--mt-preprocessing` must go with an MT metric (bleu, nist, ter, wer, per); "
        "got 'leusch-best' with chrf."]
    code = main(["score", "--candidates", str(c), "--references", str(r), "--metric", "bleu", "--mt-preprocessing",
                 "best", "--output", str(out)])
    stdout, err = capsys.readouterr()
    assert code == 2 and err.strip() == ("metaeval: error: `--mt-preprocessing` must be one of 'none', 'mteval', "
                                         "'leusch-baseline', 'leusch-best'; got 'best'.")
