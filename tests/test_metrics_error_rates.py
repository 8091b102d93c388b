"""WER and PER: hand-computed cases, best reference, corpus statistics."""
from __future__ import annotations

import math

import numpy as np
import pytest

from metaeval.errors import DegenerateWarning, ParameterError
from metaeval.metrics import CorpusScorer, get_scorer
from metaeval.metrics.corpus_statistics import CorpusStatistic
from metaeval.metrics.error_rates import Per, Wer, levenshtein


def test_validation_messages():
    with pytest.raises(ParameterError) as info:
        Wer(tokenize="chars")
    assert str(info.value) == "`tokenize` must be one of 'words', 'whitespace'; got 'chars'."
    with pytest.raises(ParameterError) as info:
        Per(lowercase="no")
    assert str(info.value) == "`lowercase` must be True or False; got 'no'."
    with pytest.raises(ParameterError) as info:
        Wer().corpus_score([])
    assert str(info.value) == "`statistics` must be a non-empty list of statistics arrays; got []."


def _brute_levenshtein(a, b):
    if not a or not b:
        return len(a) + len(b)
    return min(_brute_levenshtein(a[1:], b) + 1, _brute_levenshtein(a, b[1:]) + 1,
               _brute_levenshtein(a[1:], b[1:]) + (a[0] != b[0]))


def test_levenshtein_against_recursion():
    rng = np.random.default_rng(3)
    for _ in range(100):
        a = list(rng.choice(list("abc"), size=rng.integers(0, 6)))
        b = list(rng.choice(list("abc"), size=rng.integers(0, 6)))
        assert levenshtein(a, b) == _brute_levenshtein(a, b)


def test_hand_computed():
    # one substitution (b -> x) and one insertion (e) against 5 reference tokens
    assert Wer().score("a b c d", ["a x c d e"]) == {"wer": 2 / 5}
    assert Per().score("d c b a", ["a b c d"]) == {"per": 0.0}
    assert Wer().score("d c b a", ["a b c d"]) == {"wer": 1.0}
    # PER = 1 - (matches - max(0, |c| - |r|)) / |r|: 2 matches, candidate 1 longer
    assert Per().score("a b x y", ["b a z"])["per"] == pytest.approx(1 - (2 - 1) / 3)
    assert Wer(lowercase=True).score("A B", ["a b"]) == {"wer": 0.0}
    assert Wer(tokenize="words").score("a,b", ["a , b"]) == {"wer": 0.0}


def test_best_reference_and_corpus():
    wer = Wer()
    stats = wer.statistics("a b c", ["a b c d e f", "x b c"])
    np.testing.assert_array_equal(stats, [1, 3])  # 1/3 < 3/6
    items = [("a b c", ["a b c d"]), ("x y", ["x z"]), ("p q r s", ["p q"])]
    all_stats = [wer.statistics(c, r) for c, r in items]
    assert wer.corpus_score(all_stats)["wer"] == pytest.approx((1 + 1 + 2) / (4 + 2 + 2))
    assert isinstance(wer, CorpusScorer) and isinstance(wer, CorpusStatistic)
    streams = [[r[0] for _, r in items]]
    sums = wer.item_statistics([c for c, _ in items], streams).sum(axis=0)
    assert wer.aggregate(sums) == pytest.approx(wer.corpus_score(all_stats)["wer"])
    assert wer.score("a b c", ["a b c d"]) == wer.corpus_score([all_stats[0]])


def test_empty_reference_is_nan_with_warning():
    with pytest.warns(DegenerateWarning, match="must contain tokens for WER"):
        assert math.isnan(Wer().score("a b", [""])["wer"])
    assert Per().score("", ["a b"]) == {"per": 1.0}


def test_registry_and_signature():
    assert str(get_scorer("per").signature).startswith("metric:per|tokenize:whitespace|lowercase:no|references:best|")
    assert isinstance(get_scorer("wer"), Wer)
