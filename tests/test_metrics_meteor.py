"""METEOR (Banerjee & Lavie 2005): the paper's numbers, fewest-crossings alignment, WordNet stage."""
from __future__ import annotations

import itertools
import json
import pickle
import warnings

import numpy as np
import pytest

from metaeval.errors import DegenerateWarning, ParameterError
from metaeval.metrics import MetricResourceError, Scorer, get_scorer
from metaeval.metrics.meteor import Meteor, align, meteor_from_alignment
from metaeval.metrics.wordnet import find_wordnet

WORDNET_SKIP = (
    "SKIPPED: WordNet database absent; install the Debian packages wordnet-base and wordnet-sense-index "
    "(`apt-get install wordnet-base wordnet-sense-index`) to test METEOR's synonym stage"
)

PAPER_CANDIDATE = "the president spoke to the audience"
PAPER_REFERENCE = "the president then spoke to the audience"


@pytest.fixture(scope="module")
def wordnet_meteor():
    try:
        find_wordnet()
    except MetricResourceError:
        pytest.skip(WORDNET_SKIP)
    return Meteor()


# ----------------------------------------------------------------------------- validation
def test_validation_messages(tmp_path):
    with pytest.raises(ParameterError) as info:
        Meteor(stages=("exact", "paraphrase"))
    assert str(info.value) == (
        "`stages` must be a non-empty sequence of distinct 'exact', 'stem', 'synonym'; got ('exact', 'paraphrase')."
    )
    with pytest.raises(ParameterError) as info:
        Meteor(alpha=1.5, stages=("exact",))
    assert str(info.value) == "`alpha` must be a number in [0, 1]; got 1.5."
    with pytest.raises(ParameterError) as info:
        Meteor(beta=-1, stages=("exact",))
    assert str(info.value) == "`beta` must be a number >= 0; got -1."
    with pytest.raises(ParameterError) as info:
        Meteor(tokenize="nltk", stages=("exact",))
    assert str(info.value) == "`tokenize` must be one of 'words', 'whitespace'; got 'nltk'."
    with pytest.raises(MetricResourceError) as info:
        Meteor(wordnet_dir=tmp_path)
    assert str(info.value) == (
        f"METEOR's synonym stage needs the WordNet database (index.noun, noun.exc, ...); none found in {tmp_path}: "
        "install the Debian packages with `apt-get install wordnet-base wordnet-sense-index`, or pass "
        "`wordnet_dir=` (CLI: `--wordnet-dir`) pointing at a WordNet 3.0 `dict` directory; or leave out the "
        "synonym stage with `stages=('exact', 'stem')`."
    )


# ----------------------------------------------------------------------------- the paper's numbers
@pytest.mark.parametrize("stages", [("exact",), ("exact", "stem")])
def test_paper_example_without_wordnet(stages):
    m = Meteor(stages=stages)
    assert round(m.score(PAPER_CANDIDATE, [PAPER_REFERENCE])["meteor"], 6) == 0.853462
    assert round(m.score(PAPER_CANDIDATE, [PAPER_CANDIDATE])["meteor"], 6) == 0.997685
    (d,) = m.details(PAPER_CANDIDATE, [PAPER_REFERENCE])
    assert (d["chunks"], d["precision"], d["recall"]) == (2.0, 1.0, 6 / 7)
    assert d["fmean"] == pytest.approx(10 * d["precision"] * d["recall"] / (d["recall"] + 9 * d["precision"]))
    assert d["penalty"] == pytest.approx(0.5 * (2 / 6) ** 3)


def test_paper_example_with_wordnet(wordnet_meteor):
    assert round(wordnet_meteor.score(PAPER_CANDIDATE, [PAPER_REFERENCE])["meteor"], 6) == 0.853462
    assert round(wordnet_meteor.score(PAPER_CANDIDATE, [PAPER_CANDIDATE])["meteor"], 6) == 0.997685


def test_fewest_crossings_choice():
    # "the" twice in the candidate, once in the reference: mapping the second "the" crosses nothing.
    pairs = align("the cat the".split(), "cat the".split(), [("key", lambda t: t)])
    assert pairs == [(1, 0), (2, 1)]
    assert meteor_from_alignment(pairs, 3, 2)["chunks"] == 1.0


def _brute_force(cand, ref):
    """Every maximum one-to-one mapping between equal tokens; the fewest crossings among them."""
    edges = [(i, j) for i in range(len(cand)) for j in range(len(ref)) if cand[i] == ref[j]]
    best_size, best_cross = 0, 0
    for size in range(min(len(cand), len(ref)), -1, -1):
        crossings = [
            sum((a - c) * (b - d) < 0 for (a, b), (c, d) in itertools.combinations(sub, 2))
            for sub in itertools.combinations(edges, size)
            if len({a for a, _ in sub}) == size and len({b for _, b in sub}) == size
        ]
        if crossings:
            return size, min(crossings)
    return best_size, best_cross


def test_alignment_is_maximal_with_fewest_crossings_against_brute_force():
    rng = np.random.default_rng(7)
    for _ in range(150):
        cand = list(rng.choice(list("abc"), size=rng.integers(1, 7)))
        ref = list(rng.choice(list("abcd"), size=rng.integers(1, 7)))
        pairs = align(cand, ref, [("key", lambda t: t)])
        crossings = sum((a - c) * (b - d) < 0 for (a, b), (c, d) in itertools.combinations(pairs, 2))
        assert (len(pairs), crossings) == _brute_force(cand, ref), (cand, ref)


def test_stem_stage_and_best_reference():
    m = Meteor(stages=("exact", "stem"))
    assert m.score("the cats sat", ["the cat sat"])["meteor"] == pytest.approx(1 - 0.5 / 27)
    assert Meteor(stages=("exact",)).score("the cats sat", ["the cat sat"])["meteor"] < m.score(
        "the cats sat", ["the cat sat"]
    )["meteor"]
    best = m.score("the cats sat", ["dogs ran", "the cat sat"])["meteor"]
    assert best == m.score("the cats sat", ["the cat sat"])["meteor"]


def test_synonym_stage(wordnet_meteor):
    (d,) = wordnet_meteor.details("the president talked in the car", ["the president spoke in the automobile"])
    assert len(d["alignment"]) == 6  # talked ~ spoke, car ~ automobile share WordNet synsets
    assert "wordnet:3.0" in str(wordnet_meteor.signature)
    again = pickle.loads(pickle.dumps(wordnet_meteor))
    assert again._wordnet is None
    assert again.score("a b", ["a b"]) == wordnet_meteor.score("a b", ["a b"])


def test_empty_candidate_warns_and_scores_zero():
    m = Meteor(stages=("exact",))
    with pytest.warns(DegenerateWarning, match="must contain tokens for METEOR"):
        assert m.score("", ["a b"]) == {"meteor": 0.0}


def test_protocol_and_signature():
    m = get_scorer("meteor", stages=("exact", "stem"))
    assert isinstance(m, Scorer) and m.name == "meteor"
    assert str(m.signature).startswith(
        "metric:meteor|stages:exact,stem|alpha:0.9|beta:3|gamma:0.5|tokenize:words|lowercase:yes|"
        "stemmer:porter-rouge155|wordnet:none|references:best|max_search_nodes:100000|scale:0-1|version:"
    )


def test_correlates_with_summeval_meteor(shared_data, wordnet_meteor):
    """SummEval's METEOR (the Meteor 1.5 jar, single reference) is a later variant; ours should track it."""
    stored = {}
    with open(shared_data / "summeval" / "meteor.jsonl", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            stored[(r["instance_id"], r["summarizer_id"])] = r["metrics"]["METEOR"]
    ours, theirs = [], []
    with open(shared_data / "summeval" / "texts.jsonl", encoding="utf-8") as f:
        for _, line in zip(range(120), f):
            r = json.loads(line)
            ours.append(wordnet_meteor.score(r["summary"], [r["references"][0]])["meteor"])
            theirs.append(stored[(r["doc_id"], r["system_id"])])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.corrcoef(ours, theirs)[0, 1] > 0.9
