"""Corpus metrics in the analyses (delta, gap, topk, stability, verdicts) and their commands (issue 12).

Oracles: (a) a mean metric written as corpus statistics ``(x, 1)`` with the aggregate ``s0 / s1`` gives the
result of the plain matrix, even when the ScoreSet's own cells of that metric are noise (so the corpus
statistics, and their inputs, are what is used); (b) on the SummEval texts, the point estimates recomputed
by hand from sacrebleu.corpus_bleu system scores and the experts' mean relevance.
"""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from scipy import stats

import metaeval as me
from metaeval.analyses.stability import _sample_weights
from metaeval.cli.main import main
from metaeval.errors import ParameterError
from metaeval.metrics.corpus_statistics import MeanStatistic
from metaeval.runtime.tasks import chunk_seeds

HUMAN = "expert.relevance"
MEAN = MeanStatistic().aggregate  # s[..., 0] / s[..., 1]


def _as_corpus(x):
    """A mean metric as corpus statistics: (x, 1) per cell, NaN where x is missing."""
    return np.stack([x, np.where(np.isfinite(x), 1.0, np.nan)], axis=-1), MEAN


@pytest.fixture(scope="module")
def pair():
    """(plain, noisy, x): 14 systems x 40 inputs; ``noisy[metric]`` is `plain` with that metric's cells replaced
    by noise, x is 'a' of `plain`.

    'a' lacks some cells (those inputs leave the judged subset), the human lacks whole inputs (so the full
    test set differs from the judged subset), 'b' is complete.
    """
    rng = np.random.default_rng(7)
    n, m = 14, 40
    human = rng.normal(size=(n, m)) + np.arange(n)[:, None] / 4
    x = human + rng.normal(scale=1.5, size=(n, m))
    b = human + rng.normal(scale=3.0, size=(n, m))
    x[2, 3] = x[5, 7] = x[0, 11] = np.nan
    human[:, 30:] = np.nan
    labels = dict(systems=[f"s{i}" for i in range(n)], inputs=[f"d{j}" for j in range(m)], humans=["human"])
    plain = me.ScoreSet.from_matrices({"a": x, "b": b, "human": human}, **labels)
    noisy = {metric: me.ScoreSet.from_matrices({"a": x, "b": b, "human": human, metric: rng.normal(size=(n, m))},
                                               **labels) for metric in ("a", "b")}
    return plain, noisy, x


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _same(r1, r2, fields):
    for f in fields:
        np.testing.assert_allclose(np.asarray(getattr(r1, f), dtype=float), np.asarray(getattr(r2, f), dtype=float),
                                   rtol=0, atol=1e-12, err_msg=f)


# --- (a) a mean metric as corpus statistics is the plain matrix --------------------------------------------------


@pytest.mark.parametrize("full_test_set", [False, True])
def test_delta_mean_as_corpus(pair, full_test_set):
    plain, noisy, x = pair
    metric = "b" if full_test_set else "a"  # full test set: a corpus metric uses complete inputs only
    stats_ = _as_corpus(plain.matrix(metric))
    ds = noisy[metric]
    kw = dict(fractions=[0.3, 0.6, 1.0], n_resamples=60, rng=3, full_test_set=full_test_set)
    expected = _quiet(me.delta_correlations, plain, ["a", "b"], "human", **kw)
    got = _quiet(me.delta_correlations, ds, ["a", "b"], "human", corpus_statistics={metric: stats_}, **kw)
    _same(expected, got, ["metric_scores", "human_scores", "upper", "statistic", "ci_low", "ci_high", "n_pairs",
                          "n_resamples_dropped"])
    assert f"corpus_level:{metric}|" in str(got.signature)
    assert "corpus_level" not in str(expected.signature)


def test_gap_mean_as_corpus(pair):
    plain, noisy, x = pair
    kw = dict(deltas=[0.5], n_resamples=40, rng=1)
    expected = _quiet(me.gap_agreement, plain, ["a", "b"], "human", **kw)
    got = _quiet(me.gap_agreement, noisy["a"], ["a", "b"], "human", corpus_statistics={"a": _as_corpus(x)}, **kw)
    _same(expected, got, ["coefficients", "probability", "low", "high", "at_delta", "n_pairs", "agreement",
                          "max_gap"])
    assert "corpus_level:a|" in str(got.signature)


@pytest.mark.parametrize("full_test_set", [False, True])
def test_topk_mean_as_corpus(pair, full_test_set):
    plain, noisy, x = pair
    metric = "b" if full_test_set else "a"
    ds = noisy[metric]
    kw = dict(ks=[14, 8, 4], coefficient="pearson", n_resamples=50, rng=2, full_test_set=full_test_set)
    expected = _quiet(me.topk_correlations, plain, ["a", "b"], "human", **kw)
    got = _quiet(me.topk_correlations, ds, ["a", "b"], "human",
                 corpus_statistics={metric: _as_corpus(plain.matrix(metric))}, **kw)
    _same(expected, got, ["statistic", "ci_low", "ci_high", "n_resamples_dropped"])
    assert got.top_systems == expected.top_systems
    assert f"corpus_level:{metric}|" in str(got.signature)


@pytest.mark.parametrize("sampling, full_test_set", [("disjoint", False), ("replacement", False),
                                                     ("disjoint", True)])
def test_stability_mean_as_corpus(pair, sampling, full_test_set):
    plain, noisy, x = pair
    metric = "b" if full_test_set else "a"
    ds = noisy[metric]
    kw = dict(sizes=[5, 12], n_repetitions=30, sampling=sampling, rng=4, full_test_set=full_test_set)
    expected = _quiet(me.ranking_stability, plain, ["a", "b"], "human", **kw)
    got = _quiet(me.ranking_stability, ds, ["a", "b"], "human",
                 corpus_statistics={metric: _as_corpus(plain.matrix(metric))}, **kw)
    _same(expected, got, ["samples", "mean", "sd", "n_defined", "n_inputs"])
    assert f"corpus_level:{metric}|" in str(got.signature)


def test_stability_workers_receive_the_statistics(pair):
    plain, noisy, x = pair
    kw = dict(sizes=[10], n_repetitions=250, rng=5, corpus_statistics={"a": _as_corpus(x)})
    serial = _quiet(me.ranking_stability, noisy["a"], ["a"], "human", **kw)
    pooled = _quiet(me.ranking_stability, noisy["a"], ["a"], "human", workers=2, **kw)
    np.testing.assert_array_equal(serial.samples, pooled.samples)


@pytest.mark.parametrize("test", ["bootstrap", "randomization"])
def test_verdicts_mean_as_corpus(pair, test):
    plain, noisy, x = pair
    kw = dict(test=test, n_resamples=80, rng=6)
    expected = _quiet(me.system_verdicts, plain, ["a", "b"], "human", **kw)
    got = _quiet(me.system_verdicts, noisy["a"], ["a", "b"], "human", corpus_statistics={"a": _as_corpus(x)}, **kw)
    _same(expected, got, ["metric_deltas", "metric_pvalues", "human_deltas", "human_pvalues", "f1", "confusion"])
    assert (got.metric_verdicts == expected.metric_verdicts).all()
    assert "corpus_level:a|" in str(got.signature)


def test_full_test_set_corpus_metric_uses_inputs_with_statistics_for_every_system(pair):
    """Full test set: 'a' lacks 3 cells; as a corpus metric it covers the 37 inputs every system has."""
    plain, noisy, x = pair
    complete = np.isfinite(x).all(axis=0)
    corpus = {"a": _as_corpus(x)}
    r = _quiet(me.delta_correlations, noisy["a"], ["a", "b"], "human", full_test_set=True, n_resamples=0,
               corpus_statistics=corpus)
    np.testing.assert_allclose(r.metric_scores[0], x[:, complete].mean(axis=1), rtol=0, atol=1e-12)
    np.testing.assert_allclose(r.metric_scores[1], plain.matrix("b").mean(axis=1), rtol=0, atol=1e-12)
    np.testing.assert_allclose(r.human_scores, plain.matrix("human")[:, :30].mean(axis=1), rtol=0, atol=1e-12)
    s = _quiet(me.ranking_stability, noisy["a"], ["a", "b"], "human", full_test_set=True, sizes=[5],
               n_repetitions=5, rng=0, corpus_statistics=corpus)
    assert s.n_inputs.tolist() == [30, 37, 40]


@pytest.mark.parametrize("fn", [me.delta_correlations, me.gap_agreement, me.topk_correlations,
                                me.ranking_stability, me.system_verdicts])
def test_corpus_statistics_validated(pair, fn):
    plain, _, x = pair
    statistics, _ = _as_corpus(x)
    with pytest.raises(ParameterError, match=r"^`corpus_statistics\['a'\]` must cover the 14 systems x 40 inputs "
                                             r"of the data; got statistics of shape \(14, 39, 2\)\.$"):
        fn(plain, ["a"], "human", corpus_statistics={"a": (statistics[:, 1:], MEAN)})
    with pytest.raises(ParameterError, match=r"^`corpus_statistics` must be a mapping"):
        fn(plain, ["a"], "human", corpus_statistics=[statistics])


# --- (b) SummEval: real corpus BLEU against sacrebleu --------------------------------------------------------------


def test_topk_is_kendall_of_corpus_bleu(summeval_bleu):
    ds, corpus, bleu, *_ = summeval_bleu
    human = ds.matrix(HUMAN).mean(axis=1)
    r = me.topk_correlations(ds, "bleu", HUMAN, ks=[16, 10, 5], n_resamples=0, corpus_statistics=corpus)
    for g, k in enumerate([16, 10, 5]):
        top = np.argsort(-human, kind="stable")[:k]
        assert r.statistic[0, g] == pytest.approx(stats.kendalltau(bleu[top], human[top]).statistic, abs=1e-12)
    plain = me.topk_correlations(ds, "bleu", HUMAN, ks=[16], n_resamples=0)
    assert plain.statistic[0, 0] != pytest.approx(r.statistic[0, 0], abs=1e-6)  # mean sentence BLEU differs


def test_delta_cells_are_kendall_of_corpus_bleu(summeval_bleu):
    ds, corpus, bleu, *_ = summeval_bleu
    human = ds.matrix(HUMAN).mean(axis=1)
    r = me.delta_correlations(ds, "bleu", HUMAN, fractions=[0.5, 1.0], n_resamples=0, corpus_statistics=corpus)
    np.testing.assert_allclose(r.metric_scores[0], bleu, rtol=0, atol=1e-9)
    assert r.statistic[0, 0, 1] == pytest.approx(stats.kendalltau(bleu, human).statistic, abs=1e-12)
    i, j = np.triu_indices(16, 1)
    gap = np.abs(bleu[i] - bleu[j])
    close = gap <= np.sort(gap)[59]  # the 60 = 50% pairs closest in corpus BLEU
    sx, sz = np.sign(bleu[i] - bleu[j])[close], np.sign(human[i] - human[j])[close]
    tau = (sx * sz).sum() / np.sqrt((sx != 0).sum() * (sz != 0).sum())
    assert int(r.n_pairs[0, 0, 0]) == close.sum() == 60
    assert r.statistic[0, 0, 0] == pytest.approx(tau, abs=1e-12)


def test_gap_observations_are_corpus_bleu_pairs(summeval_bleu):
    ds, corpus, bleu, *_ = summeval_bleu
    human = ds.matrix(HUMAN).mean(axis=1)
    r = me.gap_agreement(ds, "bleu", HUMAN, n_resamples=0, corpus_statistics=corpus)
    i, j = np.triu_indices(16, 1)
    sx, sz = np.sign(bleu[i] - bleu[j]), np.sign(human[i] - human[j])
    used = (sx != 0) & (sz != 0)
    assert int(r.n_pairs[0]) == used.sum()
    assert r.agreement[0] == pytest.approx(np.mean(sx[used] == sz[used]), abs=1e-12)
    assert r.max_gap[0] == pytest.approx(np.abs(bleu[i] - bleu[j])[used].max(), abs=1e-9)


def test_verdict_deltas_are_corpus_bleu_differences(summeval_bleu):
    ds, corpus, bleu, *_ = summeval_bleu
    human = ds.matrix(HUMAN).mean(axis=1)
    r = me.system_verdicts(ds, ["bleu"], HUMAN, n_resamples=100, rng=0, corpus_statistics=corpus)
    a, b = np.triu_indices(16, 1)
    np.testing.assert_allclose(r.metric_deltas[0], bleu[a] - bleu[b], rtol=0, atol=1e-9)
    np.testing.assert_allclose(r.human_deltas, human[a] - human[b], rtol=0, atol=1e-12)
    assert "corpus_level:bleu" in str(r.signature)


def test_stability_samples_are_kendall_of_corpus_bleu_halves(summeval_bleu):
    """Each repetition: Kendall between sacrebleu corpus BLEU of two disjoint halves of the inputs."""
    sacrebleu = pytest.importorskip("sacrebleu")
    ds, corpus, _, cands, refs, _ = summeval_bleu
    r = me.ranking_stability(ds, "bleu", HUMAN, sizes=[50], n_repetitions=2, rng=11, corpus_statistics=corpus)
    # the halves, drawn as ranking_stability draws them (one chunk, seeded from 11)
    generator = np.random.default_rng(chunk_seeds(np.random.default_rng(11), 11, 1)[0])
    first, second = _sample_weights(100, 50, 2, "disjoint", generator)
    outputs = {}
    for line in cands.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        outputs[row["system"], row["input"]] = row["candidate"]
    references = {row["input"]: row["references"]
                  for row in map(json.loads, refs.read_text(encoding="utf-8").splitlines())}

    def corpus_bleu(columns):
        docs = [ds.inputs[c] for c in np.flatnonzero(columns)]
        streams = [[references[d][k] for d in docs] for k in range(11)]
        return np.array([sacrebleu.corpus_bleu([outputs[s, d] for d in docs], streams).score for s in ds.systems])

    for rep in range(2):
        tau = stats.kendalltau(corpus_bleu(first[rep]), corpus_bleu(second[rep])).statistic
        assert r.samples[1, 0, rep] == pytest.approx(tau, abs=1e-12)
    assert "corpus_level:bleu" in str(r.signature)


# --- (c) the commands ------------------------------------------------------------------------------------------------

COMMANDS = {
    "delta": ["--fractions", "0.5,1", "--n-resamples", "0", "--no-progress"],
    "gap": ["--n-resamples", "0"],
    "topk": ["--ks", "16,8", "--n-resamples", "0"],
    "stability": ["--sizes", "20", "--n-repetitions", "20", "--no-progress"],
    "verdicts": ["--n-resamples", "50"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_cli_corpus_metric(summeval_bleu, tmp_path, capsys, command):
    ds, _, bleu, cands, refs, scores = summeval_bleu
    out = tmp_path / "out.json"
    argv = [command, "--scores", str(scores), "--human", HUMAN, "--metric", "bleu", *COMMANDS[command],
            "--corpus-metric", "bleu", "--candidates", str(cands), "--references", str(refs), "--seed", "0",
            "--format", "json", "--output", str(out)]
    assert main(argv) == 0, capsys.readouterr().err
    payload = json.loads(out.read_text())
    assert "corpus_level:bleu" in payload["signature"]
    if command == "topk":
        human = ds.matrix(HUMAN).mean(axis=1)
        first = payload["points"][0]
        assert first["k"] == 16 and first["statistic"] == pytest.approx(stats.kendalltau(bleu, human).statistic,
                                                                         abs=1e-12)


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("extra, message", [
    (["--corpus-metric", "bleu"], "`--corpus-metric` must come with `--candidates` and `--references`; got neither."),
    (["--candidates", "c.jsonl"], "`--candidates` and `--references` must come with `--corpus-metric`; got no "
                                  "--corpus-metric."),
    (["--corpus-metric", "chrf", "--candidates", "c", "--references", "r"],
     "`--corpus-metric` must name a metric of the scores; got 'chrf', which is not one (score its segments with "
     "`metaeval score --metric chrf` too)."),
])
def test_cli_corpus_errors(summeval_bleu, capsys, command, extra, message):
    *_, scores = summeval_bleu
    argv = [command, "--scores", str(scores), "--human", HUMAN, *COMMANDS[command], *extra]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == f"metaeval: error: {message}"


def test_cli_stability_variance_refuses_corpus_metric(summeval_bleu, capsys):
    *_, cands, refs, scores = summeval_bleu
    argv = ["stability", "--analysis", "variance", "--scores", str(scores), "--human", HUMAN, "--metric", "bleu",
            "--n-resamples", "10", "--corpus-metric", "bleu", "--candidates", str(cands), "--references", str(refs),
            "--no-progress"]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == ("metaeval: error: `--corpus-metric` must come with `--analysis "
                                               "ranking`; got --analysis variance.")
