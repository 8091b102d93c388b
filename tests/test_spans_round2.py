"""Spans, round two (issues 38, 40, 41): signatures that rebuild the number, folds shared by every scorer,
the fair human ceiling, progress, labelled p-values, detector files and hostile input."""
from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from metaeval import ScoreSet
from metaeval.errors import DegenerateWarning, InputFileError, ParameterError
from metaeval.spans import (Span, SpanAnnotations, evaluate_spans, gold_from_ratings, rater_spans,
                            read_detector_spans, write_detector_spans)
from metaeval.spans.binary import evaluate_binary

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "wmt" / "mqm_ratings"
WMT23 = DATA / "sxs_mqm_generalMT2023_ende.3ratings.tsv.gz"
real = pytest.mark.skipif(not WMT23.exists(), reason="shared data not found")


class _Out:
    def __init__(self, code, out, err):
        self.returncode, self.stdout, self.stderr = code, out, err


@pytest.fixture
def cli(capsys):
    from metaeval.cli.main import main

    def run(*args):
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return _Out(code, out, err)
    return run


@pytest.fixture(scope="module")
def ratings():
    from metaeval import read_mqm_ratings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_mqm_ratings(WMT23)


def _tiny_gold():
    targets = {(s, str(j)): "abcdefghij" for s in ("A", "B") for j in range(6)}
    spans = {c: [Span(0, 3, "major")] if int(c[1]) % 2 else [] for c in targets}
    return SpanAnnotations("gold", spans, targets)


# -- detector files --------------------------------------------------------------------------------------
def test_duplicate_keys_in_a_detector_line_are_refused(tmp_path):
    gold = _tiny_gold()
    path = tmp_path / "d.jsonl"
    path.write_text('{"system": "A", "segment": "0", "segment": "1", "spans": []}\n')
    with pytest.raises(InputFileError, match="every key of a JSON object must appear once; got 'segment' twice."):
        read_detector_spans(path, gold.targets)


def test_deep_nesting_is_a_one_line_error_not_a_recursion_error(tmp_path):
    gold = _tiny_gold()
    path = tmp_path / "deep.jsonl"
    path.write_text('{"system": "A", "segment": "0", "spans": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    with pytest.raises(InputFileError, match="every line must be a JSON object nested at most 64 deep; got 100001 "
                                             "levels."):
        read_detector_spans(path, gold.targets)


def test_a_name_with_u2028_round_trips(tmp_path):
    targets = {("sys\u2028tem", "1"): "abc def", ("b", "2\u2029"): "xyz"}
    ann = SpanAnnotations("d", {c: [Span(0, 3, "minor")] for c in targets}, targets)
    write_detector_spans(ann, tmp_path / "d.jsonl")
    assert "\u2028" not in (tmp_path / "d.jsonl").read_text(encoding="utf-8")
    back = read_detector_spans(tmp_path / "d.jsonl", targets)
    assert back.cells == ann.cells


def test_a_detector_named_like_a_baseline_is_refused():
    gold = _tiny_gold()
    det = SpanAnnotations("baseline:random", gold.cells, gold.targets)
    with pytest.raises(ParameterError, match="`detectors` must not be named like a baseline or a human row "
                                             "\\('baseline:...', 'human:...'\\); got 'baseline:random'."):
        evaluate_spans(gold, [det], n_resamples=5, rng=0)


def test_source_side_spans_in_a_detector_file(tmp_path):
    targets = {("A", "1"): "abc def"}
    sources = {("A", "1"): "0123456789"}
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"system": "A", "segment": "1", "spans": [
        {"start": 8, "end": 10, "severity": "major", "side": "source"}]}) + "\n")
    det = read_detector_spans(path, targets, sources=sources)
    assert det.cells[("A", "1")] == (Span(8, 10, "major", "", "source"),)
    with pytest.raises(InputFileError, match="a span with `side` 'source' needs the gold's source of the segment"):
        read_detector_spans(path, targets)
    path.write_text(json.dumps({"system": "A", "segment": "1", "spans": [
        {"start": 0, "end": 2, "side": "left"}]}) + "\n")
    with pytest.raises(InputFileError, match="`side` must be one of target, source; got 'left'."):
        read_detector_spans(path, targets, sources=sources)


# -- binary ----------------------------------------------------------------------------------------------
def _binary_data(n_seg=40, seed=1):
    rng = np.random.default_rng(seed)
    systems, segments = ["A", "B", "C"], [str(j) for j in range(n_seg)]
    human = -rng.integers(0, 3, size=(3, n_seg)).astype(float)
    targets = {(s, g): "x" * int(5 + 10 * rng.random()) for s in systems for g in segments}
    spans = {(s, g): ([Span(0, 2, "minor")] if human[a, j] < 0 else []) for a, s in enumerate(systems)
             for j, g in enumerate(segments)}
    gold = SpanAnnotations("gold", spans, targets)
    metric = human + rng.normal(0, 0.7, size=human.shape)
    other = rng.normal(size=human.shape)
    ds = ScoreSet({"mqm": human, "m": metric, "other": other}, systems=systems, inputs=segments, humans=["mqm"])
    return ds, gold


def test_adding_a_scorer_never_moves_another_scorers_folds():
    ds, gold = _binary_data()
    alone = evaluate_binary(ds, "mqm", gold=gold, metrics=["m"], n_resamples=50, rng=3)
    more = evaluate_binary(ds, "mqm", gold=gold, metrics=["other", "m"], n_resamples=50, rng=3)
    for name in ("m", "baseline:length"):
        assert alone.thresholds[name] == more.thresholds[name]
        i, j = alone.predictors.index(name), more.predictors.index(name)
        np.testing.assert_array_equal(alone.values[i], more.values[j])
        np.testing.assert_array_equal(alone.ci[i], more.ci[j])  # the bootstrap stream is its own too


def test_no_positive_segment_warns_and_nan_threshold_is_refused():
    ds, gold = _binary_data()
    with pytest.warns(DegenerateWarning, match="the gold has no positive segment \\(critical, threshold -50, 120 "
                                               "segments\\)"):
        evaluate_binary(ds, "mqm", task="critical", human_threshold=-50, gold=gold, n_resamples=5, rng=0)
    with pytest.raises(ParameterError, match="`human_threshold` must be a finite number; got nan."):
        evaluate_binary(ds, "mqm", gold=gold, human_threshold=float("nan"), n_resamples=5, rng=0)


def test_binary_signature_names_the_folds_and_the_gold():
    ds, gold = _binary_data()
    groups = {g: str(int(g) // 4) for g in ds.inputs}
    a = evaluate_binary(ds, "mqm", gold=gold, n_resamples=5, rng=0)
    b = evaluate_binary(ds, "mqm", gold=gold, groups=groups, folds_by="document", n_resamples=5, rng=0)
    assert "folds_by:segment" in str(a.signature) and "folds_by:document" in str(b.signature)


def test_pvalue_rows_are_labelled():
    ds, gold = _binary_data()
    res = evaluate_binary(ds, "mqm", gold=gold, metrics=["m"], compare=True, n_resamples=50, rng=0)
    rows = res.to_dict()["pvalue_rows"]
    assert {(r["first"], r["second"]) for r in rows} == {("m", "baseline:all-error-free"), ("m", "baseline:length"),
                                                         ("baseline:all-error-free", "baseline:length")}


# -- evaluate --------------------------------------------------------------------------------------------
def test_progress_reports_one_named_step():
    gold = _tiny_gold()
    calls = []
    evaluate_spans(gold, [SpanAnnotations("d", gold.cells, gold.targets)], n_resamples=10, rng=0, compare=True,
                   progress=lambda units=1, **kw: calls.append((units, kw)))
    assert calls[0] == (0, {"step": "spans", "total": 6})
    assert calls[-1] == (0, {"step": "spans", "done": True})
    assert sum(u for u, kw in calls[1:-1]) == 6


def test_baselines_form_their_own_correction_family():
    """Two detectors: their pair alone in its family, so its p-value is not inflated by the baselines."""
    gold = _tiny_gold()
    rng = np.random.default_rng(0)
    a = SpanAnnotations("a", gold.cells, gold.targets)
    b = SpanAnnotations("b", {c: [Span(int(rng.integers(0, 5)), 8)] for c in gold.cells}, gold.targets)
    apart = evaluate_spans(gold, [a, b], compare=True, n_resamples=200, rng=1, correction="holm")
    together = evaluate_spans(gold, [a, b], compare=True, n_resamples=200, rng=1, correction="holm",
                              baselines_in_family=True)
    raw = evaluate_spans(gold, [a, b], compare=True, n_resamples=200, rng=1, correction="none")
    assert apart.pvalues[0, 1] == raw.pvalues[0, 1]
    assert together.pvalues[0, 1] >= apart.pvalues[0, 1]
    assert "family:baselines-apart" in str(apart.signature) and "family:all-pairs" in str(together.signature)
    assert apart.to_dict()["pvalue_rows"][0] == {"first": "a", "second": "b", "delta_f1": pytest.approx(
        apart.f1[0] - apart.f1[1]), "pvalue": apart.pvalues[0, 1]}


def test_adding_a_detector_never_moves_the_random_baseline_or_the_intervals():
    gold = _tiny_gold()
    one = evaluate_spans(gold, [SpanAnnotations("a", gold.cells, gold.targets)], n_resamples=50, rng=4)
    two = evaluate_spans(gold, [SpanAnnotations("a", gold.cells, gold.targets),
                                SpanAnnotations("b", {c: [] for c in gold.cells}, gold.targets)], n_resamples=50,
                         rng=4, compare=True)
    np.testing.assert_array_equal(one.f1_ci[0], two.f1_ci[0])
    assert one.f1[one.detectors.index("baseline:random")] == two.f1[two.detectors.index("baseline:random")]


@real
def test_fair_ceiling_scores_detectors_against_the_ceilings_golds(ratings):
    from metaeval.spans import span_agreement

    res = evaluate_spans(ratings, [], n_resamples=5, rng=0, fair_ceiling=True)
    agree = span_agreement(ratings, n_resamples=5, rng=0, pairwise=False)
    assert res.fair["ceiling_f1"] == pytest.approx(agree.ceiling_f1, abs=1e-12)
    assert res.fair["raters"] == 10
    assert res.fair["f1"][res.detectors.index("baseline:no-spans")] == 0.0
    sig = str(res.signature)
    assert "ceiling:leave-one-rater-out" in sig and "gold_file:sxs_mqm_generalMT2023_ende.3ratings.tsv.gz" in sig


@real
def test_signature_names_gold_raters_matching_and_macro(ratings):
    res = evaluate_spans(ratings, [], gold_raters=["rater1", "rater2"], averaging="macro", matching="greedy",
                         severity="match", n_resamples=5, rng=0)
    sig = str(res.signature)
    for field in ("gold_raters:rater1,rater2", "errors:reference", "source_spans:yes", "macro:mean-f1",
                  "matching:greedy", "severity:match", "critical:major", "seed:0"):
        assert field in sig, field


# -- CLI -------------------------------------------------------------------------------------------------
@real
def test_cli_refuses_two_billion_resamples_up_front(cli, tmp_path):
    for command in ("evaluate", "agreement", "binary"):
        out = cli("spans", command, "--gold", WMT23, "--n-resamples", "2000000000")
        assert out.returncode == 2, (command, out.stderr)
        assert "`n_resamples` must be small enough for the resamples to fit in memory; got 2000000000" in out.stderr
        assert out.stderr.count("\n") == 1


@real
def test_cli_names_detectors_and_refuses_a_collision(cli, tmp_path, ratings):
    gold = gold_from_ratings(ratings)
    det = SpanAnnotations("x", {c: gold.cells[c] for c in gold.cells}, gold.targets, sources=gold.sources)
    write_detector_spans(det, tmp_path / "llm.v1.jsonl")
    write_detector_spans(det.target_only(), tmp_path / "llm.v2.jsonl")
    out = cli("spans", "evaluate", "--gold", WMT23, "--detector", tmp_path / "llm.v1.jsonl", "--detector",
              tmp_path / "llm.v2.jsonl", "--n-resamples", "5", "--no-ceiling")
    assert out.returncode == 2 and "`--detector` files must have distinct names (name one with NAME=PATH); got 'llm'" \
        in out.stderr
    out = cli("spans", "evaluate", "--gold", WMT23, "--detector", f"v1={tmp_path / 'llm.v1.jsonl'}", "--detector",
              f"v2={tmp_path / 'llm.v2.jsonl'}", "--n-resamples", "5", "--no-ceiling", "--format", "json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert [r["detector"] for r in result["rows"]][:2] == ["v1", "v2"]
    assert result["missed_source"] == {"v2": gold.n_source_spans}
    assert result["rows"][0]["f1"] == 1.0


@real
def test_cli_binary_nan_threshold_and_folds_by_in_the_signature(cli):
    out = cli("spans", "binary", "--gold", WMT23, "--human-threshold", "nan", "--n-resamples", "5")
    assert out.returncode == 2 and out.stderr.strip().endswith("`human_threshold` must be a finite number; got nan.")
    seg = json.loads(cli("spans", "binary", "--gold", WMT23, "--n-resamples", "20", "--format", "json").stdout)
    doc = json.loads(cli("spans", "binary", "--gold", WMT23, "--n-resamples", "20", "--folds-by", "document",
                         "--format", "json").stdout)
    assert seg["signature"] != doc["signature"] and "folds_by:document" in doc["signature"]


@real
def test_binary_table_keeps_every_interval_on_one_line(cli):
    out = cli("spans", "binary", "--gold", WMT23, "--n-resamples", "20")
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if line.startswith("│")]
    assert all(line.count("[") == line.count("]") for line in lines)
    assert max(len(line) for line in out.stdout.splitlines()) <= 100


# -- pages and the report --------------------------------------------------------------------------------
def test_spans_page_footer_names_no_file_it_does_not_write():
    from metaeval.report.spans_section import spans_page

    gold = _tiny_gold()
    page = spans_page(evaluate_spans(gold, [], n_resamples=5, rng=0))
    assert "No other file is written beside this page." in page and "results.json" not in page
    assert "comparison.csv beside" in spans_page(evaluate_spans(gold, [], n_resamples=5, rng=0),
                                                 files=("results.json", "comparison.csv"))


@real
def test_report_includes_the_spans_section_and_names_exactly_its_files(cli, tmp_path, ratings):
    h = ratings.scores.matrix("mqm")
    rng = np.random.default_rng(0)
    lines = ["system,input,mqm,metA,metB"]
    for i, s in enumerate(ratings.scores.systems):
        for j, g in enumerate(ratings.scores.inputs):
            if np.isfinite(h[i, j]):
                lines.append(f"{s},{g},{h[i, j]},{h[i, j] + 3 * rng.normal()},{rng.normal()}")
    (tmp_path / "m.csv").write_text("\n".join(lines) + "\n")
    out = cli("report", "--scores", tmp_path / "m.csv", "--human", "mqm", "--metric", "metA", "--quick", "--analysis",
              "none", "--spans-gold", WMT23, "--output", tmp_path / "rep")
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "rep" / "report.html").read_text()
    assert "Error spans" in page and "--spans-gold" in page
    written = sorted(p.name for p in (tmp_path / "rep").iterdir())
    assert written == ["correlations.csv", "report.html", "results.json"]
    assert "The same numbers are in results.json and correlations.csv beside this file." in page
    result = json.loads((tmp_path / "rep" / "results.json").read_text())
    assert result["spans"]["analysis"] == "spans" and "ceiling:leave-one-rater-out" in result["spans"]["signature"]
    out = cli("report", "--scores", tmp_path / "m.csv", "--human", "mqm", "--spans-detector", "x.jsonl", "--output",
              tmp_path / "rep2")
    assert out.returncode == 2 and "`--spans-detector` needs `--spans-gold`" in out.stderr


# -- the researcher's own files (issue 40 item 3) ---------------------------------------------------------
def _one_cell():
    targets = {("A", "1"): "Das ist ein kleiner Test."}
    return targets


@pytest.mark.parametrize("text", [
    '{"system": "A", "segment_id": "1", "error_spans": [{"start": 12, "end": 18, "severity": "minor"}]}\n',
    '[{"system": "A", "seg_id": 1, "errors": [{"text": "kleiner", "severity": "minor"}]}]',
])
def test_common_layouts(tmp_path, text):
    path = tmp_path / "d.json"
    path.write_text(text)
    det = read_detector_spans(path, _one_cell())
    (span,) = det.cells[("A", "1")]
    assert (span.start, span.severity) == (12, "minor") and span.end in (18, 19)


def test_span_text_that_occurs_twice_is_an_error_naming_the_segment(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"system": "A", "segment": "1", "spans": [{"text": "e"}]}\n')
    with pytest.raises(InputFileError, match="spans\\[0\\]: `text` must occur once in the segment's text to be "
                                             "located \\(system 'A', segment '1'\\); got 'e' 4 times \\(give start "
                                             "and end\\)."):
        read_detector_spans(path, _one_cell())


def test_offsets_inclusive_end_and_units(tmp_path):
    targets = {("A", "1"): "Größe ist 😀 gut"}
    path = tmp_path / "d.jsonl"
    # "ist": characters [6, 9); UTF-8 bytes [8, 11) (ö and ß are 2 bytes); inclusive end 8 in characters
    path.write_text('{"system": "A", "segment": "1", "spans": [{"start": 8, "end": 11}]}\n')
    assert read_detector_spans(path, targets, offsets="utf8").cells[("A", "1")][0] == Span(6, 9)
    path.write_text('{"system": "A", "segment": "1", "spans": [{"start": 6, "end": 8}]}\n')
    assert read_detector_spans(path, targets, end="inclusive").cells[("A", "1")][0] == Span(6, 9)
    # "gut" after the emoji (2 UTF-16 code units): characters [12, 15), UTF-16 [13, 16)
    path.write_text('{"system": "A", "segment": "1", "spans": [{"start": 13, "end": 16}]}\n')
    assert read_detector_spans(path, targets, offsets="utf16").cells[("A", "1")][0] == Span(12, 15)
    path.write_text('{"system": "A", "segment": "1", "spans": [{"start": 1, "end": 3}]}\n')
    with pytest.raises(InputFileError, match="an offset must fall between characters in utf8 units"):
        read_detector_spans(path, targets, offsets="utf8")


def test_boundaries_inside_words_warn(tmp_path):
    targets = {("A", str(j)): "alpha beta gamma delta" for j in range(12)}
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"system": "A", "segment": str(j), "spans": [{"start": 1, "end": 4}]}) + "\n"
                            for j in range(12)))
    with pytest.warns(Warning, match="24 of 24 span boundaries fall inside a word: are the offsets right"):
        read_detector_spans(path, targets)


def test_a_target_differing_by_trailing_white_space_is_accepted_and_counted(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"system": "A", "segment": "1", "target": "Das ist ein kleiner Test. ", "spans": []}\n')
    with pytest.warns(Warning, match="1 segment\\(s\\) whose `target` differs from the gold's by trailing white space"):
        det = read_detector_spans(path, _one_cell())
    assert det.trailing_space_targets == 1


def test_allow_missing_scores_the_covered_cells_and_names_the_rest():
    gold = _tiny_gold()
    part = SpanAnnotations("part", {c: gold.cells[c] for c in list(gold.cells)[:8]}, gold.targets)
    with pytest.raises(ParameterError, match="detector 'part' must cover every segment the gold rated; got 4 missing"):
        evaluate_spans(gold, [part], n_resamples=5, rng=0)
    with pytest.warns(Warning, match="4 gold segment\\(s\\) not covered by every detector left out \\(first: system "
                                     "'B', segment '2'\\); 8 scored."):
        res = evaluate_spans(gold, [part], n_resamples=5, rng=0, allow_missing=True)
    assert res.n_missing == 4 and res.n_cells == 8 and res.f1[0] == 1.0 and "missing:4" in str(res.signature)


@real
def test_cli_exclude_system_suggests_and_signs(cli):
    out = cli("spans", "evaluate", "--gold", WMT23, "--exclude-system", "ONLINE-x", "--n-resamples", "5")
    assert out.returncode == 2 and out.stderr.strip().endswith(
        "`--exclude-system` must name a system of the gold; got 'ONLINE-x' (did you mean 'ONLINE-Y'?).")
    out = cli("spans", "evaluate", "--gold", WMT23, "--exclude-system", "ONLINE-Y", "--n-resamples", "5", "--format",
              "json")
    result = json.loads(out.stdout)
    assert result["n_systems"] == 9 and "exclude_system:ONLINE-Y" in result["signature"]


@real
def test_latex_and_markdown_tables_are_shaped_like_the_terminal_table(cli):
    md = cli("spans", "binary", "--gold", WMT23, "--n-resamples", "20", "--format", "markdown")
    assert md.returncode == 0, md.stderr
    assert md.stdout.splitlines()[0] == "| name | precision | recall | f1 | mcc |"
    assert "| baseline:length | 0." in md.stdout and "\\[" in md.stdout
    tex = cli("spans", "evaluate", "--gold", WMT23, "--n-resamples", "20", "--format", "latex", "--no-ceiling")
    assert "detector & precision & recall & f1 \\\\" in tex.stdout
    csv = cli("spans", "evaluate", "--gold", WMT23, "--n-resamples", "20", "--format", "csv", "--no-ceiling")
    assert csv.stdout.splitlines()[0].startswith("detector,kind,precision,precision_low")  # CSV keeps every field


def test_zero_based_segment_ids_are_pointed_at(tmp_path):
    gold = _tiny_gold()  # segments "0".."5"; a detector numbering them 1..6
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"system": s, "segment": str(int(g) + 1), "spans": []}) + "\n"
                            for s, g in gold.cells))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        shifted = {(s, str(int(g) + 1)): t for (s, g), t in gold.targets.items()}
        det = read_detector_spans(path, {**gold.targets, **shifted})
    with pytest.raises(ParameterError, match="detector 'd' must use the gold's segment ids; got ids that match the "
                                             "gold's only when shifted by -1 \\(0-based ids against 1-based "
                                             "ones\\?\\)"):
        evaluate_spans(gold, [det], n_resamples=5, rng=0)


def test_every_long_spans_command_takes_progress():
    from metaeval.cli.spans_command import spans

    for name in ("evaluate", "compare", "agreement", "binary"):
        command = spans.commands[name]
        flags = {flag for param in command.params for flag in (*param.opts, *param.secondary_opts)}
        assert {"--progress", "--no-progress"} <= flags, name


def test_the_cli_takes_the_spans_defaults_from_defaults_py():
    from metaeval import defaults
    from metaeval.cli.spans_command import SPAN_OPTIONS

    assert SPAN_OPTIONS["matching"]["default"] == defaults.SPAN_MATCHING == "optimal"
    assert SPAN_OPTIONS["macro"]["default"] == defaults.SPAN_MACRO == "mean-f1"
    assert SPAN_OPTIONS["errors"]["default"] == defaults.SPAN_ERRORS == "reference"
    assert SPAN_OPTIONS["critical"]["default"] == defaults.SPAN_CRITICAL == "major"
    assert SPAN_OPTIONS["n_folds"]["default"] == defaults.SPAN_N_FOLDS


@real
def test_html_and_output_are_one_set_and_never_one_path(cli, tmp_path):
    same = tmp_path / "same.out"
    out = cli("spans", "evaluate", "--gold", WMT23, "--n-resamples", "5", "--no-ceiling", "--html", same, "--output",
              same)
    assert out.returncode == 2 and not same.exists()
    assert out.stderr.strip().endswith("one of the two outputs would be lost: give each output its own path")
    out = cli("spans", "evaluate", "--gold", WMT23, "--n-resamples", "5", "--no-ceiling", "--html",
              tmp_path / "p.html", "--output", tmp_path / "t.json", "--format", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "t.json").read_text())["analysis"] == "spans"
    assert "No other file is written beside this page." in (tmp_path / "p.html").read_text()


# -- several language pairs ------------------------------------------------------------------------------
def test_by_pair_results_equal_each_pair_alone_and_the_pool_counts_every_cell(tmp_path):
    from metaeval.spans import evaluate_spans_by_pair, pool_golds

    a, b = _tiny_gold(), _tiny_gold()
    b = SpanAnnotations("gold", {c: [Span(2, 6, "minor")] for c in b.cells}, b.targets)
    pooled = pool_golds({"en-de": a, "zh-en": b})
    assert len(pooled.cells) == 24 and ("en-de/A", "en-de/0") in pooled.cells
    lines = [json.dumps({"lp": lp, "system": s, "segment": g, "spans": [{"start": 0, "end": 3}]})
             for lp, gold in (("en-de", a), ("zh-en", b)) for s, g in gold.cells]
    (tmp_path / "d.jsonl").write_text("\n".join(lines) + "\n")
    det = read_detector_spans(tmp_path / "d.jsonl", pooled.targets)
    res = evaluate_spans_by_pair({"en-de": a, "zh-en": b}, [det], n_resamples=20, rng=3)
    alone = evaluate_spans(a, [SpanAnnotations("d", {c: [Span(0, 3)] for c in a.cells}, a.targets)], n_resamples=20,
                           rng=3)
    assert res.per_pair["en-de"].f1[0] == alone.f1[0] == pytest.approx(2 / 3)
    np.testing.assert_array_equal(res.per_pair["en-de"].f1_ci, alone.f1_ci)
    assert res.per_pair["zh-en"].f1[0] == pytest.approx(2 * (1 / 3) * (1 / 4) / (1 / 3 + 1 / 4))
    assert res.pooled.n_cells == 24 and "pairs:en-de,zh-en" in str(res.signature)
    assert {r["lp"] for r in res.to_frame().to_dict("records")} == {"en-de", "zh-en", "pooled"}


@real
def test_cli_several_golds_need_language_pairs(cli):
    out = cli("spans", "evaluate", "--gold", WMT23, "--gold", WMT23, "--n-resamples", "5")
    assert out.returncode == 2 and out.stderr.strip().endswith(
        f"`--gold` must name its language pair as LP=PATH when several are given; got '{WMT23}'.")
    out = cli("spans", "evaluate", "--gold", f"a={WMT23}", "--gold", f"b={WMT23}", "--n-resamples", "5",
              "--no-ceiling", "--format", "json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert set(result["per_pair"]) == {"a", "b"}
    assert result["pooled"]["n_cells"] == 2 * result["per_pair"]["a"]["n_cells"]


@real
def test_omissions_make_a_segment_erroneous_for_the_no_span_rule():
    """zh-en: 35 segments whose only marked errors are omissions (in the source) counted as error-free when the
    source spans were left out; with them (the default) they are not."""
    from metaeval import read_mqm_ratings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = read_mqm_ratings(DATA / "sxs_mqm_generalMT2023_zhen.3ratings.tsv.gz")
    with_source = evaluate_binary(r.scores, "mqm", gold=gold_from_ratings(r), gold_rule="no-span", n_resamples=5,
                                  rng=0)
    without = evaluate_binary(r.scores, "mqm", gold=gold_from_ratings(r, source_spans=False), gold_rule="no-span",
                              n_resamples=5, rng=0)
    assert (without.n_positive, with_source.n_positive) == (327, 292)


@real
def test_agreement_takes_exclude_system(ratings):
    from metaeval.spans import span_agreement

    full = span_agreement(ratings, n_resamples=5, rng=0, pairwise=False)
    less = span_agreement(ratings, n_resamples=5, rng=0, pairwise=False, exclude_systems=["ONLINE-Y"])
    assert sum(r["n_cells"] for r in less.rows) < sum(r["n_cells"] for r in full.rows)
    assert "exclude_system:ONLINE-Y" in str(less.signature)
    with pytest.raises(ParameterError, match="`exclude_systems` must name systems of the ratings; got 'ONLINE-x' "
                                             "\\(did you mean 'ONLINE-Y'\\?\\)."):
        span_agreement(ratings, n_resamples=5, exclude_systems=["ONLINE-x"])


def test_the_offset_convention_is_in_the_signature(tmp_path):
    gold = _tiny_gold()
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"system": s, "segment": g, "spans": [{"start": 0, "end": 2}]}) + "\n"
                            for s, g in gold.cells))
    plain = read_detector_spans(path, gold.targets)
    inclusive = read_detector_spans(path, gold.targets, end="inclusive", name="inc")
    assert "offsets:char-exclusive" in str(evaluate_spans(gold, [plain], n_resamples=5, rng=0).signature)
    both = evaluate_spans(gold, [plain, inclusive], n_resamples=5, rng=0)
    assert "offsets:char-exclusive,char-inclusive" in str(both.signature)
    assert both.f1[0] != both.f1[1]


@real
def test_compare_prints_the_labelled_pvalue_table(cli, tmp_path, ratings):
    gold = gold_from_ratings(ratings)
    write_detector_spans(SpanAnnotations("x", gold.cells, gold.targets, sources=gold.sources), tmp_path / "a.jsonl")
    out = cli("spans", "compare", "--gold", WMT23, "--detector", tmp_path / "a.jsonl", "--n-resamples", "50",
              "--no-ceiling")
    assert out.returncode == 0, out.stderr
    assert "Paired permutation tests of equal F1 (two-sided; pairs with a baseline a" in out.stdout
    assert "┃ first " in out.stdout and "F1 difference" in out.stdout


def test_a_misspelt_detector_system_gets_a_suggestion(tmp_path):
    gold = _tiny_gold()
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"system": "b" if s == "B" else s, "segment": g, "spans": []}) + "\n"
                            for s, g in gold.cells))
    targets = {**gold.targets, **{("b", g): t for (s, g), t in gold.targets.items() if s == "B"}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        det = read_detector_spans(path, targets)
        with pytest.raises(ParameterError, match="got 6 missing \\(first: system 'B', segment '0'\\); system 'b' is "
                                                 "not in the gold \\(did you mean 'B'\\?\\)."):
            evaluate_spans(gold, [det], n_resamples=5, rng=0)
