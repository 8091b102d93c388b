"""BLEU, chrF and TER through sacrebleu: equal to sacrebleu's own sentence and corpus scores on SummEval."""
from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
import sacrebleu

from metaeval.errors import ParameterError
from metaeval.metrics import CorpusScorer, Scorer, get_scorer
from metaeval.metrics.corpus_statistics import BleuStatistic, CorpusStatistic
from metaeval.metrics.sacrebleu_metrics import Bleu, Chrf, Ter


@pytest.fixture(scope="module")
def summeval(shared_data):
    with open(shared_data / "summeval" / "texts.jsonl", encoding="utf-8") as f:
        rows = [json.loads(line) for _, line in zip(range(40), f)]
    return [r["summary"] for r in rows], [r["references"][:3] for r in rows]


def _first_sentence(text: str) -> str:
    return text.split(" . ")[0] + " ."


# ----------------------------------------------------------------------------- validation
def test_validation_messages():
    with pytest.raises(ParameterError) as info:
        Bleu(tokenize="spm")
    assert str(info.value) == "`tokenize` must be one of '13a', 'none', 'zh', 'intl', 'char'; got 'spm'."
    with pytest.raises(ParameterError) as info:
        Bleu(smooth_value=-1)
    assert str(info.value) == "`smooth_value` must be a number > 0 or None; got -1."
    with pytest.raises(ParameterError) as info:
        Chrf(beta=0)
    assert str(info.value) == "`beta` must be an integer >= 1; got 0."
    with pytest.raises(ParameterError) as info:
        Ter(normalized="yes")
    assert str(info.value) == "`normalized` must be True or False; got 'yes'."
    with pytest.raises(ParameterError) as info:
        Bleu().score("a b", [])
    assert str(info.value) == (
        "`references` must be a non-empty list of references (each a text or a list of sentences); got []."
    )
    with pytest.raises(ParameterError) as info:
        Bleu().score(3, ["a"])
    assert str(info.value) == "`candidate` must be a text or a list of sentences (str); got 3."
    with pytest.raises(ParameterError) as info:
        Bleu().corpus_score([])
    assert str(info.value) == "`statistics` must be a non-empty list of statistics arrays; got []."


# ----------------------------------------------------------------------------- protocol
@pytest.mark.parametrize("cls", [Bleu, Chrf, Ter])
def test_protocols_and_pickling(cls):
    scorer = cls()
    assert isinstance(scorer, Scorer) and isinstance(scorer, CorpusScorer)
    assert isinstance(scorer, CorpusStatistic)
    again = pickle.loads(pickle.dumps(scorer))
    assert str(again.signature) == str(scorer.signature)
    assert again.score("the cat sat on the mat", ["a cat sat on a mat"]) == scorer.score(
        "the cat sat on the mat", ["a cat sat on a mat"]
    )


def test_signatures_keep_sacrebleu_signatures():
    v = sacrebleu.__version__
    assert str(Bleu().signature).startswith(
        f"metric:bleu|max_ngram_order:4|sacrebleu:(case:mixed|eff:yes|tok:13a|smooth:exp|version:{v})|scale:0-100|version:"
    )
    assert str(Chrf(word_order=2).signature).startswith(
        f"metric:chrf|beta:2|sacrebleu:(case:mixed|eff:yes|nc:6|nw:2|space:no|version:{v})|scale:0-100|version:"
    )
    assert str(Ter().signature).startswith(
        f"metric:ter|sacrebleu:(case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:{v})|scale:0-100|version:"
    )
    assert str(Bleu(lowercase=True).signature) != str(Bleu().signature)


def test_sentence_lists_and_lines_are_one_segment():
    bleu = Bleu()
    a = bleu.score(["the cat sat .", "it was happy ."], [["a cat sat .", "it was glad ."]])
    b = bleu.score("the cat sat .\nit was happy .", ["a cat sat . it was glad ."])
    c = sacrebleu.sentence_bleu("the cat sat . it was happy .", ["a cat sat . it was glad ."]).score
    assert a == b == {"bleu": c}


# ----------------------------------------------------------------------------- against sacrebleu
def test_bleu_equals_sacrebleu_on_summeval(summeval):
    hyps, refs = summeval
    bleu = Bleu()
    for h, r in zip(hyps, refs):
        assert bleu.score(h, r)["bleu"] == sacrebleu.sentence_bleu(h, r).score
    stats = [bleu.statistics(h, r) for h, r in zip(hyps, refs)]
    streams = [[r[k] for r in refs] for k in range(3)]
    expected = sacrebleu.corpus_bleu(hyps, streams, force=True).score
    assert bleu.corpus_score(stats)["bleu"] == pytest.approx(expected, abs=1e-12)
    # the CorpusStatistic layout gives the same statistics and scores as the analyses' BleuStatistic
    items = bleu.item_statistics(hyps, streams)
    np.testing.assert_array_equal(items, np.vstack(stats))
    np.testing.assert_array_equal(items, BleuStatistic(effective_order=True).item_statistics(hyps, streams))
    assert bleu.aggregate(items.sum(axis=0)) == pytest.approx(expected, abs=1e-12)
    # statistics of a resample re-aggregate like sacrebleu on the resampled texts
    idx = np.random.default_rng(0).integers(0, len(hyps), size=len(hyps))
    resampled = sacrebleu.corpus_bleu([hyps[i] for i in idx], [[s[i] for i in idx] for s in streams], force=True)
    assert bleu.corpus_score([stats[i] for i in idx])["bleu"] == pytest.approx(resampled.score, abs=1e-12)


def test_bleu_options_pass_through(summeval):
    hyps, refs = summeval
    bleu = Bleu(lowercase=True, smooth_method="floor", smooth_value=0.2, tokenize="intl")
    for h, r in zip(hyps[:10], refs[:10]):
        expected = sacrebleu.sentence_bleu(h, r, lowercase=True, smooth_method="floor", smooth_value=0.2,
                                           tokenize="intl").score
        assert bleu.score(h, r)["bleu"] == expected


def test_chrf_equals_sacrebleu_on_summeval(summeval):
    hyps, refs = summeval
    hyps, refs = hyps[:15], refs[:15]
    for chrf, kwargs in [(Chrf(), {}), (Chrf(word_order=2), {"word_order": 2})]:
        for h, r in zip(hyps, refs):
            assert chrf.score(h, r)["chrf"] == sacrebleu.sentence_chrf(h, r, **kwargs).score
        stats = [chrf.statistics(h, r) for h, r in zip(hyps, refs)]
        streams = [[r[k] for r in refs] for k in range(3)]
        expected = sacrebleu.corpus_chrf(hyps, streams, **kwargs).score
        assert chrf.corpus_score(stats)["chrf"] == pytest.approx(expected, abs=1e-12)


def test_ter_equals_sacrebleu_on_summeval(summeval):
    # TER's shift search is slow on whole summaries: first sentences keep the test fast.
    hyps = [_first_sentence(h) for h in summeval[0][:15]]
    refs = [[_first_sentence(x) for x in r[:2]] for r in summeval[1][:15]]
    ter = Ter()
    for h, r in zip(hyps, refs):
        assert ter.score(h, r)["ter"] == sacrebleu.sentence_ter(h, r).score
    stats = [ter.statistics(h, r) for h, r in zip(hyps, refs)]
    expected = sacrebleu.corpus_ter(hyps, [[r[k] for r in refs] for k in range(2)]).score
    assert ter.corpus_score(stats)["ter"] == pytest.approx(expected, abs=1e-12)


def test_registry_builds_them():
    assert isinstance(get_scorer("bleu", tokenize="none"), Bleu)
    assert isinstance(get_scorer("chrf"), Chrf) and isinstance(get_scorer("ter"), Ter)
