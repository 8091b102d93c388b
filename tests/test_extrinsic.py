"""Extrinsic evaluation (Dorr et al. 2005): Relevance-Prediction and LDC-Agreement from judgment tables
(hand-computed and rebuilt from the paper's Tables 1 and 6), the partition-averaged correlation (scipy,
a plain loop, invariances) and the CLI."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import metaeval as me
from metaeval.analyses.extrinsic import relevance_agreement
from metaeval.analyses.partition import extrinsic_correlation, partition_correlation, scoreset_partition_correlation
from metaeval.cli.main import main
from metaeval.errors import InputFileError, ParameterError
from metaeval.stats.resampling.partition import partition_correlations, partition_indices, row_pearson

FIXTURE = Path(__file__).parent / "data" / "extrinsic" / "judgments.csv"


# -- a hand-computed table -----------------------------------------------------------------------------
def test_hand_computed_rates():
    # 2 subjects x 3 documents; HEAD agrees with the full text on 4 of 6 pairs, with gold on 3 of 6
    result = relevance_agreement(FIXTURE, metrics=("rouge1",))
    rates = result.rates.set_index("condition")
    assert rates.loc["HEAD", "relevance_prediction"] == pytest.approx(4 / 6)
    assert rates.loc["HEAD", "ldc_agreement"] == pytest.approx(3 / 6)
    assert rates.loc["HUM", "relevance_prediction"] == pytest.approx(5 / 6)
    assert rates.loc["HUM", "ldc_agreement"] == pytest.approx(4 / 6)
    assert np.isnan(rates.loc["full", "relevance_prediction"])
    assert rates.loc["full", "ldc_agreement"] == pytest.approx(5 / 6)
    cats = result.categories.set_index(["condition", "surrogate", "full_text"])
    assert cats.loc[("HEAD", "non", "rel"), "n"] == 2
    assert cats.loc[("HEAD", "non", "rel"), "rouge1_mean"] == pytest.approx((0.1 + 0.3) / 2)
    assert cats.loc[("HEAD", "non", "rel"), "rouge1_std"] == pytest.approx(0.1)  # population sd, as the paper
    points = result.points.set_index(["condition", "document"])
    assert points.loc[("HEAD", "d1"), "relevance_prediction"] == 0.5
    assert result.n_unpaired == 0


def test_validation_messages(tmp_path):
    path = tmp_path / "j.csv"
    path.write_text("subject,document,condition,judgment\ns1,d1,full,rel\ns1,d1,full,non\n", encoding="utf-8")
    with pytest.raises(InputFileError) as info:
        relevance_agreement(path)
    assert str(info.value) == (f"{path}, row 3: each (subject, document, condition) must have one row; "
                               "got ('s1', 'd1', 'full') twice.")
    path.write_text("subject,document,condition,judgment,gold\ns1,d1,full,rel,rel\ns2,d1,A,rel,non\n",
                    encoding="utf-8")
    with pytest.raises(InputFileError) as info:
        relevance_agreement(path)
    assert str(info.value) == f"{path}, row 3, column 'gold': a document must have one gold label; got several for 'd1'."
    path.write_text("subject,document,condition,judgment\ns1,d1,A,rel\ns1,d1,B,rel\n", encoding="utf-8")
    with pytest.raises(ParameterError) as info:
        relevance_agreement(path)
    assert str(info.value) == "`full_text` must name a condition of the table ('A', 'B'); got 'full'."
    with pytest.raises(ParameterError, match=r"^`measures` must be one of 'relevance-prediction', 'ldc-agreement'"):
        extrinsic_correlation(FIXTURE, metric="rouge1", measures=("kappa",))
    with pytest.raises(ParameterError, match=r"^`unit` must be one of 'document', 'judgment'; got 'event'\.$"):
        extrinsic_correlation(FIXTURE, metric="rouge1", unit="event")


def test_unpaired_judgments_are_counted(tmp_path):
    path = tmp_path / "j.csv"
    path.write_text("subject,document,condition,judgment\ns1,d1,full,rel\ns1,d1,A,rel\ns2,d1,A,non\n", encoding="utf-8")
    result = relevance_agreement(path)
    assert result.n_unpaired == 1
    assert result.rates.set_index("condition").loc["A", "relevance_prediction"] == 1.0


# -- the paper's tables -----------------------------------------------------------------------------------
def _table6():
    """10 subjects x 60 documents with Table 6's (surrogate / full-text) counts for HEAD and HUM."""
    pairs = [(f"s{s}", f"d{d}") for s in range(10) for d in range(60)]
    full = ["rel"] * 328 + ["non"] * 272  # both conditions: 211 + 117 = 251 + 77 = 328 relevant full texts
    rows = [dict(subject=s, document=d, condition="DOC", judgment=f) for (s, d), f in zip(pairs, full)]
    for condition, (rr, rn, nr) in {"HEAD": (211, 27, 117), "HUM": (251, 35, 77)}.items():
        on_rel = ["rel"] * rr + ["non"] * nr
        on_non = ["rel"] * rn + ["non"] * (272 - rn)
        judged = on_rel + on_non
        rows += [dict(subject=s, document=d, condition=condition, judgment=j) for (s, d), j in zip(pairs, judged)]
    return pd.DataFrame(rows)


def test_table_6_counts_give_the_relevance_prediction_of_table_1():
    result = relevance_agreement(_table6(), full_text="DOC")
    rates = result.rates.set_index("condition")
    assert rates.loc["HEAD", "relevance_prediction"] == pytest.approx((211 + 245) / 600)  # 76% in Table 1
    assert rates.loc["HUM", "relevance_prediction"] == pytest.approx((251 + 237) / 600)  # 81% in Table 1
    assert round(100 * rates.loc["HEAD", "relevance_prediction"]) == 76
    assert round(100 * rates.loc["HUM", "relevance_prediction"]) == 81
    cats = result.categories.set_index(["condition", "surrogate", "full_text"])
    shares = [100 * cats.loc[("HEAD", s, f), "share"] for s, f in
              (("rel", "rel"), ("rel", "non"), ("non", "rel"), ("non", "non"))]
    # Table 6, HEAD: 35%, 5%, 19%, 41% (the paper rounds 4.5 up and 19.5 down, so that they sum to 100)
    assert np.allclose(shares, [35, 5, 19, 41], atol=0.5)
    assert cats.loc[("HUM", "non", "rel"), "n"] == 77


def _table1():
    """3 events x 10 subjects x 20 documents; per event the RP and LDC counts of Table 1 (to rounding).

    Pairs whose full-text judgment differs from gold (D per event) give RP = 1 - LDC, the others RP = LDC;
    ``a``/``b`` are the surrogate judgments equal to the full text among the agreeing/disagreeing pairs."""
    rows = []
    counts = {"HEAD": [(152, 133), (141, 131), (163, 139)], "HUM": [(159, 138), (171, 145), (158, 124)]}
    for e, d_pairs in enumerate((45, 40, 40)):
        pairs = [(f"s{s}", f"e{e}d{d}", "rel" if d < 10 else "non") for s in range(10) for d in range(20)]
        full = {}
        for k, (s, d, g) in enumerate(pairs):
            full[(s, d)] = ("non" if g == "rel" else "rel") if k < d_pairs else g
            rows.append(dict(subject=s, document=d, condition="full", judgment=full[(s, d)], gold=g, group=f"E{e + 1}"))
        for condition, per_event in counts.items():
            rp, ldc = per_event[e]
            a = (rp + ldc - d_pairs) // 2
            b = rp - a
            for k, (s, d, g) in enumerate(pairs):
                f = full[(s, d)]
                same = k < b if k < d_pairs else (k - d_pairs) < a
                j = f if same else ("non" if f == "rel" else "rel")
                rows.append(dict(subject=s, document=d, condition=condition, judgment=j, gold=g, group=f"E{e + 1}"))
    return pd.DataFrame(rows)


def test_table_1_per_event_and_overall_rates():
    result = relevance_agreement(_table1(), by_group=True)
    rates = result.rates.set_index(["condition", "group"])
    table1 = {"HEAD": [(67, 76), (66, 71), (70, 82), (67, 76)], "HUM": [(69, 80), (73, 86), (62, 79), (68, 81)]}
    for condition, expected in table1.items():
        for (ldc, rp), group in zip(expected, ("E1", "E2", "E3", "all")):
            assert abs(100 * rates.loc[(condition, group), "ldc_agreement"] - ldc) <= 0.5
            assert abs(100 * rates.loc[(condition, group), "relevance_prediction"] - rp) <= 0.5
    # the pooled rate of equal-size events is the mean of the events' rates
    for condition in ("HEAD", "HUM"):
        events = [rates.loc[(condition, g), "relevance_prediction"] for g in ("E1", "E2", "E3")]
        assert rates.loc[(condition, "all"), "relevance_prediction"] == pytest.approx(np.mean(events))


# -- the partition-averaged correlation ----------------------------------------------------------------------
def test_partition_stats_validation():
    with pytest.raises(ParameterError) as info:
        partition_correlations(np.arange(8.0), np.arange(8.0), size=3, n_partitions=5, rng=np.random.default_rng(0))
    assert str(info.value) == "`size` must leave at least 3 cells of the 8 points (size <= 2); got 3."
    with pytest.raises(ParameterError, match=r"^`x` and `y` must have the same length; got 4 and 5\.$"):
        partition_correlations(np.zeros(4), np.zeros(5), size=1, n_partitions=5, rng=np.random.default_rng(0))
    with pytest.raises(ParameterError, match=r"^`weights` must be > 0; got 0\.0\.$"):
        partition_correlations(np.arange(6.0), np.arange(6.0), size=1, n_partitions=1, rng=np.random.default_rng(0),
                               weights=[1, 1, 0, 1, 1, 1])


def test_size_one_is_pearson_and_matches_a_plain_loop():
    rng = np.random.default_rng(5)
    x = rng.normal(size=30)
    y = x + rng.normal(size=30)
    r1 = partition_correlations(x, y, size=1, n_partitions=4, rng=np.random.default_rng(1))
    assert np.allclose(r1, stats.pearsonr(x, y)[0])
    r3 = partition_correlations(x, y, size=3, n_partitions=50, rng=np.random.default_rng(2))
    cells = partition_indices(30, 3, 50, np.random.default_rng(2))
    loop = [stats.pearsonr(x[c].mean(axis=1), y[c].mean(axis=1))[0] for c in cells]
    assert np.allclose(r3, loop)
    r_batched = partition_correlations(x, y, size=3, n_partitions=50, rng=np.random.default_rng(2), batch=7)
    assert np.array_equal(r3, r_batched)


def test_weights_pool_cells_and_left_out_points():
    rng = np.random.default_rng(8)
    x, y, w = rng.random(13), rng.random(13), rng.integers(1, 5, 13).astype(float)
    r = partition_correlations(x, y, size=4, n_partitions=20, rng=np.random.default_rng(3), weights=w)
    cells = partition_indices(13, 4, 20, np.random.default_rng(3))
    assert cells.shape == (20, 3, 4)
    pooled = [stats.pearsonr((w[c] * x[c]).sum(1) / w[c].sum(1), (w[c] * y[c]).sum(1) / w[c].sum(1))[0] for c in cells]
    assert np.allclose(r, pooled)
    result = partition_correlation(x, y, sizes=4, n_partitions=20, rng=0)
    assert result.table.loc[0, "n_left_out"] == 1 and result.table.loc[0, "n_cells"] == 3


def test_constant_cells_are_undefined_and_counted():
    x = np.array([1.0, 1, 1, 1, 1, 1])
    with pytest.warns(me.DegenerateWarning, match="partitions have constant cell means"):
        result = partition_correlation(x, np.arange(6.0), sizes=2, n_partitions=10, rng=0)
    assert result.table.loc[0, "n_undefined"] == 10 and np.isnan(result.table.loc[0, "mean"])


def test_row_pearson_on_the_representative_partition_of_tables_2_and_4():
    rp_head = np.array([80, 80, 85, 70, 73, 60, 80, 75, 60, 75, 88, 68, 80, 93, 83]) / 100
    r1_head = np.array([.10, .23, .13, .27, .20, .24, .26, .22, .13, .08, .30, .16, .26, .27, .30])
    assert row_pearson(r1_head[None], rp_head[None])[0] == pytest.approx(stats.pearsonr(r1_head, rp_head)[0])
    assert r1_head.mean() == pytest.approx(0.211, abs=0.0015)  # Table 4's "Avg" column


def test_same_seed_same_result_and_same_partitions_for_every_label(shared_data):
    ds = me.load_dataset("summeval")
    a = scoreset_partition_correlation(ds, ["rouge-1.f1", "rouge-2.f1"], "expert.relevance", sizes=(1, 4),
                                       n_partitions=200, rng=3)
    b = scoreset_partition_correlation(ds, ["rouge-2.f1"], "expert.relevance", sizes=(1, 4), n_partitions=200, rng=3)
    assert np.array_equal(a.distributions[("rouge-2.f1", 4)], b.distributions[("rouge-2.f1", 4)])
    x, z = ds.matrix("rouge-1.f1").ravel(), ds.matrix("expert.relevance").ravel()
    assert a.table.loc[0, "mean"] == pytest.approx(stats.pearsonr(x, z)[0])
    # random cells of i.i.d.-like points keep the correlation in expectation; only its spread grows
    assert abs(a.table.loc[1, "mean"] - a.table.loc[0, "mean"]) < 0.02
    assert a.table.loc[1, "std"] > 0.02
    assert "seed:3" in str(a.signature) and "sizes:1,4" in str(a.signature)


def test_extrinsic_correlation_units():
    frame = _table6().assign(rouge=lambda f: np.where(f["judgment"] == "rel", 0.3, 0.1)
                             + (f["document"].str[1:].astype(int) % 7) / 100)
    by_document = extrinsic_correlation(frame, metric="rouge", measures="relevance-prediction", full_text="DOC",
                                        sizes=(1, 2), n_partitions=100, rng=0)
    assert list(by_document.table["label"]) == ["HEAD (RP)", "HEAD (RP)", "HUM (RP)", "HUM (RP)"]
    assert (by_document.table["n_points"] == 60).all()
    by_judgment = extrinsic_correlation(frame, metric="rouge", measures="relevance-prediction", full_text="DOC",
                                        unit="judgment", sizes=1, n_partitions=10, rng=0)
    assert (by_judgment.table["n_points"] == 600).all()
    agree = relevance_agreement(frame, full_text="DOC", metrics=("rouge",)).judgments
    head = agree[agree["condition"] == "HEAD"]
    assert by_judgment.table.loc[0, "mean"] == pytest.approx(stats.pearsonr(head["rouge"], head["agree"])[0])


# -- CLI ---------------------------------------------------------------------------------------------------------
def test_cli_agreement_correlate_partition(tmp_path, capsys):
    out = tmp_path / "a.json"
    assert main(["extrinsic", "agreement", str(FIXTURE), "--metric", "rouge1", "--format", "json",
                 "--output", str(out)]) == 0
    rates = {r["condition"]: r for r in json.loads(out.read_text())["rates"]}
    assert rates["HEAD"]["relevance_prediction"] == pytest.approx(4 / 6)
    assert main(["extrinsic", "correlate", str(FIXTURE), "--metric", "rouge1", "--sizes", "1",
                 "--n-partitions", "10"]) == 0
    assert "HEAD (RP)" in capsys.readouterr().out
    assert main(["extrinsic", "correlate", str(FIXTURE), "--metric", "rouge1", "--sizes", "2"]) == 2
    assert capsys.readouterr().err == ("metaeval: error: `size` must leave at least 3 cells of the 3 points "
                                       "(size <= 1); got 2.\n")
    assert main(["extrinsic", "partition", "--dataset", "summeval", "--metric", "rouge-1.f1", "--sizes", "1,4",
                 "--n-partitions", "50", "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("label,size,mean,median")


def test_cli_errors_are_one_line(tmp_path, capsys):
    path = tmp_path / "j.csv"
    path.write_text("subject,document,judgment\ns1,d1,rel\n", encoding="utf-8")
    assert main(["extrinsic", "agreement", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == (f"metaeval: error: {path}: the table must have the columns ['subject', 'document', 'condition', "
                   "'judgment']; got ['document', 'judgment', 'subject'].\n")
