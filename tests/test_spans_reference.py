"""metaeval's span measures against the reference implementation's own code (sted19/span-mt-metaeval).

The constants below were made by running the reference OUTSIDE the project (commit afdfb6b, "Polish code"):
``tests/data/span-mt-metaeval/oracle.py`` reads the WMT23 three-rater MQM ratings with its own TSV parser,
passes every error (target and source side) through the reference's ``standardize_human_error`` (minor /
major / critical kept, critical as major, errors of MQM score 0 left out), and scores rater A's errors as the
"automatic" evaluation against rater B's with the reference's ``compute_tp_fp_fn_with_error_matching``
(optimal matching, ``--use-greedy-matching``, and ``severity_penalty=1`` for severity matching), aggregated by
its ``MicroMetrics`` / ``MacroMetrics`` (``use_average_f_score`` True and False):

    cd /tmp && git clone https://github.com/sted19/span-mt-metaeval ref && cd ref
    PYTHONPATH=src python /path/to/tests/data/span-mt-metaeval/oracle.py \\
        ../shared/data/wmt/mqm_ratings/sxs_mqm_generalMT2023_zhen.3ratings.tsv.gz > zhen.json

The reference's "Partial Overlap" is metaeval's ``overlap``, its "Character Proportion" metaeval's
``partial``. On every one of the 72 ordered rater pairs of both language pairs and the 27 settings below,
metaeval equals the reference to 4.5e-16 (checked when these constants were made); the test pins two pairs
where optimal and greedy matching differ.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "wmt" / "mqm_ratings"

REFERENCE = {
    ("ende", "rater10>rater3"): {
        "cells": 190,
        "greedy/overlap/macro-f1-of-means": (0.7334586466165413, 0.23600777745962706, 0.35710766406679756),
        "greedy/overlap/macro-mean-f1": (0.7334586466165413, 0.23600777745962706, 0.27406081740756655),
        "greedy/overlap/micro": (0.5892351274787535, 0.1826163301141352, 0.2788203753351206),
        "greedy/partial/macro-f1-of-means": (0.6710027987623277, 0.22072719691125833, 0.33218253868098496),
        "greedy/partial/macro-mean-f1": (0.6710027987623277, 0.22072719691125833, 0.24194416973907062),
        "greedy/partial/micro": (0.5063891902333946, 0.16816396195318573, 0.2524824389119717),
        "optimal-match/overlap/macro-f1-of-means": (0.6634711779448622, 0.20642148440971161, 0.3148772517375592),
        "optimal-match/overlap/macro-mean-f1": (0.6634711779448622, 0.20642148440971161, 0.23438188093296444),
        "optimal-match/overlap/micro": (0.45892351274787535, 0.14223002633889376, 0.2171581769436997),
        "optimal-match/partial/macro-f1-of-means": (0.6219366955340845, 0.19416245227337117, 0.2959364785225466),
        "optimal-match/partial/macro-mean-f1": (0.6219366955340845, 0.19416245227337117, 0.20868582864746504),
        "optimal-match/partial/micro": (0.4099939866543251, 0.13174316967586291, 0.1994100154243909),
        "optimal/exact/macro-f1-of-means": (0.5736507936507937, 0.1616926267791918, 0.25227696638701747),
        "optimal/exact/macro-mean-f1": (0.5736507936507937, 0.1616926267791918, 0.17783719559880548),
        "optimal/exact/micro": (0.36827195467422097, 0.1141352063213345, 0.17426273458445038),
        "optimal/overlap/macro-f1-of-means": (0.737142857142857, 0.239117825306517, 0.36110026780551624),
        "optimal/overlap/macro-mean-f1": (0.737142857142857, 0.239117825306517, 0.27735029109177706),
        "optimal/overlap/micro": (0.5949008498583569, 0.18437225636523266, 0.28150134048257375),
        "optimal/partial/macro-f1-of-means": (0.6711493189088478, 0.22138509164810047, 0.33294504216028803),
        "optimal/partial/macro-mean-f1": (0.6711493189088478, 0.22138509164810047, 0.2424212446673666),
        "optimal/partial/micro": (0.506111092504872, 0.16866879075037622, 0.2530162741258176),
    },
    ("zhen", "rater1>rater2"): {
        "cells": 1000,
        "greedy/overlap/macro-f1-of-means": (0.540069506224769, 0.6074917388167382, 0.5718000060319487),
        "greedy/overlap/macro-mean-f1": (0.540069506224769, 0.6074917388167382, 0.42167851402285766),
        "greedy/overlap/micro": (0.3327272727272727, 0.4053156146179402, 0.36545182226660006),
        "greedy/partial/macro-f1-of-means": (0.501696081226716, 0.5498310559048726, 0.5246618491210698),
        "greedy/partial/macro-mean-f1": (0.501696081226716, 0.5498310559048726, 0.3625760791868938),
        "greedy/partial/micro": (0.28224016946871316, 0.31998255944063436, 0.29992867246015836),
        "optimal-match/overlap/macro-f1-of-means": (0.5027395547435018, 0.5643174963924961, 0.5317517494838664),
        "optimal-match/overlap/macro-mean-f1": (0.5027395547435018, 0.5643174963924961, 0.3848471682388501),
        "optimal-match/overlap/micro": (0.2872727272727273, 0.34994462901439644, 0.31552670993509735),
        "optimal-match/partial/macro-f1-of-means": (0.47226870132783805, 0.5111823129864881, 0.49095563191666824),
        "optimal-match/partial/macro-mean-f1": (0.47226870132783805, 0.5111823129864881, 0.335492127067448),
        "optimal-match/partial/micro": (0.2493521166002545, 0.27086071287112184, 0.2596617700755274),
        "optimal/exact/macro-f1-of-means": (0.41302835497835483, 0.46226349206349165, 0.43626118611477427),
        "optimal/exact/macro-mean-f1": (0.41302835497835483, 0.46226349206349165, 0.29815047336800937),
        "optimal/exact/micro": (0.15545454545454546, 0.1893687707641196, 0.17074388417373942),
        "optimal/overlap/macro-f1-of-means": (0.5410139506692134, 0.6084084054834051, 0.5727353975830078),
        "optimal/overlap/macro-mean-f1": (0.5410139506692134, 0.6084084054834051, 0.4225975616419053),
        "optimal/overlap/micro": (0.3340909090909091, 0.4069767441860465, 0.3669495756365452),
        "optimal/partial/macro-f1-of-means": (0.502119459180048, 0.5500644075080515, 0.524999577652734),
        "optimal/partial/macro-mean-f1": (0.502119459180048, 0.5500644075080515, 0.3629052446526483),
        "optimal/partial/micro": (0.28274049863263684, 0.32051472180432755, 0.30044494997130594),
    },
}
#: Human errors the reference's standardize_human_error leaves out (score 0: Source issue, Creative
#: Reinterpretation), over every rater's errors of the file.
REFERENCE_LEFT_OUT = {"ende": 903, "zhen": 146}

pytestmark = pytest.mark.skipif(not DATA.exists(), reason="shared data not found")


@pytest.fixture(scope="module")
def ratings():
    from metaeval import read_mqm_ratings

    return {lp: read_mqm_ratings(DATA / f"sxs_mqm_generalMT2023_{lp}.3ratings.tsv.gz") for lp in ("ende", "zhen")}


@pytest.mark.parametrize("lp, pair", list(REFERENCE))
def test_measures_equal_the_reference_implementation(ratings, lp, pair):
    from metaeval.spans import evaluate_spans, rater_spans

    r = ratings[lp]
    a, b = pair.split(">")
    both = sorted(set(r.spans[a]) & set(r.spans[b]))
    expected = REFERENCE[(lp, pair)]
    assert len(both) == expected["cells"]
    gold = rater_spans(r, b).restricted(both)       # errors="reference", source spans kept: the defaults
    detector = rater_spans(r, a).restricted(both)
    for key, want in expected.items():
        if key == "cells":
            continue
        tag, measure, avg = key.split("/")
        kwargs = dict(measure=measure, matching="greedy" if tag.startswith("greedy") else "optimal",
                      severity="match" if tag.endswith("-match") else "ignore",
                      averaging="micro" if avg == "micro" else "macro",
                      macro="mean-f1" if avg == "macro-mean-f1" else "f1-of-means")
        result = evaluate_spans(gold, [detector], baselines=False, n_resamples=1, rng=0, **kwargs)
        got = (result.precision[0], result.recall[0], result.f1[0])
        assert got == pytest.approx(want, abs=1e-12), key


def test_defaults_are_the_reference_defaults(ratings):
    """Optimal matching, mean-f1 macro, errors='reference', source spans: the defaults give the reference's
    numbers without any keyword."""
    from metaeval.spans import evaluate_spans, rater_spans

    r = ratings["zhen"]
    both = sorted(set(r.spans["rater1"]) & set(r.spans["rater2"]))
    result = evaluate_spans(rater_spans(r, "rater2").restricted(both), [rater_spans(r, "rater1").restricted(both)],
                            averaging="macro", baselines=False, n_resamples=1, rng=0)
    want = REFERENCE[("zhen", "rater1>rater2")]["optimal/partial/macro-mean-f1"]
    assert (result.precision[0], result.recall[0], result.f1[0]) == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("lp", ["ende", "zhen"])
def test_errors_reference_leaves_out_what_the_reference_leaves_out(ratings, lp):
    from metaeval.spans import gold_from_ratings

    gold = gold_from_ratings(ratings[lp])
    assert gold.left_out == {"MQM weight 0 (source issue, creative reinterpretation)": REFERENCE_LEFT_OUT[lp]}
    assert gold_from_ratings(ratings[lp], errors="all").left_out == {}
    no_source = gold_from_ratings(ratings[lp], errors="all", source_spans=False)
    assert no_source.n_source_spans == 0
    assert no_source.left_out == {"source side (source_spans=False)": ratings[lp].counts["source_spans"]}


def test_omissions_are_scored_on_the_source_side(ratings):
    """zh-en: the reference's gold keeps omissions (marked in the source); a detector without source spans
    misses them, and the result counts and names it."""
    from metaeval.spans import evaluate_spans, gold_from_ratings

    r = ratings["zhen"]
    gold = gold_from_ratings(r)
    assert gold.n_source_spans > 0
    assert all(s.category.lower().find("source issue") < 0 for v in gold.cells.values() for s in v)
    target_only = gold.target_only()
    target_only.name = "target-only"
    result = evaluate_spans(gold, [target_only], baselines=False, n_resamples=1, rng=0)
    assert result.missed_source == {"target-only": gold.n_source_spans}
    assert result.recall[0] == pytest.approx((gold.n_spans - gold.n_source_spans) / gold.n_spans)
    assert result.precision[0] == 1.0


def test_touching_spans_of_the_union_stay_apart():
    from metaeval.spans.model import Span, merge_union

    merged = merge_union([[Span(0, 3, "minor")], [Span(3, 5, "major")], [Span(4, 8, "minor")]])
    assert merged == (Span(0, 3, "minor"), Span(3, 8, "major"))
    # sides never merge
    assert len(merge_union([[Span(0, 3)], [Span(1, 4, side="source")]])) == 2


def test_optimal_and_greedy_differ_on_real_cells(ratings):
    """The two matchings give different numbers on this pair (so the reference test can tell them apart)."""
    want = REFERENCE[("zhen", "rater1>rater2")]
    assert want["optimal/overlap/micro"][2] != pytest.approx(want["greedy/overlap/micro"][2], abs=1e-6)
    assert np.isfinite(want["optimal/partial/micro"]).all()
