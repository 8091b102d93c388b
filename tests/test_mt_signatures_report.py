"""Signatures that rebuild the number (issue 41 item 2) and the protocol audit as a section of the report (issue 38
item 5, the `mt audit` part): a protocol signed by its content, the MQM weights in the `mt` signature, the seed
actually used, `--aggregation` refused where it cannot apply; `metaeval report --mt-scores`; footers that name
exactly the files written beside the page."""
from __future__ import annotations

import json

import numpy as np
import pytest

import metaeval as me
from metaeval.cli.main import main
from metaeval.errors import ParameterError
from metaeval.mt.protocol import protocol_hash


def _lp(seed, systems=6, segments=30):
    rng = np.random.default_rng(seed)
    human = rng.normal(size=(systems, segments)) + np.arange(systems)[:, None]
    mats = {"mqm": human, "good": human + rng.normal(scale=0.5, size=human.shape),
            "noisy": human + rng.normal(scale=3.0, size=human.shape),
            "mid": human + rng.normal(scale=1.5, size=human.shape)}
    return me.ScoreSet.from_matrices(mats, humans=["mqm"], name=f"lp{seed}")


TOML = """name = "mine"
description = "{description}"
rescaling = "none"
pooled_weight = 1.0
[[task]]
level = "system"
statistic = "pearson"
weight = {weight}
[[task]]
level = "summary"
statistic = "kendall-b"
weight = 1.0
"""


def test_a_protocol_is_signed_by_its_content_and_name(tmp_path):
    paths = {}
    for key, weight, description in (("a", 1.0, "one"), ("b", 3.0, "one"), ("c", 1.0, "other words")):
        paths[key] = tmp_path / f"{key}.toml"
        paths[key].write_text(TOML.format(weight=weight, description=description))
    data = {"en-de": _lp(1), "zh-en": _lp(2)}
    sig = {key: me.mt_evaluate(data, ["good", "noisy"], "mqm", protocol=me.load_protocol(path), n_resamples=20,
                               rng=0).signature.as_dict() for key, path in paths.items()}
    assert sig["a"]["protocol"] == sig["b"]["protocol"] == "mine"
    assert sig["a"]["protocol_hash"] != sig["b"]["protocol_hash"]  # other weights: another number, another hash
    assert sig["a"]["protocol_hash"] == sig["c"]["protocol_hash"]  # the description moves no number
    assert sig["a"]["protocol_hash"] == protocol_hash(me.load_protocol(paths["a"]))
    assert len(sig["a"]["protocol_hash"]) == 12


def test_the_mqm_weights_are_in_the_mt_signature(shared_data):
    path = shared_data / "wmt" / "mqm_ratings" / "sxs_mqm_generalMT2023_ende.3ratings.tsv.gz"
    out = {}
    for key, weights in (("default", None), ("heavy", {"major": 10.0, "minor": 1.0, "neutral": 0.0})):
        ds = me.read_mqm_ratings(path, weights=weights).scores
        rng = np.random.default_rng(0)
        mats = {s: ds.matrix(s) for s in ds.scorers}
        mats["metric-A"] = ds.matrix("mqm") + rng.normal(size=ds.shape)
        joined = me.ScoreSet(mats, systems=ds.systems, inputs=ds.inputs, humans=ds.humans, name="ende",
                             description=ds.description)
        res = me.mt_evaluate({"en-de": joined}, ["metric-A"], "mqm", protocol="mean", tasks=["system/pearson"],
                             n_resamples=10, rng=0, exclude_systems=["refA"])
        out[key] = res.signature.as_dict()["subset"]
    assert out["default"] == ("MQM ratings, weights major=5,minor=1,neutral=0,minor-punctuation=0.1,non-translation=25,"
                              "zero=source issue+accuracy/creative reinterpretation")
    assert out["heavy"].startswith("MQM ratings, weights major=10,")


def test_aggregation_is_refused_where_nothing_is_aggregated(shared_data, tmp_path, capsys):
    path = shared_data / "wmt" / "mqm_ratings" / "sxs_mqm_generalMT2023_ende.3ratings.tsv.gz"
    ds = me.read_mqm_ratings(path).scores
    rng = np.random.default_rng(0)
    metric = ds.matrix("mqm") + rng.normal(size=ds.shape)
    median = me.ScoreSet({**{s: ds.matrix(s) for s in ds.scorers}, "metric-A": metric}, systems=ds.systems,
                         inputs=ds.inputs, humans=ds.humans, name="ende", description=ds.description,
                         aggregation="median")
    with pytest.raises(ParameterError) as err:
        me.mt_evaluate({"en-de": median}, ["metric-A"], "mqm", n_resamples=10, rng=0)
    assert str(err.value) == ("`aggregation` must be 'mean' when the gold has one score per cell (language pair"
                              " 'en-de': 'mqm', the mean of its raters as an MQM ratings file gives it; nothing to"
                              " aggregate); got 'median'.")
    me.write_scores(me.ScoreSet({"metric-A": metric}, systems=ds.systems, inputs=ds.inputs), tmp_path / "m.csv")
    code = main(["mt", "--scores", f"en-de={path}", "--scores", f"en-de={tmp_path / 'm.csv'}", "--human", "mqm",
                 "--aggregation", "median", "--task", "system/pearson", "--n-resamples", "10"])
    assert code == 2
    assert capsys.readouterr().err.strip().startswith("metaeval: error: `--aggregation` must be 'mean' when the gold")


def test_the_seed_actually_used_is_recorded_and_rebuilds_the_audit():
    data = {"en-de": _lp(1), "zh-en": _lp(2)}
    kw = dict(tasks=["system/pearson"], n_resamples=20, n_consistency=2, accuracy_targets=(0.8,))
    drawn = me.mt_audit(data, ["good", "noisy", "mid"], "mqm", rng=None, **kw)
    seed = drawn.signature.as_dict()["seed"]
    assert isinstance(seed, int) and seed >= 0
    again = me.mt_audit(data, ["good", "noisy", "mid"], "mqm", rng=seed, **kw)
    assert str(again.signature) == str(drawn.signature)
    assert json.dumps(again.measures) == json.dumps(drawn.measures)
    np.testing.assert_array_equal(again.statistics, drawn.statistics)


def test_the_audit_is_a_section_of_the_report_and_footers_name_the_files(tmp_path, capsys):
    for lp, seed in (("en-de", 1), ("zh-en", 2)):
        me.write_scores(_lp(seed), tmp_path / f"{lp}.csv")
    me.write_scores(_lp(3), tmp_path / "main.csv")
    out = tmp_path / "rep"
    argv = ["report", "--scores", str(tmp_path / "main.csv"), "--human", "mqm", "--analysis", "none",
            "--n-resamples", "20", "--mt-scores", f"en-de={tmp_path / 'en-de.csv'}",
            "--mt-scores", f"zh-en={tmp_path / 'zh-en.csv'}", "--output", str(out)]
    assert main(argv) == 0
    capsys.readouterr()
    page = (out / "report.html").read_text()
    assert 'id="mt-audit"' in page
    assert "The same numbers are in results.json, correlations.csv and comparison.csv beside this file." in page
    results = json.loads((out / "results.json").read_text())
    assert results["mt_audit"]["sentinels"] == ["sentinel-random", "sentinel-system-mean", "sentinel-rounded"]
    assert "--mt-scores" in results["command"]
    html = tmp_path / "audit.html"
    assert main(["mt", "audit", "--scores", f"en-de={tmp_path / 'en-de.csv'}", "--human", "mqm", "--task",
                 "system/pearson", "--n-resamples", "20", "--consistency", "0", "--html", str(html)]) == 0
    assert "No other file is written beside this page." in html.read_text()
    assert main(["mt", "audit", "--scores", f"en-de={tmp_path / 'en-de.csv'}", "--human", "mqm", "--task",
                 "system/pearson", "--n-resamples", "20", "--consistency", "0", "--html", str(html),
                 "--format", "json", "--output", str(tmp_path / "audit.json")]) == 0
    assert "The same numbers are in audit.json beside this file." in html.read_text()
    assert main(["report", "--scores", str(tmp_path / "main.csv"), "--human", "mqm", "--mt-protocol", "wmt24",
                 "--output", str(tmp_path / "rep2")]) == 2
    assert capsys.readouterr().err.strip().endswith("`--mt-protocol` must come with `--mt-scores`; got 'wmt24' alone.")


def _call_from_signature(text):
    """The keyword arguments of :func:`metaeval.mt_evaluate` read back from its printed signature alone."""
    from metaeval.mt.checks import resolve_protocol

    fields = dict(part.split(":", 1) for part in text.split("|"))
    listed = lambda key: () if fields.get(key, "none") == "none" else tuple(fields[key].split(","))  # noqa: E731
    kw = dict(protocol=fields["protocol"], tasks=list(listed("tasks")), exclude_systems=listed("exclude_systems"),
              human_baselines=listed("human_baselines"), human=fields["human"],
              significance={"perm-both": "permutation", "boot-inputs": "bootstrap"}.get(fields["significance"]),
              human_ties=fields["human_ties"], recalibrate=fields["recalibrate"] == "yes",
              n_resamples=int(fields["resamples"]), alpha=float(fields["alpha"]), rng=int(fields["seed"]),
              segments=fields.get("segments", "common"))
    if "tie_tolerance" in fields:
        kw["tie_tolerance"] = float(fields["tie_tolerance"])
    # the protocol's own tasks (with their weights) or the tasks named (weight 1 each): the hash says which ran
    # (each metric on its own segments prints no test: the hash says which the protocol held)
    tests = (kw["significance"],) if kw["significance"] else (None, "permutation", "bootstrap")
    ran = [(tasks, test) for tasks in (None, kw["tasks"]) for test in tests if protocol_hash(resolve_protocol(
        kw["protocol"], tasks, test, kw["human_ties"])) == fields["protocol_hash"]]
    assert ran, fields["protocol_hash"]
    kw["tasks"], kw["significance"] = ran[0]
    return kw


@pytest.mark.parametrize("options", [
    dict(protocol="wmt23", tasks=["system/accuracy", "summary/acc23"], rng=None),
    dict(protocol="wmt24", n_resamples=30, rng=np.random.default_rng(3), exclude_systems=["0"]),
    dict(protocol="mean", tasks=["system/pearson", "global/kendall-b"], significance="bootstrap", rng=7,
         tie_tolerance=1e-6, alpha=0.1),
    dict(protocol="mean", tasks=["summary/kendall-b"], segments="per-metric", human_ties="count", rng=None),
])
def test_a_result_is_rebuilt_from_its_printed_signature_alone(options):
    data = {"en-de": _lp(1), "zh-en": _lp(2)}
    metrics = ["good", "noisy", "mid"]
    first = me.mt_evaluate(data, metrics, "mqm", **{"n_resamples": 40, **options})
    again = me.mt_evaluate(data, metrics, **_call_from_signature(str(first.signature)))
    assert str(again.signature) == str(first.signature)
    np.testing.assert_array_equal(again.statistics, first.statistics)
    for scope in first.scopes:
        np.testing.assert_array_equal(again.pvalues[scope], first.pvalues[scope])
        np.testing.assert_array_equal(again.averages[scope], first.averages[scope])
