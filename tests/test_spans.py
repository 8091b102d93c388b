"""Span measures: hand-computed cases for every matching rule, a plain-Python oracle, invariants, bad input."""
from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest

from metaeval.errors import DataWarning, InputFileError, ParameterError
from metaeval.spans import Span, SpanAnnotations, cell_counts, evaluate_spans, read_detector_spans
from metaeval.spans.measures import MEASURES, check_measure, prf_from_sums
from metaeval.spans.model import align, merge_union


def S(a, b, sev="major"):
    return Span(a, b, sev)


def prf(gold, pred, measure, severity="ignore"):
    c = np.array(cell_counts(gold, pred, measure=measure, severity=severity))
    return tuple(float(x) for x in prf_from_sums(c, 1, "micro"))


# -- hand-computed cases ----------------------------------------------------------------------------
@pytest.mark.parametrize("measure, expected", [
    ("char", (0.5, 0.5, 0.5)),
    ("exact", (0.0, 0.0, 0.0)),
    ("overlap", (1.0, 1.0, 1.0)),
    ("partial", (0.5, 0.5, 0.5)),
    ("wmt25", (0.5, 0.5, 0.5)),
])
def test_shifted_span(measure, expected):
    """gold [0, 10), prediction [5, 15): 5 shared characters."""
    assert prf([S(0, 10)], [S(5, 15)], measure) == pytest.approx(expected)


def test_one_long_prediction_over_two_gold_spans():
    gold, pred = [S(0, 4), S(4, 8)], [S(0, 8)]
    assert prf(gold, pred, "char") == pytest.approx((1, 1, 1))
    assert prf(gold, pred, "overlap") == pytest.approx((1, 0.5, 2 / 3))      # matched once, one to one
    assert prf(gold, pred, "partial") == pytest.approx((0.5, 0.5, 0.5))      # 4/8 of the prediction; 4/4 of 1 of 2
    assert prf(gold, pred, "exact") == pytest.approx((0, 0, 0))
    assert prf([S(0, 8)], [S(0, 8)], "exact") == pytest.approx((1, 1, 1))


def test_greedy_matching_takes_the_best_dice_first():
    # pred [0,6) overlaps gold [0,4) (Dice 8/10) and [4,10) (Dice 4/12): it goes to [0,4); pred [5,10) then to [4,10)
    gold, pred = [S(0, 4), S(4, 10)], [S(0, 6), S(5, 10)]
    p, r, _ = prf(gold, pred, "partial")
    assert p == pytest.approx((4 / 6 + 5 / 5) / 2)
    assert r == pytest.approx((4 / 4 + 5 / 6) / 2)


def test_severity_match_and_wmt25_half_credit():
    gold, pred = [S(0, 10, "major")], [S(0, 10, "minor")]
    assert prf(gold, pred, "partial", "match") == pytest.approx((0, 0, 0))
    assert prf(gold, pred, "char", "match") == pytest.approx((0, 0, 0))
    assert prf(gold, pred, "partial") == pytest.approx((1, 1, 1))
    assert prf(gold, pred, "wmt25") == pytest.approx((0.5, 0.5, 0.5))
    assert prf([S(0, 10, "critical")], [S(0, 10, "major")], "wmt25") == pytest.approx((1, 1, 1))


def test_wmt25_gold_with_both_severities_gives_full_credit():
    # chars 0-1 gold major / pred minor: 0.5 each; chars 2-3 gold major+minor: 1 each; chars 4-5 minor/minor: 1 each
    gold, pred = [S(0, 4, "major"), S(2, 6, "minor")], [S(0, 6, "minor")]
    assert cell_counts(gold, pred, measure="wmt25") == pytest.approx((5, 6, 5, 6))


def test_empty_conventions():
    assert cell_counts([], [], measure="partial") == (0, 0, 0, 0)
    assert prf([S(0, 3)], [], "partial") == (1.0, 0.0, 0.0)   # nothing predicted: P = 1, R = 0
    assert prf([], [S(0, 3)], "char") == (0.0, 1.0, 0.0)


def test_macro_averages_per_segment_precision_and_recall():
    cells = np.array([cell_counts([S(0, 4)], [S(0, 2)], measure="char"), cell_counts([], [], measure="char")])
    from metaeval.spans.measures import macro_channels
    pr = macro_channels(cells)
    assert pr.tolist() == [[1.0, 0.5, 2 * 0.5 / 1.5], [1.0, 1.0, 1.0]]
    # the reference's macro F1 (default): the mean of the per-segment F1; the option: F1 of the macro P and R
    assert prf_from_sums(pr.sum(axis=0), 2, "macro") == pytest.approx([1.0, 0.75, (2 / 3 + 1) / 2])
    assert prf_from_sums(pr.sum(axis=0), 2, "macro", "f1-of-means") == pytest.approx([1.0, 0.75, 2 * 0.75 / 1.75])


# -- an independent plain-Python oracle --------------------------------------------------------------
def oracle(gold, pred, measure, severity):
    """Counts by brute force: characters as Python sets; span matching by repeatedly taking the best pair."""
    if measure in ("char", "wmt25"):
        def chars(spans):
            out = {}
            for s in spans:
                for c in range(s.start, s.end):
                    key = s.severity
                    if measure == "wmt25" and key == "critical":
                        key = "major"
                    out.setdefault(c, set()).add(key)
            return out
        g, p = chars(gold), chars(pred)
        tp = 0.0
        for c in set(g) & set(p):
            if measure == "wmt25":
                tp += 1.0 if len(g[c]) > 1 or g[c] & p[c] else 0.5
            elif severity == "match":
                tp += 1.0 if g[c] & p[c] else 0.0
            else:
                tp += 1.0
        return tp, len(p), tp, len(g)
    pairs = []
    for i, a in enumerate(pred):
        for j, b in enumerate(gold):
            ov = len(set(range(a.start, a.end)) & set(range(b.start, b.end)))
            ok = (a.start, a.end) == (b.start, b.end) if measure == "exact" else ov > 0
            if ok and (severity != "match" or a.severity == b.severity):
                pairs.append((i, j, ov))
    p_num = r_num = 0.0
    while pairs:
        best = max(pairs, key=lambda t: (2 * t[2] / (pred[t[0]].length + gold[t[1]].length), -t[0], -t[1]))
        i, j, ov = best
        p_num += ov / pred[i].length if measure == "partial" else 1
        r_num += ov / gold[j].length if measure == "partial" else 1
        pairs = [t for t in pairs if t[0] != i and t[1] != j]
    return p_num, len(pred), r_num, len(gold)


def random_spans(rng, length, n):
    out = []
    for _ in range(n):
        a = int(rng.integers(0, length - 1))
        b = int(rng.integers(a + 1, min(length, a + 12) + 1))
        out.append(Span(a, b, str(rng.choice(["minor", "major", "critical"]))))
    return out


@pytest.mark.parametrize("measure", MEASURES)
@pytest.mark.parametrize("severity", ["ignore", "match"])
def test_measures_equal_the_oracle(measure, severity):
    if measure == "wmt25" and severity == "match":
        pytest.skip("wmt25 has its own severity rule")
    rng = np.random.default_rng(7)
    for _ in range(300):
        gold = random_spans(rng, 40, int(rng.integers(0, 4)))
        pred = random_spans(rng, 40, int(rng.integers(0, 4)))
        assert cell_counts(gold, pred, measure=measure, severity=severity, matching="greedy",
                           critical="own") == pytest.approx(oracle(gold, pred, measure, severity))


def _objective(p, g, measure):
    ov = len(set(range(p.start, p.end)) & set(range(g.start, g.end)))
    if measure == "exact":
        return float((p.start, p.end) == (g.start, g.end))
    if measure == "overlap":
        return float(ov > 0)
    return 2 * ov / (p.length + g.length)


def best_total(gold, pred, measure, severity):
    """Brute force over every one-to-one matching: the largest summed objective."""
    import itertools

    best = 0.0
    small, large, flip = (pred, gold, False) if len(pred) <= len(gold) else (gold, pred, True)
    for perm in itertools.permutations(range(len(large)), len(small)):
        total = 0.0
        for i, j in enumerate(perm):
            p, g = (small[i], large[j]) if not flip else (large[j], small[i])
            if severity == "match" and p.severity.replace("critical", "major") != g.severity.replace("critical",
                                                                                                     "major"):
                continue
            total += _objective(p, g, measure)
        best = max(best, total)
    return best


@pytest.mark.parametrize("measure", ["exact", "overlap", "partial"])
@pytest.mark.parametrize("severity", ["ignore", "match"])
def test_optimal_matching_reaches_the_brute_force_optimum(measure, severity):
    from metaeval.spans.measures import _matched_pairs

    rng = np.random.default_rng(11)
    beaten = 0
    for _ in range(300):
        gold = random_spans(rng, 30, int(rng.integers(0, 5)))
        pred = random_spans(rng, 30, int(rng.integers(0, 5)))
        pairs = _matched_pairs(gold, pred, measure, severity, "optimal", "major")
        total = sum(_objective(pred[i], gold[j], measure) for i, j, _ in pairs)
        assert total == pytest.approx(best_total(gold, pred, measure, severity))
        greedy = _matched_pairs(gold, pred, measure, severity, "greedy", "major")
        beaten += sum(_objective(pred[i], gold[j], measure) for i, j, _ in greedy) < total - 1e-12
        if measure != "partial":  # the credit is the count of matched pairs: any optimum gives the same counts
            counts = cell_counts(gold, pred, measure=measure, severity=severity)
            assert counts[0] == counts[2] == pytest.approx(best_total(gold, pred, measure, severity))
    if measure != "exact":
        assert beaten > 0  # greedy is not optimal on these random cells: the test can tell them apart


def test_critical_compares_as_major_by_default():
    gold, pred = [Span(0, 4, "major")], [Span(0, 4, "critical")]
    assert cell_counts(gold, pred, measure="exact", severity="match") == (1.0, 1.0, 1.0, 1.0)
    assert cell_counts(gold, pred, measure="exact", severity="match", critical="own") == (0.0, 1.0, 0.0, 1.0)
    assert cell_counts(gold, pred, measure="char", severity="match", critical="own") == (0.0, 4.0, 0.0, 4.0)


def test_a_span_matches_only_a_span_of_its_own_side():
    gold = [Span(0, 4, "major", side="source")]
    assert cell_counts(gold, [Span(0, 4, "major")], measure="exact") == (0.0, 1.0, 0.0, 1.0)
    assert cell_counts(gold, [Span(0, 4, "major", side="source")], measure="exact") == (1.0, 1.0, 1.0, 1.0)
    # characters of the two texts are counted apart
    assert cell_counts(gold, [Span(0, 4, "major")], measure="char") == (0.0, 4.0, 0.0, 4.0)


# -- invariants ------------------------------------------------------------------------------------
def _annotations(rng, name, n_systems=4, n_segments=12):
    targets = {(f"s{a}", str(b)): "x" * 40 for a in range(n_systems) for b in range(n_segments)}
    spans = {c: random_spans(rng, 40, int(rng.integers(0, 4))) for c in targets}
    return SpanAnnotations(name, spans, targets)


@pytest.mark.parametrize("measure", MEASURES)
@pytest.mark.parametrize("averaging", ["micro", "macro"])
def test_detector_equal_to_gold_scores_one_and_swapping_swaps_p_and_r(measure, averaging):
    rng = np.random.default_rng(3)
    gold, det = _annotations(rng, "gold"), _annotations(rng, "det")
    same = SpanAnnotations("same", gold.cells, gold.targets)
    res = evaluate_spans(gold, [same, det], measure=measure, averaging=averaging, n_resamples=20, rng=0,
                         baselines=False)
    assert res.precision[0] == res.recall[0] == res.f1[0] == 1.0
    swapped = evaluate_spans(SpanAnnotations("gold", det.cells, det.targets),
                             [SpanAnnotations("det", gold.cells, gold.targets)], measure=measure,
                             averaging=averaging, n_resamples=20, rng=0, baselines=False)
    assert swapped.precision[0] == pytest.approx(res.recall[1])
    assert swapped.recall[0] == pytest.approx(res.precision[1])


def test_merge_union_keeps_the_most_severe():
    assert merge_union([[S(0, 4, "minor")], [S(3, 6, "major"), S(8, 9, "minor")]]) == (S(0, 6, "major"),
                                                                                      S(8, 9, "minor"))


# -- bad input -------------------------------------------------------------------------------------
TARGETS = {("A", "1"): "abcdef", ("A", "2"): "xyz"}


def _jsonl(tmp_path, lines, name="det.jsonl"):
    path = tmp_path / name
    path.write_text("".join((l if isinstance(l, str) else json.dumps(l)) + "\n" for l in lines))
    return path


@pytest.mark.parametrize("span, message", [
    ({"start": 2, "end": 9}, "row 1: spans[0]: `end` must be at most the target's length 6; got 9."),
    ({"start": -1, "end": 2}, "row 1: spans[0]: `start` must be >= 0; got -1."),
    ({"start": 4, "end": 2}, "row 1: spans[0]: `end` must be greater than `start` (a span covers at least one "
                             "character); got start 4, end 2."),
    ({"start": 0, "end": 2, "severity": "huge"}, "row 1: spans[0]: `severity` must be one of neutral, minor, major, "
                                                 "critical; got 'huge'."),
    ({"start": "0", "end": 2}, "row 1: spans[0]: `start` must be an integer character offset; got '0'."),
])
def test_bad_spans(tmp_path, span, message):
    path = _jsonl(tmp_path, [{"system": "A", "segment": "1", "spans": [span]}])
    with pytest.raises(InputFileError, match=re.escape(f"{path}, {message}")):
        read_detector_spans(path, TARGETS)


def test_bad_files(tmp_path):
    with pytest.raises(InputFileError, match="the file must hold at least one JSON line; got an empty file."):
        read_detector_spans(_jsonl(tmp_path, []), TARGETS)
    with pytest.raises(InputFileError, match=r"row 1: every line must be a JSON object; got invalid JSON"):
        read_detector_spans(_jsonl(tmp_path, ["{oops"]), TARGETS)
    with pytest.raises(InputFileError, match="row 1: every line must have the field 'spans'; got fields 'system', "
                                             "'segment'."):
        read_detector_spans(_jsonl(tmp_path, [{"system": "A", "segment": "1"}]), TARGETS)
    with pytest.raises(InputFileError, match="row 2: every \\(system, segment\\) must appear once"):
        read_detector_spans(_jsonl(tmp_path, [{"system": "A", "segment": "1", "spans": []}] * 2), TARGETS)


def test_detector_coverage(tmp_path):
    gold = SpanAnnotations("gold", {c: [] for c in TARGETS}, TARGETS)
    short = read_detector_spans(_jsonl(tmp_path, [{"system": "A", "segment": "1", "spans": []}]), TARGETS)
    with pytest.raises(ParameterError, match=r"detector 'det' must cover every segment the gold rated; got 1 missing "
                                             r"\(first: system 'A', segment '2'\)."):
        align(gold, short)
    lines = [{"system": "A", "seg_id": s, "spans": []} for s in ("1", "2", "3", "4")]
    wide = read_detector_spans(_jsonl(tmp_path, lines), TARGETS)
    with pytest.warns(DataWarning, match=r"detector 'det': 2 segment\(s\) the gold did not rate left out "
                                         r"\(first: system 'A', segment '3'\)."):
        aligned = align(gold, wide)
    assert aligned.n_left_out == 2 and len(aligned.cells) == 2


def test_measure_choices_are_checked():
    with pytest.raises(ParameterError, match="`severity` must be 'ignore' with measure 'wmt25'"):
        check_measure("wmt25", "micro", "match")
    with pytest.raises(ParameterError, match="`measure` must be one of"):
        check_measure("fuzzy", "micro", "ignore")


def test_unknown_severity_in_annotations():
    with pytest.raises(ParameterError, match="`severity` must be one of neutral, minor, major, critical; got 'big'"):
        SpanAnnotations("x", {("A", "1"): [(0, 2, "big")]}, TARGETS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert SpanAnnotations("x", {("A", "1"): [(0, 2), (1, 3)]}, TARGETS).n_overlapping() == 1


def test_draws_are_shared_across_detectors():
    rng = np.random.default_rng(5)
    gold, a, b = (_annotations(rng, n) for n in ("gold", "a", "b"))
    twin = SpanAnnotations("twin", a.cells, a.targets)
    both = evaluate_spans(gold, [a, b, twin], n_resamples=50, rng=3, baselines=False)
    alone = evaluate_spans(gold, [a], n_resamples=50, rng=3, baselines=False)
    assert np.array_equal(both.f1_ci[0], both.f1_ci[2]) and np.array_equal(both.f1_ci[0], alone.f1_ci[0])
    cmp = evaluate_spans(gold, [a, twin, b], n_resamples=50, rng=3, baselines=False, compare=True, correction="none")
    assert cmp.pvalues[0, 1] == 1.0 and cmp.ranks[0] == cmp.ranks[1]
    assert "seed:3" in str(cmp.signature) and "test:perm-both" in str(cmp.signature)


def test_pairs_are_corrected_as_one_family_of_unordered_pairs():
    from metaeval.spans.evaluate import corrected_pairs

    delta = np.array([[0, 0.5, 0.2], [-0.5, 0, -0.3], [-0.2, 0.3, 0]])
    two = np.array([[np.nan, 0.01, 0.04], [0.01, np.nan, 0.02], [0.04, 0.02, np.nan]])
    greater = np.array([[np.nan, 0.005, 0.02], [0.99, np.nan, 0.99], [0.99, 0.01, np.nan]])
    p2, beats = corrected_pairs(delta, two, greater, "bonferroni")
    assert p2[0, 1] == p2[1, 0] == pytest.approx(0.03) and p2[0, 2] == pytest.approx(0.12)
    assert beats[0, 1] == pytest.approx(0.015) and beats[2, 1] == pytest.approx(0.03) and beats[1, 0] == 1.0
