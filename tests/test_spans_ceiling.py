"""The fair human ceiling with `--exclude-system` and `--gold-rater` (issue 40, item 2 on real data), and a
comma-separated `--gold` (item 3(i)) through the spans CLI."""
from __future__ import annotations

import csv
import dataclasses
import gzip
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from metaeval.errors import ParameterError
from metaeval.spans import evaluate_spans, gold_from_ratings, rater_spans

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "wmt" / "mqm_ratings"
WMT23 = DATA / "sxs_mqm_generalMT2023_ende.3ratings.tsv.gz"
pytestmark = pytest.mark.skipif(not WMT23.exists(), reason="shared data not found")


@pytest.fixture(scope="module")
def ratings():
    from metaeval import read_mqm_ratings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_mqm_ratings(WMT23)


@pytest.fixture
def cli(capsys):
    from metaeval.cli.main import main

    def run(*args):
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return code, out, err
    return run


def _without(ratings, systems):
    """The ratings with every cell of ``systems`` removed: an oracle for ``exclude_systems``."""
    def keep(by_cell):
        return {c: v for c, v in by_cell.items() if c[0] not in systems}
    return dataclasses.replace(ratings, spans={r: keep(v) for r, v in ratings.spans.items()},
                               source_spans={r: keep(v) for r, v in ratings.source_spans.items()},
                               targets=keep(ratings.targets), sources=keep(ratings.sources))


def test_exclude_systems_leave_the_ceilings_golds_as_if_never_rated(ratings):
    out = ("ONLINE-Y", "refA")
    res = evaluate_spans(ratings, [], n_resamples=5, rng=0, fair_ceiling=True, exclude_systems=out)
    oracle = evaluate_spans(_without(ratings, set(out)), [], n_resamples=5, rng=0, fair_ceiling=True)
    assert res.fair["ceiling_f1"] == oracle.fair["ceiling_f1"] and res.fair["raters"] == oracle.fair["raters"]
    np.testing.assert_array_equal(res.fair["f1"], oracle.fair["f1"])
    np.testing.assert_array_equal(res.f1, oracle.f1)
    full = evaluate_spans(ratings, [], n_resamples=5, rng=0, fair_ceiling=True)
    assert res.fair["cells"] < full.fair["cells"] and res.fair["ceiling_f1"] != full.fair["ceiling_f1"]
    assert res.n_excluded == 2 * 104 and res.excluded_systems == out and res.n_cells == 8 * 104
    assert "exclude_system:ONLINE-Y,refA" in str(res.signature) and "ceiling:leave-one-rater-out" in str(res.signature)
    with pytest.raises(ParameterError, match=r"^`exclude_systems` must name systems of the gold; got 'ONLINE-x' "
                                             r"\(did you mean 'ONLINE-Y'\?\)\.$"):
        evaluate_spans(ratings, [], n_resamples=5, exclude_systems=["ONLINE-x"])


def test_gold_rater_ceiling_is_the_other_raters_against_that_gold(ratings):
    """With the gold one rater's spans, each other rater who shares segments with it is scored against it,
    and every row against the same gold on the same segments; checked against evaluate_spans on each
    rater's shared segments."""
    res = evaluate_spans(ratings, [], gold_raters=["rater3"], n_resamples=5, rng=0, fair_ceiling=True)
    gold = gold_from_ratings(ratings, raters=["rater3"])
    whole, humans = [], []
    others = [r for r in ratings.raters if r != "rater3" and set(ratings.spans[r]) & set(gold.cells)]
    for r in others:
        shared = [c for c in ratings.spans[r] if c in gold.cells]
        one = evaluate_spans(gold.restricted(shared), [], baselines=["whole-segment"],
                             humans=[rater_spans(ratings, r).restricted(shared)], n_resamples=5, rng=0)
        whole.append(one.f1[0])
        humans.append(one.f1[1])
    assert res.fair["raters"] == len(others) == 4 and res.fair["rule"] == "others-against-gold-raters"
    assert res.fair["ceiling_f1"] == pytest.approx(np.mean(humans), abs=1e-12)
    assert res.fair["f1"][res.detectors.index("baseline:whole-segment")] == pytest.approx(np.mean(whole), abs=1e-12)
    assert round(res.fair["ceiling_f1"], 3) == 0.305
    assert "ceiling:others-against-gold-raters" in str(res.signature)
    with pytest.raises(ParameterError, match=r"^`gold_raters` must leave out a rater who shares segments with them "
                                             r"for the fair ceiling; got rater3, rater5, .*, rater7\.$"):
        evaluate_spans(ratings, [], gold_raters=list(ratings.raters), n_resamples=5, fair_ceiling=True)


def test_cli_ceiling_with_exclude_system_and_gold_rater(cli):
    code, out, err = cli("spans", "evaluate", "--gold", WMT23, "--exclude-system", "ONLINE-Y", "--gold-rater",
                         "rater3", "--n-resamples", "5", "--format", "json")
    assert code == 0, err
    result = json.loads(out)
    assert result["ceiling_rule"] == "others-against-gold-raters" and result["ceiling_raters"] == 4
    assert result["n_excluded"] == 30 and result["excluded_systems"] == ["ONLINE-Y"]
    code, out, err = cli("spans", "evaluate", "--gold", WMT23, "--exclude-system", "ONLINE-Y", "--n-resamples", "5")
    assert code == 0, err
    assert "Like with like: every row and each held-out rater" in out
    assert "systems left out (--exclude-system): ONLINE-Y - 104 segment(s) out of the gold, every detector and" in out
    every = [arg for r in (3, 5, 10, 6, 1, 2, 4, 9, 8, 7) for arg in ("--gold-rater", f"rater{r}")]
    code, out, err = cli("spans", "evaluate", "--gold", WMT23, *every, "--n-resamples", "5")
    assert code == 0, err
    assert "human ceiling: not available (no rater outside --gold-rater shares a segment with them)" in out


def test_cli_comma_separated_gold_prints_what_the_tsv_prints(cli, tmp_path):
    path = tmp_path / "ende.csv"
    with gzip.open(WMT23, "rt", encoding="utf-8") as src, open(path, "w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        for line in src:
            writer.writerow(line.rstrip("\n").split("\t"))
    runs = []
    for gold in (WMT23, path):
        code, out, err = cli("spans", "compare", "--gold", gold, "--n-resamples", "20", "--format", "json")
        assert code == 0, err
        runs.append(json.loads(out))
    a, b = runs
    assert a["signature"].replace("sxs_mqm_generalMT2023_ende.3ratings.tsv.gz", "ende.csv") == b["signature"]
    a.pop("signature"), b.pop("signature")
    assert a == b


def test_agreement_with_gold_raters_is_the_ceiling_evaluate_prints(ratings, cli):
    from metaeval.spans import span_agreement

    res = evaluate_spans(ratings, [], gold_raters=["rater3"], n_resamples=5, rng=0, fair_ceiling=True,
                         exclude_systems=["ONLINE-Y"])
    agree = span_agreement(ratings, gold_raters=["rater3"], exclude_systems=["ONLINE-Y"], n_resamples=5, rng=0,
                           pairwise=True)
    assert agree.ceiling_f1 == pytest.approx(res.fair["ceiling_f1"], abs=1e-12)
    assert {r["against"] for r in agree.rows} == {"gold raters", "rater3"}
    assert len([r for r in agree.rows if r["against"] == "gold raters"]) == res.fair["raters"] == 4
    assert "gold:union-of-gold-raters|gold_raters:rater3" in str(agree.signature)
    with pytest.raises(ParameterError, match=r"^`gold_raters` must be a non-empty sequence of raters of the ratings "
                                             r"\(rater3, .*\); got \['rater33'\]\.$"):
        span_agreement(ratings, gold_raters=["rater33"], n_resamples=5)
    code, out, err = cli("spans", "agreement", "--gold", WMT23, "--gold-rater", "rater3", "--n-resamples", "5")
    assert code == 0, err
    full = span_agreement(ratings, gold_raters=["rater3"], n_resamples=5, rng=0, pairwise=False)
    assert f"human ceiling (mean F1 of the raters outside --gold-rater against its union): {full.ceiling_f1:.3f}" in out


def test_binary_takes_the_gold_rules_and_exclude_systems_as_keywords(ratings, cli):
    from metaeval.spans.binary import evaluate_binary

    built = gold_from_ratings(ratings, raters=["rater3", "rater5"], errors="all", source_spans=False)
    a = evaluate_binary(ratings.scores, "mqm", gold=built, n_resamples=20, rng=0)
    b = evaluate_binary(ratings.scores, "mqm", gold=ratings, gold_raters=["rater3", "rater5"], errors="all",
                        source_spans=False, n_resamples=20, rng=0)
    np.testing.assert_array_equal(a.values, b.values)
    assert str(a.signature) == str(b.signature)
    c = evaluate_binary(ratings.scores, "mqm", gold=ratings, exclude_systems=["ONLINE-Y"], n_resamples=200, rng=0,
                        compare=True)
    code, out, err = cli("spans", "binary", "--gold", WMT23, "--exclude-system", "ONLINE-Y", "--n-resamples", "200",
                         "--format", "json")
    assert code == 0, err
    assert json.loads(out)["signature"] == str(c.signature) and "exclude_system:ONLINE-Y" in str(c.signature)
    assert c.n_cells == 9 * 104
    with pytest.raises(ParameterError, match=r"^`exclude_systems` must name systems of the scores; got 'ONLINE-x' "
                                             r"\(did you mean 'ONLINE-Y'\?\)\.$"):
        evaluate_binary(ratings.scores, "mqm", gold=ratings, exclude_systems=["ONLINE-x"])
    with pytest.raises(ParameterError, match=r"^`errors`, `source_spans` and `gold_raters` apply to a gold built from "
                                             r"MQM ratings; got no `gold`\.$"):
        evaluate_binary(ratings.scores, "mqm", task="critical", errors="all", baselines=False)


# Every flag of a spans command is a keyword of its Python function, under these names (the CLI's repeatable
# flags are singular, the keywords plural; the seed is `rng` library-wide); what is left is CLI-only: output,
# the detector files' reading (`read_detector_spans(offsets=, end=)`) and the score files' reading.
RENAMED = {"seed": "rng", "gold_rater": "gold_raters", "exclude_system": "exclude_systems", "detector": "detectors",
           "ceiling": "fair_ceiling", "correct_baselines": "baselines_in_family", "metric": "metrics",
           "label": "labels"}
CLI_ONLY = {"format", "output", "progress", "html", "offsets", "end", "scores", "system_column", "input_column",
            "annotator_column", "human_column", "where", "layout", "file_format", "rename", "rename_system",
            "allow_unmatched"}
#: Defaults that differ on purpose (CLI, Python): the terminal shows the short agreement table, the binary
#: tests and the human ceiling by default; the functions compute the tests and the ceiling on request.
DEFAULTS_DIFFER = {("agreement", "pairwise"): (False, True), ("binary", "compare"): (True, False),
                   ("evaluate", "ceiling"): (True, False), ("compare", "ceiling"): (True, False)}


@pytest.mark.parametrize("command, function", [
    ("evaluate", "evaluate_spans"), ("compare", "evaluate_spans"), ("agreement", "span_agreement"),
    ("binary", "evaluate_binary")])
def test_every_spans_flag_is_a_keyword_with_the_same_default(command, function):
    import inspect

    import click

    import metaeval.spans as api
    from metaeval.cli.spans_command import spans
    from metaeval.spans.binary import evaluate_binary

    fn = evaluate_binary if function == "evaluate_binary" else getattr(api, function)
    keywords = inspect.signature(fn).parameters
    renamed = dict(RENAMED, **({"gold": "ratings"} if command == "agreement" else {}))
    for param in spans.commands[command].params:
        if param.name in CLI_ONLY:
            continue
        keyword = renamed.get(param.name, param.name)
        assert keyword in keywords, (command, param.name)
        default, flag_default = keywords[keyword].default, param.default
        if (command, param.name) in DEFAULTS_DIFFER:
            assert (flag_default, default) == DEFAULTS_DIFFER[(command, param.name)]
            continue
        unset = flag_default is None or flag_default == () or type(flag_default).__name__ == "Sentinel"
        if unset or default is None or param.multiple or keyword in ("gold", "ratings", "rng"):
            continue
        assert flag_default == default, (command, param.name, flag_default, default)
    assert isinstance(spans, click.Group)
