"""Span statistics: the counts engine equals a plain loop over the same draws; CLI runs and errors."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from metaeval.spans.measures import prf_from_sums
from metaeval.spans.resampling import bootstrap_statistics, permutation_pvalues
from metaeval.stats.resampling.draws import bootstrap_draws, permutation_draws

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "wmt" / "mqm_ratings"
WMT23 = DATA / "sxs_mqm_generalMT2023_ende.3ratings.tsv.gz"


def finish(sums, n):
    return prf_from_sums(sums, None, "micro")


def _channels(rng, d=3, n=4, m=7):
    c = rng.integers(0, 6, size=(d, 4, n, m)).astype(float)
    c[:, 1] += c[:, 0]
    c[:, 3] += c[:, 2]
    present = np.ones((n, m), dtype=bool)
    present[1, 2] = False
    c[:, :, 1, 2] = 0
    return c, present


@pytest.mark.parametrize("method", ["both", "systems", "inputs"])
def test_bootstrap_equals_a_plain_loop(method):
    rng = np.random.default_rng(1)
    c, present = _channels(rng)
    draws = bootstrap_draws(4, 7, method=method, n_resamples=30, rng=5)
    fast = bootstrap_statistics(c, present, draws, finish)
    for s in range(30):
        rows = draws.row_indices(slice(s, s + 1))[0]
        cols = draws.col_indices(slice(s, s + 1))[0]
        sums = c[:, :, rows][:, :, :, cols].sum(axis=(2, 3))
        assert np.allclose(fast[s], finish(sums[None], None)[0])


def test_permutation_equals_a_plain_loop():
    rng = np.random.default_rng(2)
    c, present = _channels(rng)
    draws = permutation_draws(4, 7, method="both", n_resamples=50, rng=3)
    delta, two, greater = permutation_pvalues(c, present, draws, finish)
    masks = draws.mask()
    i, j = 0, 2
    obs = finish(c.sum(axis=(2, 3))[None], None)[0, :, 2]
    null = []
    for s in range(50):
        m = masks[s]
        a = np.where(m, c[j], c[i]).sum(axis=(1, 2))
        b = np.where(m, c[i], c[j]).sum(axis=(1, 2))
        f = finish(np.stack([a, b])[None], None)[0, :, 2]
        null.append(f[0] - f[1])
    null = np.array(null)
    d = obs[i] - obs[j]
    assert delta[i, j] == pytest.approx(d)
    assert two[i, j] == pytest.approx((1 + np.sum(np.abs(null) >= abs(d) - 1e-12)) / 51)
    assert greater[i, j] == pytest.approx((1 + np.sum(null >= d - 1e-12)) / 51)


class _Out:
    def __init__(self, code, out, err):
        self.returncode, self.stdout, self.stderr = code, out, err


@pytest.fixture
def _cli(capsys):
    from metaeval.cli.main import main

    def run(*args):
        code = main(list(args))
        out, err = capsys.readouterr()
        return _Out(code, out, err)
    return run


@pytest.mark.skipif(not WMT23.exists(), reason="shared data not found")
def test_cli_compare_on_real_data_with_a_detector(tmp_path, _cli):
    from metaeval import read_mqm_ratings
    from metaeval.spans import rater_spans, write_detector_spans

    ratings = read_mqm_ratings(WMT23)
    write_detector_spans(rater_spans(ratings, "rater3"), tmp_path / "rater3.jsonl")
    out = _cli("spans", "compare", "--gold", str(WMT23), "--gold-rater", "rater5", "--gold-rater", "rater10",
               "--detector", str(tmp_path / "rater3.jsonl"), "--n-resamples", "100", "--format", "json",
               "--no-ceiling")
    assert out.returncode == 2, out.stderr  # rater3 rated other segments than the gold of two raters
    assert "must cover every segment the gold rated" in out.stderr and out.stderr.count("\n") == 1
    out = _cli("spans", "compare", "--gold", str(WMT23), "--n-resamples", "100", "--format", "json", "--no-ceiling")
    assert out.returncode == 0, out.stderr
    rows = {r["detector"]: r for r in json.loads(out.stdout)["rows"]}
    assert rows["baseline:no-spans"]["f1"] == 0 and rows["baseline:whole-segment"]["cluster"]


@pytest.mark.skipif(not WMT23.exists(), reason="shared data not found")
def test_cli_agreement_and_binary(tmp_path, _cli):
    out = _cli("spans", "agreement", "--gold", str(WMT23), "--n-resamples", "50", "--format", "csv")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].startswith("rater,against,n_cells,precision")
    out = _cli("spans", "binary", "--gold", str(WMT23), "--n-resamples", "50", "--format", "json")
    assert out.returncode == 0, out.stderr
    names = [r["predictor"] for r in json.loads(out.stdout)["rows"]]
    assert names == ["baseline:all-error-free", "baseline:length"]


def test_cli_bad_gold_is_one_line(tmp_path, _cli):
    bad = tmp_path / "r.tsv"
    bad.write_text("system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\n"
                   "A\td\t1\t1\tr1\ts\tx <v>y\tc\tMinor\n")
    out = _cli("spans", "evaluate", "--gold", str(bad))
    assert out.returncode == 0 and "left open" in out.stderr
    empty = tmp_path / "e.jsonl"
    empty.write_text("")
    out = _cli("spans", "evaluate", "--gold", str(bad), "--detector", str(empty))
    assert out.returncode == 2
    assert out.stderr.strip().endswith("the file must hold at least one JSON line; got an empty file.")


@pytest.mark.skipif(not WMT23.exists(), reason="shared data not found")
def test_cli_binary_document_folds(_cli):
    out = _cli("spans", "binary", "--gold", str(WMT23), "--n-resamples", "20", "--folds-by", "document",
               "--task", "critical", "--no-compare")
    assert out.returncode == 0, out.stderr
    assert "critical detection (5-fold cross-validation by document)" in out.stdout


@pytest.mark.skipif(not WMT23.exists(), reason="shared data not found")
def test_cli_binary_metric_file_names_what_it_leaves_out(tmp_path, _cli):
    """A metric file's system without gold ratings is left out by name, and the reader's own warnings (here a
    text column it ignores) reach the user instead of being silenced."""
    from metaeval import read_mqm_ratings

    ds = read_mqm_ratings(WMT23).scores
    rng = np.random.default_rng(0)
    human = ds.matrix("mqm")
    rows = ["system,seg_id,note,COMET"] + [f"{s},{i},ok,{float(human[a, b] + rng.normal())!r}"
                                           for a, s in enumerate(ds.systems) for b, i in enumerate(ds.inputs)]
    rows += [f"extra-sys,{i},ok,0.5" for i in ds.inputs]
    (tmp_path / "comet.csv").write_text("\n".join(rows) + "\n")
    out = _cli("spans", "binary", "--gold", str(WMT23), "--scores", str(tmp_path / "comet.csv"), "--input-column",
               "seg_id", "--metric", "COMET", "--n-resamples", "20", "--format", "json")
    assert out.returncode == 0, out.stderr
    assert f"{tmp_path / 'comet.csv'}: 1 system(s) with no gold rating left out: 'extra-sys'." in out.stderr
    assert "ignored 1 column(s) without scores: 'note'" in out.stderr
    names = [r["predictor"] for r in json.loads(out.stdout)["rows"]]
    assert names == ["COMET", "baseline:all-error-free", "baseline:length"]
