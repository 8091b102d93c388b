"""NIST (Leusch et al. 2005, sec. 2.1.4; mteval-v13a): hand-computed cases, nltk as oracle, the brevity
penalty, information weights of the whole reference set, sufficient statistics in resampling, CLI."""
from __future__ import annotations

import json
import math
import pickle
from collections import Counter

import numpy as np
import pytest

import metaeval as me
from metaeval.cli.main import main
from metaeval.errors import ParameterError
from metaeval.metrics import CorpusScorer, Nist, get_scorer
from metaeval.metrics.corpus_statistics import CorpusStatistic
from metaeval.metrics.nist import NIST_BETA, information_weights, nist_length_penalty, reference_length

nltk_nist = pytest.importorskip("nltk.translate.nist_score")


# ---------------------------------------------------------------------------------------------- validation
@pytest.mark.parametrize("options, message", [
    ({"tokenize": "spm"}, "`tokenize` must be one of '13a', 'intl', 'none', 'zh', 'char'; got 'spm'."),
    ({"lowercase": "yes"}, "`lowercase` must be True or False; got 'yes'."),
    ({"ref_length": "best"}, "`ref_length` must be one of 'average', 'closest', 'shortest', 'nearest-to-average'; "
                             "got 'best'."),
    ({"info_weights": "global"}, "`info_weights` must be one of 'corpus', 'item'; got 'global'."),
])
def test_validation_messages(options, message):
    with pytest.raises(ParameterError) as info:
        Nist(**options)
    assert str(info.value) == message


def test_validation_messages_of_methods():
    nist = Nist()
    with pytest.raises(ParameterError) as info:
        nist.corpus_score([])
    assert str(info.value) == "`statistics` must be a non-empty list of statistics arrays; got []."
    with pytest.raises(ParameterError) as info:
        nist.aggregate(np.zeros(4))
    assert str(info.value) == "`sums` must have 11 statistics in its last axis; got shape (4,)."
    with pytest.raises(ParameterError) as info:
        nist.with_reference_corpus([[], []])
    assert str(info.value) == "`references` must hold at least one reference; got [[], []]."
    with pytest.raises(ParameterError) as info:
        nist.with_reference_corpus(["a b", "c"])
    assert str(info.value) == ("`references` must be a list with one list of references per item; got "
                               "['a b', 'c'].")
    with pytest.raises(ParameterError) as info:
        nist.item_statistics([], [[]])
    assert str(info.value) == "`hypotheses` must be a non-empty list of strings; got []."
    with pytest.raises(ParameterError) as info:
        reference_length(3, [], "average")
    assert str(info.value) == "`reference_lengths` must hold at least one length; got []."
    with pytest.raises(ParameterError, match=r"^`references` must be a non-empty list"):
        nist.score("a b", [])
    with pytest.raises(ParameterError) as info:
        get_scorer("nist", weights="x")
    assert str(info.value).startswith("the options of metric 'nist' must be among 'info_weights', 'lowercase'")


# ---------------------------------------------------------------------------------------------- definitions
def test_brevity_penalty_is_half_at_two_thirds_and_one_from_one():
    assert nist_length_penalty(2 / 3) == pytest.approx(0.5, abs=1e-15)
    assert nist_length_penalty(1.0) == 1.0 and nist_length_penalty(1.7) == 1.0
    assert nist_length_penalty(0.0) == 0.0 and nist_length_penalty(-1.0) == 0.0
    ratios = np.linspace(0.05, 1.0, 40)
    lp = nist_length_penalty(ratios)
    assert np.all(np.diff(lp) > 0)  # increasing below 1
    np.testing.assert_allclose(lp, np.exp(-math.log(2) * np.log(ratios) ** 2 / math.log(1.5) ** 2), rtol=1e-14)
    assert NIST_BETA == pytest.approx(-math.log(2) / math.log(1.5) ** 2)
    # nltk's nist_length_penalty agrees
    for r in (0.3, 2 / 3, 0.9, 1.0, 1.4):
        assert nist_length_penalty(r) == pytest.approx(nltk_nist.nist_length_penalty(1.0, r), rel=1e-14)


def test_brevity_penalty_in_a_score():
    refs = ["a b c d e f"]  # average length 6
    full = Nist(tokenize="none").score("a b c d e f", refs)["nist"]
    short = Nist(tokenize="none").score("a b c d", refs)["nist"]  # ratio 4/6 = 2/3
    prec_short = Nist(tokenize="none").statistics("a b c d", refs)
    info, counts = prec_short[:5], prec_short[5:10]
    assert short == pytest.approx(0.5 * (info / np.maximum(counts, 1)).sum(), rel=1e-14)
    assert full > short


def test_hand_computed_information_weights_and_score():
    refs = ["a b a", "a c"]  # 5 words: a 3, b 1, c 1; a b 1, b a 1, a c 1; a b a 1
    w = information_weights([r.split() for r in refs])
    assert w[("a",)] == pytest.approx(math.log2(5 / 3)) and w[("b",)] == pytest.approx(math.log2(5))
    assert w[("a", "b")] == pytest.approx(math.log2(3)) and w[("b", "a")] == 0.0 and w[("a", "b", "a")] == 0.0
    nist = Nist(tokenize="none")
    stats = nist.statistics("a b c", refs)
    # unigrams a, b, c matched once each (clipped by the max count over the references); bigram a b
    np.testing.assert_allclose(stats, [math.log2(5 / 3) + 2 * math.log2(5), math.log2(3), 0, 0, 0,
                                       3, 2, 1, 0, 0, 2.5], rtol=1e-14)
    expected = (math.log2(5 / 3) + 2 * math.log2(5)) / 3 + math.log2(3) / 2  # length 3 > 2.5: no penalty
    assert nist.score("a b c", refs)["nist"] == pytest.approx(expected, rel=1e-14)
    # one word against 2.5: penalty at 0.4; 'closest' and 'shortest' use 2 (ratio 0.5)
    one = math.log2(5 / 3)
    assert nist.score("a", refs)["nist"] == pytest.approx(one * nist_length_penalty(0.4), rel=1e-14)
    for strategy in ("closest", "shortest", "nearest-to-average"):
        value = Nist(tokenize="none", ref_length=strategy).score("a", refs)["nist"]
        assert value == pytest.approx(one * nist_length_penalty(0.5), rel=1e-14)
    assert nist.score("z", refs) == {"nist": 0.0}  # nothing matched


def test_orders_without_candidate_ngrams_add_zero_where_nltk_divides_by_zero():
    # 'a b' has no 3-, 4- or 5-grams: mteval divides by max(n_m, 1); nltk raises ZeroDivisionError
    assert Nist(tokenize="none").score("a b", ["a b c"])["nist"] == pytest.approx(
        0.5 * (2 * math.log2(3)) / 2, rel=1e-14)  # unigrams a, b each log2(3); bigram a b log2(1) = 0; ratio 2/3
    with pytest.raises(ZeroDivisionError):
        nltk_nist.corpus_nist([[["a", "b", "c"]]], [["a", "b"]])


def test_reference_length_strategies():
    lengths = [4, 7, 10, 12]  # mean 8.25
    assert reference_length(9, lengths, "average") == 8.25
    assert reference_length(9, lengths, "closest") == 10.0 and reference_length(11, lengths, "closest") == 10.0
    assert reference_length(11, [10, 12], "closest") == 10.0  # tie: the shorter (BLEU's rule)
    assert reference_length(9, lengths, "shortest") == 4.0
    assert reference_length(1, lengths, "nearest-to-average") == 7.0  # |7 - 8.25| < |10 - 8.25|
    assert reference_length(1, [2, 4], "nearest-to-average") == 2.0  # tie around 3: the shorter


def test_tokenizers_lowercase_and_a_pluggable_tokenizer():
    refs = ["The cat sat."]
    assert Nist().tokens("The cat sat.") == ("The", "cat", "sat", ".")
    assert Nist(tokenize="none").tokens("The cat sat.") == ("The", "cat", "sat.")
    assert Nist(lowercase=True).tokens("The Cat") == ("the", "cat")
    assert Nist().score("the cat sat .", refs)["nist"] < Nist(lowercase=True).score("the cat sat .", refs)["nist"]

    def chars(text):
        return list(text.replace(" ", ""))

    custom = Nist(tokenize=chars)
    assert custom.tokens("ab c") == ("a", "b", "c")
    assert "|tok:test_metrics_nist.test_tokenizers_lowercase_and_a_pluggable_tokenizer.<locals>.chars|" in str(
        custom.signature)
    chars.signature = "chars-v1"
    assert "|tok:chars-v1|" in str(Nist(tokenize=chars).signature)


def test_signature_records_every_setting_and_the_weights_corpus():
    nist = Nist()
    assert str(nist.signature) == (f"metric:nist|tok:13a|lowercase:no|max_ngram_order:5|ref_length:average|"
                                   f"info_weights:corpus|lp:mteval-v13a|scale:0-inf|version:{me.__version__}")
    a = nist.with_reference_corpus([["x y"], ["y z", "x"]])
    b = nist.with_reference_corpus([["x", "y z"], ["x y"]])  # same references in another order
    c = nist.with_reference_corpus([["x y"], ["y z"]])
    assert "info_weights:corpus-3refs-sha256:" in str(a.signature)
    assert str(a.signature) == str(b.signature) != str(c.signature)
    assert nist._weights is None  # the original is not changed
    item = Nist(info_weights="item")
    assert item.with_reference_corpus([["x"]]) is item and "|info_weights:item|" in str(item.signature)
    restored = pickle.loads(pickle.dumps(a))
    assert str(restored.signature) == str(a.signature)
    assert restored.score("x y z", ["x y"]) == a.score("x y z", ["x y"])


def test_protocols():
    nist = Nist()
    assert isinstance(nist, CorpusScorer) and isinstance(nist, CorpusStatistic)
    assert get_scorer("nist", ref_length="closest").ref_length == "closest"


# ---------------------------------------------------------------------------------------------- nltk oracle
@pytest.fixture(scope="module")
def summeval_rows(shared_data):
    with open(shared_data / "summeval" / "texts.jsonl", encoding="utf-8") as stream:
        return [json.loads(line) for line in stream]


def test_equals_nltk_with_one_reference_on_summeval(summeval_rows):
    """With one reference per item, mteval's union clipping and average length equal nltk's per-reference rules."""
    nist = Nist()
    for system in ("M0", "M11", "M23"):
        rows = [r for r in summeval_rows if r["system_id"] == system]
        hyps = [r["summary"] for r in rows]
        refs = [r["references"][0] for r in rows]
        ours = nist.corpus_score(nist.item_statistics(hyps, [refs]))["nist"]
        theirs = nltk_nist.corpus_nist([[list(nist.tokens(r))] for r in refs], [list(nist.tokens(h)) for h in hyps])
        assert ours == pytest.approx(theirs, rel=1e-13)
        for h, r in list(zip(hyps, refs))[:10]:  # sentence level: weights from the item's own reference
            expected = nltk_nist.sentence_nist([list(nist.tokens(r))], list(nist.tokens(h)))
            assert nist.score(h, [r])["nist"] == pytest.approx(expected, rel=1e-13)


def _mteval_corpus_nist(hyps, refs, order=5):
    """mteval-v13a's corpus NIST written out from its definition (dict counting, no statistics arrays)."""
    weights = information_weights([r for item in refs for r in item], order)
    info, counts, words, ref_words = [0.0] * order, [0] * order, 0, 0.0
    for h, rs in zip(hyps, refs):
        words += len(h)
        ref_words += sum(map(len, rs)) / len(rs)
        for n in range(1, order + 1):
            cand = Counter(tuple(h[i:i + n]) for i in range(len(h) - n + 1))
            most = {}
            for r in rs:
                for g, c in Counter(tuple(r[i:i + n]) for i in range(len(r) - n + 1)).items():
                    most[g] = max(most.get(g, 0), c)
            info[n - 1] += sum(weights[g] * min(c, most[g]) for g, c in cand.items() if g in most)
            counts[n - 1] += sum(cand.values())
    ratio = words / ref_words
    lp = 1.0 if ratio >= 1 else math.exp(math.log(0.5) / math.log(1.5) ** 2 * math.log(ratio) ** 2)
    return lp * sum(i / max(c, 1) for i, c in zip(info, counts))


def test_multi_reference_follows_mteval_not_nltk(summeval_rows):
    """11 references: mteval clips by the max count over the references and uses the average reference
    length; nltk picks the best single reference per order (and its length). Both numbers are shown."""
    nist = Nist()
    rows = [r for r in summeval_rows if r["system_id"] == "M0"]
    hyps = [list(nist.tokens(r["summary"])) for r in rows]
    refs = [[list(nist.tokens(x)) for x in r["references"]] for r in rows]
    ours = nist.corpus_score(nist.item_statistics([r["summary"] for r in rows],
                                                  [[r["references"][k] for r in rows] for k in range(11)]))["nist"]
    assert ours == pytest.approx(_mteval_corpus_nist(hyps, refs), rel=1e-13)
    theirs = nltk_nist.corpus_nist(refs, hyps)
    assert round(ours, 4) == 7.1823 and round(theirs, 4) == 3.7271  # documented in docs/metrics.md


# ---------------------------------------------------------------------------------------------- corpus weights
def test_corpus_weights_stay_fixed_under_resampling(summeval_rows):
    nist = Nist()
    rows = [r for r in summeval_rows if r["system_id"] == "M5"][:40]
    hyps, refs = [r["summary"] for r in rows], [r["references"] for r in rows]
    streams = [[r[k] for r in refs] for k in range(11)]
    stats = nist.item_statistics(hyps, streams)
    fitted = nist.with_reference_corpus(refs)
    np.testing.assert_array_equal(stats, np.vstack([fitted.statistics(h, r) for h, r in zip(hyps, refs)]))
    # a bootstrap resample re-sums the statistics: the weights are those of all 40 items' references
    idx = np.random.default_rng(0).integers(0, 40, size=40)
    tok_h = [list(nist.tokens(hyps[i])) for i in idx]
    tok_r = [[list(nist.tokens(x)) for x in refs[i]] for i in idx]
    weights = information_weights([list(nist.tokens(x)) for item in refs for x in item])
    resampled = nist.corpus_score(stats[idx])["nist"]
    assert resampled != pytest.approx(_mteval_corpus_nist(tok_h, tok_r), rel=1e-6)  # not refitted
    expected = _resummed(tok_h, tok_r, weights)
    assert resampled == pytest.approx(expected, rel=1e-13)
    # batch: aggregate of many sums at once equals one at a time
    sums = np.stack([stats[np.random.default_rng(s).integers(0, 40, 40)].sum(0) for s in range(5)])
    np.testing.assert_array_equal(nist.aggregate(sums), [nist.aggregate(row) for row in sums])


def _resummed(hyps, refs, weights, order=5):
    info, counts, words, ref_words = np.zeros(order), np.zeros(order), 0, 0.0
    for h, rs in zip(hyps, refs):
        words += len(h)
        ref_words += sum(map(len, rs)) / len(rs)
        for n in range(1, order + 1):
            cand = Counter(tuple(h[i:i + n]) for i in range(len(h) - n + 1))
            most = Counter()
            for r in rs:
                most |= Counter(tuple(r[i:i + n]) for i in range(len(r) - n + 1))
            info[n - 1] += sum(weights.get(g, 0.0) * c for g, c in (cand & most).items())
            counts[n - 1] += sum(cand.values())
    return float((info / np.maximum(counts, 1)).sum() * nist_length_penalty(words / ref_words))


def test_score_engine_uses_the_whole_reference_set(summeval_rows):
    rows = [r for r in summeval_rows if r["system_id"] in ("M0", "M1")][:30]
    cands = {}
    for r in rows:
        cands.setdefault(r["system_id"], {})[r["doc_id"]] = r["summary"]
    refs = {r["doc_id"]: r["references"] for r in rows}
    ds = me.score(cands, refs, metrics=["nist"], progress=False)
    fitted = Nist().with_reference_corpus([refs[d] for d in ds.inputs])
    assert str(ds.signatures["nist"]) == str(fitted.signature)
    for i, system in enumerate(ds.systems):
        for j, doc in enumerate(ds.inputs):
            if doc in cands[system]:
                assert ds.matrix("nist")[i, j] == fitted.score(cands[system][doc], refs[doc])["nist"]
    item = me.score(cands, refs, metrics={"n": Nist(info_weights="item")}, progress=False)
    r0 = rows[0]
    i, j = list(item.systems).index(r0["system_id"]), list(item.inputs).index(r0["doc_id"])
    assert item.matrix("n.nist")[i, j] == Nist().score(r0["summary"], r0["references"])["nist"]
    assert item.matrix("n.nist")[i, j] != ds.matrix("nist")[i, j]


# ---------------------------------------------------------------------------------------------- CLI
@pytest.fixture(scope="module")
def summeval_files(summeval_rows, tmp_path_factory):
    folder = tmp_path_factory.mktemp("nist")
    keep = {"M0", "M5", "M17", "M22"}
    rows = [r for r in summeval_rows if r["system_id"] in keep]
    cands, refs = folder / "cands.jsonl", folder / "refs.jsonl"
    cands.write_text("".join(json.dumps({"system": r["system_id"], "input": r["doc_id"], "candidate": r["summary"]})
                             + "\n" for r in rows), encoding="utf-8")
    references = {r["doc_id"]: r["references"] for r in rows}
    refs.write_text("".join(json.dumps({"input": d, "references": v}) + "\n" for d, v in references.items()),
                    encoding="utf-8")
    return rows, cands, refs, folder


def test_cli_score_and_systems_with_corpus_nist(summeval_files, capsys):
    rows, cands, refs, folder = summeval_files
    scores = folder / "scores.csv"
    assert main(["score", "--candidates", str(cands), "--references", str(refs), "--metric", "nist",
                 "--metric-option", "nist.lowercase=true", "--output", str(scores), "--no-progress"]) == 0
    assert "lowercase:yes" in capsys.readouterr().out
    out = folder / "systems.json"
    argv = ["systems", "--dataset", "summeval", "--scores", str(scores), "--system", "M0", "--system", "M5",
            "--system", "M17", "--system", "M22", "--corpus-metric", "nist", "--candidates", str(cands),
            "--references", str(refs), "--test", "randomization", "--n-resamples", "200", "--seed", "3",
            "--format", "json", "--output", str(out)]
    assert main(argv) == 0, capsys.readouterr().err
    result = json.loads(out.read_text())
    nist = Nist(lowercase=True)  # the options the segments were scored with (carried over), weights from all 100 inputs
    by_system = {}
    for r in rows:
        by_system.setdefault(r["system_id"], []).append(r)
    for system, score in zip(result["systems"], result["scores"]):
        outs = by_system[system]
        stats = nist.item_statistics([r["summary"] for r in outs], [[r["references"][k] for r in outs]
                                                                    for k in range(11)])
        assert score == pytest.approx(nist.corpus_score(stats)["nist"], rel=1e-12)
    assert result["test"] == "randomization" and len(result["pairs"]) == 6


def test_cli_systems_corpus_metric_must_be_the_scorer(summeval_files, capsys):
    rows, cands, refs, folder = summeval_files
    scores = folder / "scores_bleu.csv"  # any numbers: the check comes before any test
    scores.write_text("system,input,nist,bleu\n" + "".join(f"{r['system_id']},{r['doc_id']},1,2\n" for r in rows),
                      encoding="utf-8")
    argv = ["systems", "--dataset", "summeval", "--scores", str(scores), "--scorer", "bleu", "--corpus-metric", "nist",
            "--candidates", str(cands), "--references", str(refs)]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == ("metaeval: error: `--corpus-metric` must name the one scorer compared "
                                               "(--scorer); got 'nist' for scorer 'bleu'.")


def test_worker_processes_and_the_cache_give_the_same_scores(summeval_rows, tmp_path):
    rows = [r for r in summeval_rows if r["system_id"] == "M9"][:12]
    cands = {"M9": {r["doc_id"]: r["summary"] for r in rows}}
    refs = {r["doc_id"]: r["references"] for r in rows}
    serial = me.score(cands, refs, metrics=["nist"], progress=False)
    cache = tmp_path / "nist.cache"
    parallel = me.score(cands, refs, metrics=["nist"], workers=2, cache=cache, progress=False)
    np.testing.assert_array_equal(serial.matrix("nist"), parallel.matrix("nist"))
    again = me.score(cands, refs, metrics=["nist"], cache=cache, progress=False)
    assert again.run.metrics[0].cached == 12 and again.run.metrics[0].computed == 0
    np.testing.assert_array_equal(serial.matrix("nist"), again.matrix("nist"))
    # other references, other weights: nothing is taken from the cache
    fewer = me.score(cands, {d: v[:5] for d, v in refs.items()}, metrics=["nist"], cache=cache, progress=False)
    assert fewer.run.metrics[0].cached == 0
