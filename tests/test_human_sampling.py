"""Representative document sampling (REALSumm App. A.1)."""
from __future__ import annotations

import numpy as np
import pytest

import metaeval as me
from metaeval.errors import ParameterError
from metaeval.human import sample_documents
from metaeval.human.sampling import document_profile


def test_validation_messages(tiny_scoreset):
    with pytest.raises(ParameterError, match=r"^`n` must be at most the 6 documents with metric scores; got 7\.$"):
        sample_documents(tiny_scoreset, ["a"], 7, rng=0)
    with pytest.raises(ParameterError, match=r"^`n` must be an integer >= 1; got 0\.$"):
        sample_documents(tiny_scoreset, ["a"], 0)
    with pytest.raises(ParameterError, match=r"^`metrics` must list at least one scorer; got 'a'\.$"):
        sample_documents(tiny_scoreset, "a", 2)
    flat = me.ScoreSet.from_matrices({"c": np.ones((3, 4))})
    with pytest.raises(ParameterError, match=r"^`metrics` must have non-constant scores; got 'c' constant\.$"):
        sample_documents(flat, ["c"], 2)


def test_profile_by_hand():
    x = np.array([[1.0, 2.0], [3.0, 6.0]])
    ds = me.ScoreSet.from_matrices({"m": x})
    profile = document_profile(ds, ["m"])
    z = (x - x.mean()) / x.std()
    assert profile["mean"].tolist() == pytest.approx(z.mean(axis=0).tolist())
    assert profile["std"].tolist() == pytest.approx(z.std(axis=0).tolist())


def test_realsumm_sample_is_seeded_and_spread():
    ds = me.load_dataset("realsumm")
    metrics = ["rouge-1.f1", "rouge-2.f1", "bertscore.f1"]
    a = sample_documents(ds, metrics, 20, rng=7)
    b = sample_documents(ds, metrics, 20, rng=7)
    c = sample_documents(ds, metrics, 20, rng=8)
    assert a.documents == b.documents and a.documents != c.documents
    assert len(a.documents) == 20 and "seed:7" in str(a.signature)
    per_cell = a.table.groupby(["mean_bin", "std_bin"])["selected"].sum()
    assert per_cell.tolist() == [1] * 20  # 100 documents in 10 x 2 cells of 5: one each
    odd = sample_documents(ds, metrics, 7, mean_bins=3, std_bins=1, rng=0)
    assert odd.table.groupby("mean_bin")["selected"].sum().tolist() == [3, 2, 2]  # 34/33/33 docs, largest remainders
