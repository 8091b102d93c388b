"""The column-wise JSON Lines reader equals the row-wise one (issue 39.7), and the bootstrap of clusters by
type equals the bootstrap of clusters."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import metaeval as me
from metaeval.judges import columnar_reader
from metaeval.stats.resampling.pair_counts import cluster_types, type_weights


def _rows(seed, n=400, lengths=True, repeat=False, judge=True):
    rng = np.random.default_rng(seed)
    systems = ["gpt-4", "claude", "llama-2", "mistral", "vicuna"]
    verdicts = ["model_a", "model_b", "tie", "tie (bothbad)", "first", "Second", " tie "]
    rows = []
    for k in range(n):
        a, b = rng.choice(len(systems), 2, replace=False)
        row = {"question_id": int(rng.integers(0, 60)), "turn": int(rng.integers(1, 3)), "model_a": systems[a],
               "model_b": systems[b], "winner": verdicts[int(rng.integers(0, len(verdicts)))]}
        if judge:
            row["judge"] = f"user_{int(rng.integers(0, 9))}"
        if repeat:
            row["repeat"] = int(rng.integers(0, 2))
        if lengths:
            row["length_a"] = int(rng.integers(10, 500))
            row["length_b"] = None if rng.random() < 0.05 else float(rng.integers(10, 500))
        rows.append(row)
    return rows


def _write(tmp_path, rows, name="battles.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _same(a, b):
    assert (a.systems, a.inputs, a.judges, a.source) == (b.systems, b.inputs, b.judges, b.source)
    for name in ("input", "first", "second", "judge", "verdict", "repeat", "first_length", "second_length"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            np.testing.assert_array_equal(x, y, err_msg=name)


@pytest.mark.parametrize("seed, options", [
    (0, {}), (1, {"lengths": False}), (2, {"repeat": True}), (3, {"judge": False}),
])
@pytest.mark.parametrize("columns", [None, {"input": ["question_id", "turn"]}])
def test_columnar_reading_equals_the_row_wise_reading(tmp_path, monkeypatch, seed, options, columns):
    path = _write(tmp_path, _rows(seed, **options))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        calls = []
        original = columnar_reader.read_columnar
        monkeypatch.setattr(columnar_reader, "read_columnar", lambda *a, **k: calls.append(1) or original(*a, **k))
        fast = me.read_comparisons(path, columns=columns)
        assert calls and original(path, "jsonl", columns=columns, where=None, judge=None, verdict_map={},
                                  names=__import__("metaeval.judges.reader", fromlist=["x"]).OPTION_NAMES) is not None
        monkeypatch.setattr(columnar_reader, "read_columnar", lambda *a, **k: None)
        slow = me.read_comparisons(path, columns=columns)
    _same(fast, slow)


def test_files_the_columnar_reader_cannot_read_exactly_go_row_wise(tmp_path):
    rows = _rows(4, n=20)
    rows[3]["question_id"] = "q-three"  # a column of mixed types
    fast_or_not = me.read_comparisons(_write(tmp_path, rows))
    assert "q-three" in fast_or_not.inputs
    rows = _rows(5, n=20)
    rows[7]["winner"] = "maybe"
    from metaeval.errors import InputFileError

    with pytest.raises(InputFileError, match="row 8, column 'winner': a verdict must be one of"):
        me.read_comparisons(_write(tmp_path, rows, "bad.jsonl"))


def test_types_of_clusters_reproduce_the_cluster_counts():
    from scipy.sparse import csr_matrix

    rng = np.random.default_rng(0)
    n_clusters, cells = 300, 12
    rows, cols = [], []
    for g in range(n_clusters):
        for _ in range(1 if g % 3 else int(rng.integers(2, 5))):  # two thirds of the clusters hold one comparison
            rows.append(g)
            cols.append(int(rng.integers(0, cells)))
    matrix = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_clusters + 5, cells))
    active = np.arange(n_clusters)
    type_of, type_matrix, multiplicity = cluster_types(matrix, active)
    assert multiplicity.sum() == n_clusters and type_matrix.shape[0] == multiplicity.size < n_clusters
    m = rng.multinomial(n_clusters, np.full(n_clusters, 1 / n_clusters), size=4).astype(float)
    by_type = np.zeros((4, multiplicity.size))
    np.add.at(by_type, (slice(None), type_of), m)
    np.testing.assert_allclose((type_matrix.T @ by_type.T).T, (matrix[active].T @ m.T).T)
    for few in (True, False):  # both draws: multinomial on few types, uniform draws of clusters otherwise
        t = np.arange(12).repeat(25) if few else np.arange(n_clusters)
        mult = np.bincount(t)
        w = type_weights(np.random.default_rng(1), t, mult, 2000)
        assert w.shape == (2000, mult.size) and (w.sum(axis=1) == n_clusters).all()
        np.testing.assert_allclose(w.mean(axis=0), mult, rtol=0.25)
