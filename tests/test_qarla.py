"""QARLA (Amigo, Gonzalo, Penas & Verdejo 2005): QUEEN, KING, JACK; similarities; API, CLI, SummEval."""
from __future__ import annotations

import itertools
import json
import warnings

import numpy as np
import pytest
import scipy.stats

import metaeval as me
from metaeval.analyses.qarla_similarity import canonical_similarity, similarity_matrices, tvm_matrix
from metaeval.cli.main import main
from metaeval.stats.frameworks.qarla import jack, king, qarla_arrays, queen, queen_leave_one_out


def tensor(model_model, peer_model, peer_peer=None, model_peer=None):
    """(1, 1, P + M, P + M) similarities of one metric and one test case from its blocks."""
    mm, pm = np.asarray(model_model, float), np.asarray(peer_model, float)
    p, m = pm.shape
    sim = np.zeros((p + m, p + m))
    sim[p:, p:] = mm
    sim[:p, p:] = pm
    sim[:p, :p] = 0.0 if peer_peer is None else peer_peer
    sim[p:, :p] = 0.0 if model_peer is None else model_peer
    return sim[None, None]


# --------------------------------------------------------------------------------------------- validation
def test_messages():
    with pytest.raises(me.ParameterError, match=r"^`sim` must be an array of shape \(metrics, test cases, texts, "
                                                r"texts\); got shape \(3, 3\)\.$"):
        queen(np.zeros((3, 3)), 1)
    with pytest.raises(me.ParameterError, match=r"^`n_peers` must be an integer from 1 to texts - 3 = 2; got 3\.$"):
        queen(np.zeros((1, 1, 5, 5)), 3)
    with pytest.raises(me.ParameterError, match=r"^`n_peers` must be an integer from 1 to texts - 4 = 1; got 2\.$"):
        king(np.zeros((1, 1, 5, 5)), 2)
    bad = np.zeros((1, 1, 5, 5))
    bad[0, 0, 0, 1] = np.nan
    with pytest.raises(me.ParameterError, match=r"^`sim` must hold finite similarities off its diagonal; got NaN or "
                                                r"infinity\.$"):
        queen(bad, 1)
    with pytest.raises(me.ParameterError, match=r"^`n_peers` must be at least 2 for JACK \(a pair of peers\); got 1\.$"):
        jack(np.zeros((1, 1, 5, 5)), 1)
    with pytest.raises(me.ParameterError, match=r"^`similarities` must be names like 'rouge-1', .* or 'tvm-64'; got "
                                                r"'rouge-9'\.$"):
        canonical_similarity("rouge-9")
    refs = {"d1": ["x y", "y z", "z x"]}
    with pytest.raises(me.ParameterError, match=r"^`references` must give every input the same number \(>= 4\) of "
                                                r"models; got \{'d1': 3\}\.$"):
        me.qarla_similarities({"s1": {"d1": "x"}, "s2": {"d1": "y"}}, refs)
    with pytest.raises(me.ParameterError, match=r"^`similarities` must be a QarlaSimilarities \(from "
                                                r"qarla_similarities\); got dict\.$"):
        me.qarla({})


def test_names_are_canonical():
    assert canonical_similarity("ROUGE-1") == "rouge-1.a"
    assert canonical_similarity("rpre-w-1.2.b") == "rpre-w-1.2.b"
    assert canonical_similarity("tvm-512") == "tvm-512"


# --------------------------------------------------------------------------------------- hand-computed cases
# Three models with x(m1, m2) = 0.5, x(m1, m3) = 0.3, x(m2, m3) = 0.4 (symmetric). The six ordered triples of
# distinct models pair each m with the two orders of the other two models, so a peer passes a triple
# (m, m', m'') when x(a, m) >= the similarity of the two models other than m: 0.4 for m1, 0.3 for m2, 0.5 for m3.
MM3 = [[1, 0.5, 0.3], [0.5, 1, 0.4], [0.3, 0.4, 1]]


def test_queen_three_models_two_peers_by_hand():
    # a1: 0.45 >= 0.4 (m1, 2 triples), 0.25 < 0.3 (m2), 0.6 >= 0.5 (m3, 2): QUEEN = 4/6.
    # a2: 0.3 < 0.4 (m1), 0.3 >= 0.3 (m2: a tie passes, the paper's >=, 2), 0.3 < 0.5 (m3): QUEEN = 2/6.
    sim = tensor(MM3, [[0.45, 0.25, 0.6], [0.3, 0.3, 0.3]])
    np.testing.assert_allclose(queen(sim, 2)[0, :2], [4 / 6, 2 / 6])


def test_queen_uses_the_order_of_the_model_pair():
    # x(m2, m3) = 0.4 but x(m3, m2) = 0.2: for m = m1 a peer at 0.3 passes (m1, m3, m2) only.
    mm = np.array(MM3)
    mm[2, 1] = 0.2
    sim = tensor(mm, [[0.3, 0.0, 0.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(queen(sim, 2)[0, :2], [1 / 6, 0.0])


def test_queen_all_metrics_must_pass():
    # Metric 1 passes a1 on m1 and m3 (4/6); metric 2 passes it on m2 only (2/6): together 0.
    one = tensor(MM3, [[0.45, 0.25, 0.6], [1, 1, 1]])
    two = tensor(MM3, [[0.0, 0.9, 0.0], [1, 1, 1]])
    both = np.concatenate([one, two])
    np.testing.assert_allclose(queen(one, 2)[0, 0], 4 / 6)
    np.testing.assert_allclose(queen(two, 2)[0, 0], 2 / 6)
    assert queen(both, 2)[0, 0] == 0.0 and queen(both, 2)[0, 1] == 1.0


# Four models, two peers: every model pair at 0.5 except where m0 is the first model (x(m0, .) = 0.2);
# a0 is at 0.3 from every model, a1 at 0.1.
MM4 = np.full((4, 4), 0.5)
MM4[0, :] = 0.2


def test_king_by_hand():
    sim = tensor(MM4, [[0.3] * 4, [0.1] * 4])
    success, tied = king(sim, 2)
    # m0 left out: QUEEN(m0) = P(0.2 >= 0.5) = 0 = QUEEN(a0) = QUEEN(a1): tied, no success.
    # m1 left out (models m0, m2, m3): QUEEN(m1) = 1 (0.5 >= 0.5 and >= 0.2); QUEEN(a0) = 2/6 (0.3 >= 0.2 only
    # when m' = m0); success. The same for m2 and m3.
    assert success.tolist() == [[False, True, True, True]]
    assert tied.tolist() == [[True, False, False, False]]
    loo = queen_leave_one_out(sim, 2)
    np.testing.assert_allclose(loo[0, 1], [2 / 6, 0.0, 2 / 6, 1.0, 1.0, 1.0])
    np.testing.assert_allclose(loo[0, 0, :3], [0.0, 0.0, 0.0])
    assert qarla_arrays(sim, 2).king == 0.75


def test_king_of_a_perfect_metric_is_one_and_of_a_constant_metric_zero():
    rng = np.random.default_rng(3)
    p, m = 5, 6
    sim = np.empty((1, 2, p + m, p + m))
    sim[:] = rng.uniform(0.0, 0.4, size=sim.shape)  # peers far from everything
    sim[:, :, p:, p:] = rng.uniform(0.8, 1.0, size=(1, 2, m, m))  # models closer to each other than peers
    assert qarla_arrays(sim, p).king == 1.0
    sim[:, :, p:, p:] = 0.9  # the paper's ideal metric "puts all models together": QUEEN(m) = 1, QUEEN(a) = 0
    result = qarla_arrays(sim, p)
    assert result.king == 1.0 and (result.queen_models == 1).all() and (result.queen_peers == 0).all()
    constant = qarla_arrays(np.ones((1, 2, p + m, p + m)), p)
    assert constant.king == 0.0 and constant.king_tied.all()


def test_jack_by_hand():
    # Two peers, three models; metric symmetric. x(a0, a1) = 0.2. a0 at 0.3 from m0, 0.1 from m1, 0.5 from m2;
    # a1 at 0.25, 0.3, 0.1. Pair closer to m than to each other: m0 (0.3 >= 0.2 and 0.25 >= 0.2) only.
    pm = np.array([[0.3, 0.1, 0.5], [0.25, 0.3, 0.1]])
    pp = np.array([[1.0, 0.2], [0.2, 1.0]])
    mm = np.full((3, 3), 0.05)
    sim = tensor(mm, pm, pp, pm.T)
    assert jack(sim, 2).tolist() == [[True, False, False]]
    # A peer with QUEEN = 0 cannot be in the pair.
    assert jack(sim, 2, queen_peers=[[0.5, 0.0]]).tolist() == [[False, False, False]]


# ----------------------------------------------------------------------------- oracle and invariants
def brute_force(sim, p):
    """QUEEN (peers, all models), model QUEEN (leave-one-out), KING and JACK events by the formulas, in loops."""
    x_, t_, k_, _ = sim.shape
    m_ = k_ - p

    def q(t, c, models):
        trip = [(a, b, d) for a, b, d in itertools.permutations(models, 3)]
        return sum(all(sim[x, t, c, p + a] >= sim[x, t, p + b, p + d] for x in range(x_)) for a, b, d in trip) / len(trip)

    qp = np.array([[q(t, c, range(m_)) for c in range(p)] for t in range(t_)])
    kings, jacks, own = np.zeros((t_, m_), bool), np.zeros((t_, m_), bool), np.zeros((t_, m_))
    for t in range(t_):
        for k in range(m_):
            rest = [j for j in range(m_) if j != k]
            own[t, k] = q(t, p + k, rest)
            kings[t, k] = all(own[t, k] > q(t, a, rest) for a in range(p))
            jacks[t, k] = any(all(sim[x, t, a, b] <= sim[x, t, a, p + k] and sim[x, t, b, a] <= sim[x, t, b, p + k]
                                  for x in range(x_)) and qp[t, a] > 0 and qp[t, b] > 0
                              for a in range(p) for b in range(p) if a != b)
    return qp, own, kings, jacks


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vectorized_equals_the_formulas(seed):
    rng = np.random.default_rng(seed)
    # Rounded values make ties frequent (the >= and > rules matter).
    sim = np.round(rng.uniform(size=(2, 3, 4 + 5, 4 + 5)), 1)
    result = qarla_arrays(sim, 4)
    qp, own, kings, jacks = brute_force(sim, 4)
    np.testing.assert_allclose(result.queen_peers, qp)
    np.testing.assert_allclose(result.queen_models, own)
    assert (result.king_success == kings).all() and (result.jack_success == jacks).all()


def test_results_do_not_depend_on_the_chunk_size(monkeypatch):
    import metaeval.stats.frameworks.qarla as kernel

    sim = np.round(np.random.default_rng(5).uniform(size=(2, 7, 3 + 5, 3 + 5)), 1)
    whole = qarla_arrays(sim, 3)
    monkeypatch.setattr(kernel, "CHUNK_ELEMENTS", 1)  # one test case per chunk
    one = qarla_arrays(sim, 3)
    monkeypatch.setattr(kernel, "CHUNK_ELEMENTS", 3 * 8 * 125)  # 3 test cases per chunk, the last one short
    three = qarla_arrays(sim, 3)
    for other in (one, three):
        np.testing.assert_array_equal(other.queen_peers, whole.queen_peers)
        np.testing.assert_array_equal(other.queen_models, whole.queen_models)
        np.testing.assert_array_equal(other.king_success, whole.king_success)


def test_properties():
    rng = np.random.default_rng(7)
    sim = rng.uniform(size=(2, 4, 6 + 5, 6 + 5))
    base = qarla_arrays(sim, 6)
    assert ((base.queen_peers >= 0) & (base.queen_peers <= 1)).all()
    # (ii) scale-free: an increasing transform of each metric changes nothing.
    moved = np.stack([np.exp(3 * sim[0]), 10 * sim[1] - 4])
    again = qarla_arrays(moved, 6)
    np.testing.assert_array_equal(again.queen_peers, base.queen_peers)
    assert again.king == base.king and again.jack == base.jack
    # (v) a repeated metric does not change QUEEN.
    np.testing.assert_array_equal(qarla_arrays(np.concatenate([sim, sim[:1]]), 6).queen_peers, base.queen_peers)
    # JACK: adding peers cannot lower it (the existential quantifier).
    assert (np.diff(base.jack_curve) >= 0).all() and base.jack_curve[-1] == base.jack
    # A metric set can only lower QUEEN (every metric must pass).
    assert (base.queen_peers <= qarla_arrays(sim[:1], 6).queen_peers).all()


# ------------------------------------------------------------------------------------------ similarities
def test_rouge_and_inverted_rouge_similarities():
    texts = ["the cat sat on the mat", "a cat was on a mat today", "dogs bark loudly at night"]
    out = similarity_matrices(texts, ["rouge-1.a", "rpre-1.a", "rouge-l.a", "rouge-2.c"])
    from metaeval.metrics.rouge import Rouge

    rouge, stemmed = Rouge(n=2), Rouge(n=2, stem=True, remove_stopwords=True)
    for u, v in itertools.product(range(3), range(3)):
        score = rouge.score(texts[u], [texts[v]])
        assert out[0, u, v] == pytest.approx(score["rouge-1"]["recall"])
        assert out[2, u, v] == pytest.approx(score["rouge-l"]["recall"])
        assert out[3, u, v] == pytest.approx(stemmed.score(texts[u], [texts[v]])["rouge-2"]["recall"])
        # Rpre(u, v) = R(v, u); for ROUGE-1 it is also the precision of u against v.
        assert out[1, u, v] == out[0, v, u] == pytest.approx(score["rouge-1"]["precision"])
    assert out[0, 0, 1] == pytest.approx(3 / 7)  # 'cat', 'on', 'mat' of the 7 words of text 1


def test_tvm_by_hand():
    # Source terms: cat x3, dog x2, fish x1 -> TVM_2 keeps (cat, dog).
    source = ["cat cat cat dog dog fish"]
    texts = ["cat dog", "cat cat fish fish"]
    sim = tvm_matrix(texts, source, 2)
    # f(text 0) = (1/2, 1/2), f(text 1) = (2/4, 0): distance 1/2, similarity 1 / (1 + 1/2).
    np.testing.assert_allclose(sim, [[1.0, 2 / 3], [2 / 3, 1.0]])
    # Ties in source frequency are broken alphabetically: TVM_1 of "fish bird" keeps 'bird'.
    np.testing.assert_allclose(tvm_matrix(["bird", "fish"], ["fish bird"], 1)[0, 1], 1 / 2)


# ---------------------------------------------------------------------------------- API, CLI, SummEval
@pytest.fixture(scope="module")
def summeval_texts(shared_data):
    return me.load_texts("summeval", directory=shared_data, all_references=True)


@pytest.fixture(scope="module")
def summeval_sims(summeval_texts):
    candidates, references = summeval_texts
    return me.qarla_similarities(candidates, references, similarities=["rouge-1", "rpre-1", "tvm-16"], inputs=4)


def test_progress_is_called_once_per_input(summeval_texts):
    calls = []
    me.qarla_similarities(*summeval_texts, similarities=["tvm-4"], inputs=3, progress=lambda: calls.append(1))
    assert len(calls) == 3


def test_summeval_similarities(summeval_texts, summeval_sims):
    candidates, references = summeval_texts
    sims = summeval_sims
    assert sims.values.shape == (3, 4, 27, 27) and sims.n_models == 11 and len(sims.systems) == 16
    doc = sims.inputs[1]
    from metaeval.metrics.rouge import Rouge

    got = Rouge(n=1, lcs=False).score(candidates[sims.systems[3]][doc], [references[doc][5]])["rouge-1"]["recall"]
    assert sims.values[0, 1, 3, 16 + 5] == pytest.approx(got)
    np.testing.assert_array_equal(sims.values[1], np.swapaxes(sims.values[0], 1, 2))
    assert "tvm_source:summaries" in str(sims.signature)


def test_summeval_qarla_against_independent_human_means(shared_data, summeval_sims):
    ds = me.load_dataset("summeval")
    with pytest.warns(me.DataWarning) as caught:  # the human of a system: its mean over 4 of the 100 inputs, said
        result = me.qarla(summeval_sims, ds=ds, human="expert.relevance")
    assert str(caught[0].message).startswith(
        "qarla: the human 'expert.relevance' of each system is its mean over the 4 inputs of the texts it scores; 96"
        " of the 100 inputs it scores are not among the texts' inputs: 'cnn-test-")
    assert result.n_human_inputs == 4 and result.inputs_without_human == ()
    assert result.metric_sets == ("rouge-1.a", "rpre-1.a", "tvm-16", "rouge-1.a+rpre-1.a+tvm-16")
    # Human system scores: the mean of the 3 experts' relevance over the 4 inputs, from the raw file.
    raw = [json.loads(line) for line in (shared_data / "summeval" / "relevance.jsonl").read_text().splitlines()]
    keep = set(summeval_sims.inputs)
    expected = [np.mean([np.mean(r["metrics"]["expert"]["relevance"]) for r in raw
                         if r["summarizer_id"] == s and r["instance_id"] in keep]) for s in result.systems]
    np.testing.assert_allclose(result.human_scores, expected)
    for i in range(4):
        assert result.pearson[i] == pytest.approx(scipy.stats.pearsonr(result.queen[i], expected)[0])
        # Rounded: equal means summed in another order differ in the last bits (metaeval counts them as ties).
        tau = scipy.stats.kendalltau(np.round(result.queen[i], 12), np.round(expected, 12))[0]
        assert result.kendall[i] == pytest.approx(tau)
    assert ((result.queen >= 0) & (result.queen <= 1)).all()
    assert (result.queen[3] <= result.queen[:3].min(axis=0) + 1e-12).all()
    frame = result.to_frame()
    assert list(frame["metric_set"]) == list(result.metric_sets) and len(result.queen_frame()) == 4 * 16
    assert "human:expert.relevance" in str(result.signature) and "triples:distinct" in str(result.signature)


def test_metric_sets_and_errors(summeval_sims):
    result = me.qarla(summeval_sims, metric_sets=["rouge-1+tvm-16", ["rpre-1"]])
    assert result.metric_sets == ("rouge-1.a+tvm-16", "rpre-1.a") and result.human is None
    assert np.isnan(result.pearson).all()
    with pytest.raises(me.ParameterError, match=r"^`metric_sets` must use computed similarities \(rouge-1.a, "
                                                r"rpre-1.a, tvm-16\); got 'rouge-2.a'\.$"):
        me.qarla(summeval_sims, metric_sets=["rouge-2"])


def test_read_qarla_texts_errors(tmp_path):
    path = tmp_path / "t.jsonl"
    line = {"doc_id": "d", "system_id": "s", "summary": "x", "references": ["a", "b", "c", "d"]}
    path.write_text(json.dumps(line) + "\n" + json.dumps({**line, "system_id": "t", "references": ["a"]}) + "\n")
    with pytest.raises(me.InputFileError, match=r"t.jsonl, row 2, column 'references': the lines of one input must "
                                                r"repeat its references; got other references for 'd'\.$"):
        me.read_qarla_texts(path)


def test_cli_on_summeval(shared_data, tmp_path, capsys):
    plot = tmp_path / "qarla.svg"
    code = main(["qarla", "--texts", str(shared_data / "summeval" / "texts.jsonl"), "--dataset", "summeval",
                 "--inputs", "3", "--similarity", "rouge-2", "--similarity", "rpre-l", "--format", "json",
                 "--plot", str(plot)])
    out, err = capsys.readouterr()
    assert code == 0, err
    payload = json.loads(out)
    assert payload["metric_sets"] == ["rouge-2.a", "rpre-l.a", "rouge-2.a+rpre-l.a"] and payload["n_inputs"] == 3
    assert payload["n_human_inputs"] == 3 and payload["inputs_without_human"] == []
    assert ("metaeval: warning: qarla: the human 'expert.relevance' of each system is its mean over the 3 inputs of"
            " the texts it scores; 97 of the 100 inputs it scores are not among the texts' inputs:") in err
    assert plot.read_text().lstrip().startswith("<?xml")


def test_qarla_names_the_inputs_without_a_human_score(summeval_sims):
    ds = me.load_dataset("summeval")
    kept = [i for i in ds.inputs if i != summeval_sims.inputs[1]]
    with pytest.warns(me.DataWarning) as caught:
        result = me.qarla(summeval_sims, ds=ds.subset(inputs=kept), human="expert.relevance")
    message = str(caught[0].message)
    assert (f"of each system is its mean over the 3 inputs of the texts it scores; 1 inputs of the texts have no"
            f" 'expert.relevance' score: {summeval_sims.inputs[1]!r}; 96 of the 99 inputs") in message
    assert result.n_human_inputs == 3 and result.inputs_without_human == (summeval_sims.inputs[1],)


def test_cli_human_needs_scores(shared_data, capsys):
    code = main(["qarla", "--texts", str(shared_data / "summeval" / "texts.jsonl"), "--human", "expert.relevance"])
    out, err = capsys.readouterr()
    assert code == 2 and err.strip() == ("metaeval: error: `--human` needs `--dataset` or `--scores` (the human "
                                         "scores); got --human 'expert.relevance' alone.")


def test_cli_bad_input_is_one_line(shared_data, capsys):
    code = main(["qarla", "--texts", str(shared_data / "summeval" / "texts.jsonl"), "--similarity", "bleu"])
    out, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1 and "`similarities` must be names" in err


@pytest.mark.slow
def test_summeval_full_run(summeval_texts):
    """All 100 inputs, the default similarities ROUGE-1/2/L/SU4 (70,200 ordered summary pairs)."""
    candidates, references = summeval_texts
    sims = me.qarla_similarities(candidates, references)
    ds = me.load_dataset("summeval")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = me.qarla(sims, ds=ds, human="expert.relevance")
    assert result.n_inputs == 100 and result.king.shape == (5,)
    assert (result.pearson > 0).all()


def test_cli_plot_never_overwrites_the_texts(tmp_path, capsys):
    texts = tmp_path / "texts.jsonl"
    line = {"doc_id": "d", "system_id": "s", "summary": "x", "references": ["a", "b", "c", "d"]}
    texts.write_text(json.dumps(line) + "\n")
    before = texts.read_bytes()
    code = main(["qarla", "--texts", str(texts), "--plot", str(texts)])
    out, err = capsys.readouterr()
    assert code == 2 and "--plot" in err and "is the same file as --texts" in err and texts.read_bytes() == before


def test_cli_plot_needs_png_or_svg(shared_data, tmp_path, capsys):
    code = main(["qarla", "--texts", str(shared_data / "summeval" / "texts.jsonl"), "--inputs", "1",
                 "--similarity", "rouge-1", "--plot", str(tmp_path / "q.pdf")])
    out, err = capsys.readouterr()
    assert code == 2 and err.strip().endswith("`plot` must be a file name ending in .png or .svg; got "
                                              f"'{tmp_path / 'q.pdf'}'.")


def test_api_input_messages(summeval_sims):
    refs = {"d1": ["w x", "x y", "y z", "z w"]}
    two = {"s1": {"d1": "x y"}, "s2": {"d1": "y z"}}
    with pytest.raises(me.ParameterError, match=r"^`inputs` must be inputs with references and a summary of every "
                                                r"system; got 'd9'\.$"):
        me.qarla_similarities(two, refs, inputs=["d9"])
    with pytest.raises(me.ParameterError, match=r"^`candidates` must hold at least 2 systems \(JACK needs a pair of "
                                                r"peers\); got 1\.$"):
        me.qarla_similarities({"s1": {"d1": "x"}}, refs)
    with pytest.raises(me.ParameterError, match=r"^`sources` must give every input a non-empty text or list of texts; "
                                                r"got None for 'd1'\.$"):
        me.qarla_similarities(two, refs, similarities=["tvm-4"], sources={"d2": "w"})
    sims = me.qarla_similarities(two, refs, similarities=["tvm-4"], sources={"d1": ["w w x y z"]})
    assert sims.values.shape == (1, 1, 6, 6) and "tvm_source:given" in str(sims.signature)
    ds = me.ScoreSet.from_matrices({"h": np.ones((1, 4))}, systems=["M0"], inputs=list(summeval_sims.inputs),
                                   humans=["h"])
    with pytest.raises(me.ParameterError, match=r"^`ds` must score every system of the similarities; got no row for "
                                                r"'M1'\.$"):
        me.qarla(summeval_sims, ds=ds, human="h")
