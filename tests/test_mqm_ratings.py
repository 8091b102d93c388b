"""MQM ratings: scores equal the release's averaged TED scores; spans, attention checks and bad input."""
from __future__ import annotations

import gzip
import re
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

import metaeval
from metaeval.data.mqm_ratings import MQMWeights, is_mqm_ratings_file, read_mqm_ratings, unmark
from metaeval.data.readers import read_scores
from metaeval.errors import DataWarning, InputFileError, ParameterError

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data" / "wmt" / "mqm_ratings"
TED = {lp: DATA / f"mqm_ted_{lp}.tsv.gz" for lp in ("ende", "zhen")}
WMT23 = DATA / "sxs_mqm_generalMT2023_ende.3ratings.tsv.gz"
RELEASE = HERE / "data" / "wmt_mqm_ted"
RELEASE_NAMES = {"ref": "ref-A", "refB": "ref-B"}  # the release's names of the references

needs_data = pytest.mark.skipif(not DATA.exists(), reason="shared data not found")


def _read(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        return read_mqm_ratings(path, **kw)


@needs_data
@pytest.mark.parametrize("lp", ["ende", "zhen"])
def test_ted_scores_equal_the_release(lp):
    ratings = _read(TED[lp])
    m = ratings.scores.matrix("mqm")
    si = {RELEASE_NAMES.get(s, s): i for i, s in enumerate(ratings.scores.systems)}
    gi = {g: j for j, g in enumerate(ratings.scores.inputs)}
    compared = 0
    with gzip.open(RELEASE / f"mqm_ted_{lp}.avg_seg_scores.tsv.gz", "rt") as handle:
        next(handle)
        for line in handle:
            system, value, seg = line.split()
            if value == "None":
                continue
            assert m[si[system], gi[seg]] == pytest.approx(float(value), abs=1e-6), (system, seg)
            compared += 1
    assert compared == int(np.isfinite(m).sum()) == {"ende": 7406, "zhen": 7935}[lp]


def _plain_scores(path, zero=("Source issue", "Accuracy/Creative Reinterpretation")):
    """Independent plain-Python MQM scores: Freitag weights (``zero`` categories 0), mean over each cell's
    raters."""
    per = defaultdict(dict)
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        next(handle)
        for line in handle:
            f = line.rstrip("\n").split("\t")
            system, seg, rater, cat, sev = f[0], f[3], f[4], f[7], f[8]
            if sev == "HOTW-test":
                continue
            w = 0.0
            if sev != "No-error":
                w = 25 if cat.startswith("Non-translation") else 0 if cat in zero else 5 if sev == "Major" else (
                    0.1 if cat == "Fluency/Punctuation" else 1) if sev == "Minor" else 0
            per[(system, seg)][rater] = per[(system, seg)].get(rater, 0.0) - w
    return {cell: sum(v.values()) / len(v) for cell, v in per.items()}, per


@needs_data
@pytest.mark.parametrize("weights", ["google", "severity"])
def test_wmt23_scores_equal_a_plain_python_computation(weights):
    ratings = _read(WMT23, weights=weights)
    plain, per = _plain_scores(WMT23, zero=() if weights == "severity" else
                               ("Source issue", "Accuracy/Creative Reinterpretation"))
    ds = ratings.scores
    m = ds.matrix("mqm")
    for (system, seg), value in plain.items():
        assert m[ds.systems.index(system), ds.inputs.index(seg)] == pytest.approx(value)
    assert int(np.isfinite(m).sum()) == len(plain) == 1040
    (system, seg), raters = next(iter(per.items()))
    for rater, value in raters.items():
        assert ds.matrix(f"mqm.{rater}")[ds.systems.index(system), ds.inputs.index(seg)] == pytest.approx(value)


WMT23_RELEASE = HERE / "data" / "wmt23_mqm_release"


def _release_scores(lp):
    with gzip.open(WMT23_RELEASE / f"sxs_mqm_generalMT2023_{lp}.segment_mqm.tsv.gz", "rt") as handle:
        next(handle)
        return {(s, g): float(v) for s, g, v in (line.split("\t") for line in handle)}


@needs_data
@pytest.mark.parametrize("lp, moved, largest", [("ende", 317, 35 / 3), ("zhen", 104, 20 / 3)])
def test_wmt23_scores_equal_the_release_with_googles_weights(lp, moved, largest):
    """The WMT23 side-by-side release (google/wmt-mqm-human-evaluation 7fadea2) stores each segment's MQM
    score in its rows' metadata (``segment.metrics.MQM``, a penalty; tests/data/wmt23_mqm_release/README.md).
    Google's weights (the default) give every one of them; the severity weights (mt-metrics-eval's
    ``score_mqm.py`` default) miss 325 (en-de) / 104 (zh-en) of them and move ``moved`` cells of ours, by up to
    ``largest`` points. In en-de the release scores GPT4-5shot's two side-by-side
    pairings together: its value is the sum of both pairings' three-rater means."""
    release = _release_scores(lp)
    read = {w: _read(DATA / f"sxs_mqm_generalMT2023_{lp}.3ratings.tsv.gz", weights=w).scores
            for w in ("google", "severity")}
    assert read["google"].description.endswith("zero=source issue+accuracy/creative reinterpretation")
    assert read["severity"].description.endswith("zero=none")
    gpt4 = ("GPT4-5shot_with_refA", "GPT4-5shot_with_ONLINE-W")
    equal = {}
    for weights, ds in read.items():
        m = ds.matrix("mqm")
        si, gi = {s: i for i, s in enumerate(ds.systems)}, {g: j for j, g in enumerate(ds.inputs)}

        def ours(system, seg):
            if lp == "ende" and system in gpt4:
                return -sum(m[si[s], gi[seg]] for s in gpt4)
            return -m[si[system], gi[seg]]
        equal[weights] = sum(abs(ours(s, g) - v) < 1e-9 for (s, g), v in release.items())
        assert len(release) == int(np.isfinite(m).sum())
    assert equal["google"] == len(release) == {"ende": 1040, "zhen": 3770}[lp]
    assert len(release) - equal["severity"] == {"ende": 325, "zhen": 104}[lp]
    g, s = (read[w].matrix("mqm") for w in ("google", "severity"))
    assert int((g != s).sum()) == moved and float(np.nanmax(g - s)) == pytest.approx(largest)


def test_weights_presets_and_bad_names():
    assert MQMWeights.preset("google") == MQMWeights()
    assert MQMWeights.preset("severity").weight("major", "Source issue") == 5.0
    assert MQMWeights().weight("major", "Source issue") == 0.0
    assert MQMWeights().weight("minor", "Source error") == 1.0  # WMT21 TED's category: its release weighs it
    with pytest.raises(ParameterError, match=r"^`weights` must be one of .*google.*severity.*; got 'marot'"):
        read_mqm_ratings(WMT23, weights="marot")
    with pytest.raises(ParameterError, match=r"^`zero_categories` must be a tuple of non-empty category names "
                                             r"without '\|', ';' or '\+'; got 'source issue'\.$"):
        MQMWeights(zero_categories="source issue")


@needs_data
def test_attention_checks_are_counted_never_scored():
    ratings = _read(WMT23)
    assert sum(f + m for f, m in ratings.attention.values()) == ratings.counts["attention_rows"] == 245
    assert sum(f for f, _ in ratings.attention.values()) == 220
    rates = ratings.attention_rates()
    assert rates["rater6"] == 1.0 and 0 < rates["rater4"] < 1


@needs_data
def test_spans_are_offsets_into_the_unmarked_target():
    ratings = _read(WMT23)
    n_marked = 0
    with gzip.open(WMT23, "rt", encoding="utf-8") as handle:
        next(handle)
        for line in handle:
            f = line.rstrip("\n").split("\t")
            if f[8] not in ("HOTW-test", "No-error") and "<v>" in f[6]:
                n_marked += 1
                marked = re.search("<v>(.*?)</v>", f[6]).group(1)
                start = f[6].index("<v>")
                assert (start, start + len(marked), f[8].lower(), f[7]) in ratings.spans[f[4]][(f[0], f[3])]
                assert ratings.targets[(f[0], f[3])][start:start + len(marked)] == marked
    assert sum(len(v) for cells in ratings.spans.values() for v in cells.values()) == n_marked
    assert ratings.counts["trailing_space_cells"] == 2


@needs_data
def test_open_marker_is_closed_at_the_end_with_a_named_warning():
    with pytest.warns(DataWarning, match=r"1 span marker\(s\) '<v>' left open \(first at row 6444\)"):
        ratings = read_mqm_ratings(TED["ende"])
    assert ratings.counts["open_spans_closed_at_end"] == 1
    with pytest.raises(InputFileError, match=r"row 6444, column 'target': every '<v>' must be closed by '</v>'"):
        read_mqm_ratings(TED["ende"], open_spans="error")


@needs_data
def test_read_scores_detects_ratings_by_header_and_public_name():
    assert is_mqm_ratings_file(WMT23) and not is_mqm_ratings_file(RELEASE / "mqm_ted_ende.avg_seg_scores.tsv.gz")
    ds = read_scores(WMT23)
    assert ds.humans[0] == "mqm" and "mqm.rater3" in ds.humans and set(ds.humans) == set(ds.scorers)
    assert ds.default_human == "mqm" and ds.metrics == ()  # no rater enters a default list of metrics
    assert metaeval.read_mqm_ratings is read_mqm_ratings


def test_default_human_is_the_one_human_or_the_whole_of_its_parts():
    from metaeval import ScoreSet

    m = np.zeros((2, 2))
    make = lambda humans: ScoreSet.from_matrices({h: m for h in ("a", "a.x", "a.y", "b")}, systems=["s", "t"],  # noqa
                                                 inputs=["i", "j"], humans=humans)
    assert make(["b"]).default_human == "b"
    assert make(["a", "a.x", "a.y"]).default_human == "a"
    assert make(["a", "b"]).default_human is None and make([]).default_human is None
    assert make(["a.x", "a.y"]).default_human is None


@needs_data
def test_cli_correlate_on_ratings_and_a_metric_takes_mqm_as_gold_and_no_rater_as_metric(tmp_path, capsys):
    from metaeval.cli.main import main

    ds = read_scores(WMT23)
    rng = np.random.default_rng(0)
    rows = ["system,input,LEN"] + [f"{s},{i},{rng.random():.6f}" for s in ds.systems for i in ds.inputs]
    (tmp_path / "len.csv").write_text("\n".join(rows) + "\n")
    code = main(["correlate", "--scores", str(WMT23), "--scores", str(tmp_path / "len.csv"), "--level", "system",
                 "--ci", "none", "--format", "csv"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert {tuple(line.split(",")[:2]) for line in out.splitlines()[1:]} == {("LEN", "mqm")}


@needs_data
def test_weights_are_configurable():
    base = _read(WMT23).scores.matrix("mqm")
    heavy = _read(WMT23, weights=MQMWeights(severities={"major": 10, "minor": 1, "neutral": 0})).scores.matrix("mqm")
    assert np.nanmin(heavy) < np.nanmin(base)
    with pytest.raises(ParameterError, match=r"`severities\['major'\]` must be a finite non-negative number; got -1"):
        MQMWeights(severities={"major": -1})


def test_unmark():
    assert unmark("a <v>bc</v> d") == ("a bc d", [(2, 4)], False)
    with pytest.raises(InputFileError, match="every '</v>' must close an open '<v>'; got '</v>' at character 1"):
        unmark("a</v>")
    with pytest.raises(InputFileError, match="the span markup must not nest"):
        unmark("<v>a<v>b</v></v>")
    assert unmark("ab<v>cd", open_spans="close-at-end") == ("abcd", [(2, 4)], True)


HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\n"


def _file(tmp_path, rows, header=HEADER):
    path = tmp_path / "r.tsv"
    path.write_text(header + "".join(rows), encoding="utf-8")
    return path


def test_tiny_file_by_hand(tmp_path):
    rows = ["A\td\t1\t1\tr1\ts\tx <v>yy</v> z\tAccuracy/Mistranslation\tMajor\n",
            "A\td\t1\t1\tr1\ts\tx yy <v>z</v>\tFluency/Punctuation\tMinor\n",
            "A\td\t1\t1\tr2\ts\tx yy z\tNo-error\tNo-error\n",
            "B\td\t1\t1\tr2\ts\t<v>q</v>\tNon-translation!\tMajor\n",
            "B\td\t1\t1\tr1\ts\tq\tX\tHOTW-test\n"]
    r = read_mqm_ratings(_file(tmp_path, rows))
    m = r.scores.matrix("mqm")
    assert m[0, 0] == pytest.approx((-5.1 + 0) / 2) and m[1, 0] == -25
    assert r.spans["r1"][("A", "1")] == ((2, 4, "major", "Accuracy/Mistranslation"), (5, 6, "minor", "Fluency/Punctuation"))
    assert r.attention == {"r1": (0, 1)}


@pytest.mark.parametrize("rows, message", [
    ([], "the file must hold at least one rating; got a header only."),
    (["A\td\t1\t1\tr1\ts\tt\tc\tSevere\n"], "row 2, column 'severity': the severity must be one of hotw-test, major, "
                                             "minor, neutral, no-error"),
    (["A\td\t1\t1\tr1\ts\tt\n"], "row 2: every row must have 9 tab-separated fields like the header; got 7."),
    (["A\td\t1\t1\tr1\ts\tt <v>a</v>\tc\tMinor\n", "A\td\t1\t1\tr2\ts\tother\tNo-error\tNo-error\n"],
     "row 3, column 'target': every row of system 'A', segment '1' must hold the same target"),
    (["A\td\t1\t1\tr1\ts\tt\tNo-error\tNo-error\n", "A\td\t1\t1\tr1\ts\t<v>t</v>\tc\tMinor\n"],
     "row 3: rater 'r1' must rate system 'A', segment '1' either with errors or with one 'No-error' row; got both."),
])
def test_bad_files(tmp_path, rows, message):
    with pytest.raises(InputFileError, match=re.escape(message)):
        read_mqm_ratings(_file(tmp_path, rows))


def test_empty_file_and_missing_column(tmp_path):
    empty = tmp_path / "e.tsv"
    empty.write_text("")
    with pytest.raises(InputFileError, match="the file must hold a header and at least one rating; got an empty file."):
        read_mqm_ratings(empty)
    with pytest.raises(InputFileError, match="row 1: the header must name the column 'rater'"):
        read_mqm_ratings(_file(tmp_path, ["A\t1\n"], header="system\tseg_id\tsource\ttarget\tcategory\tseverity\n"))


@needs_data
def test_per_rater_scorers_only_for_multi_rater_data():
    assert _read(TED["ende"]).scores.scorers == ("mqm",)
    ted = _read(TED["ende"], per_rater=True).scores
    assert len(ted.scorers) == 5 and "mqm.rater1" in ted.scorers
    assert len(_read(WMT23).scores.scorers) == 11


@needs_data
def test_cli_scores_accepts_a_ratings_file(capsys):
    from metaeval.cli.main import main

    code = main(["correlate", "--scores", str(WMT23), "--level", "summary", "--metric", "mqm.rater3",
                 "--n-resamples", "50", "--format", "csv"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.splitlines()[1].startswith("mqm.rater3,mqm,summary,")
    assert _read(WMT23).documents["1"] == "news_aj-english.33941:en-de"


@needs_data
def test_a_ratings_file_refuses_scorer_names_rather_than_ignoring_them(capsys):
    with pytest.raises(ParameterError, match=r"^`rename` must name a scorer of a score table; got it for .*, an MQM"
                                             r" ratings file \(its scorers are mqm and mqm.<rater>\)\.$"):
        read_scores(WMT23, rename={"mqm": "MQM"})
    from metaeval.cli.main import main

    assert main(["correlate", "--scores", f"MQM={WMT23}", "--metric", "mqm.rater3"]) == 2
    assert capsys.readouterr().err.strip() == (f"metaeval: error: `--scores NAME=PATH` must name a scorer of a score"
                                               f" table; got it for {WMT23}, an MQM ratings file (its scorers are mqm"
                                               " and mqm.<rater>).")


def test_detection_never_opens_a_fifo(tmp_path):
    import os

    fifo = tmp_path / "pipe.tsv"
    os.mkfifo(fifo)
    assert not is_mqm_ratings_file(fifo) and not is_mqm_ratings_file(tmp_path / "missing.tsv")


def _as_csv(tsv_path, csv_path):
    """The release's TSV rewritten by the csv module with commas (fields holding commas, quotes or line
    breaks are quoted); returns how many fields needed quotes."""
    import csv

    quoted = 0
    with gzip.open(tsv_path, "rt", encoding="utf-8") as src, open(csv_path, "w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        for line in src:
            fields = line.rstrip("\n").split("\t")
            quoted += sum(any(ch in f for ch in ',"\n\r') for f in fields)
            writer.writerow(fields)
    return quoted


@needs_data
@pytest.mark.parametrize("path", [WMT23, TED["zhen"]], ids=["wmt23-ende", "ted-zhen"])
def test_a_comma_separated_ratings_file_reads_as_its_tsv(path, tmp_path):
    csv_path = tmp_path / "ratings.csv"
    quoted = _as_csv(path, csv_path)
    assert quoted > 100  # commas and quotes inside the texts: the csv quoting is exercised
    assert is_mqm_ratings_file(csv_path) and is_mqm_ratings_file(path)
    a, b = _read(path), _read(csv_path)
    for scorer in a.scores.scorers:
        np.testing.assert_array_equal(a.scores.matrix(scorer), b.scores.matrix(scorer))
    assert (a.scores.systems, a.scores.inputs, a.raters) == (b.scores.systems, b.scores.inputs, b.raters)
    assert a.spans == b.spans and a.source_spans == b.source_spans and a.targets == b.targets
    assert a.sources == b.sources and a.attention == b.attention and a.counts == b.counts
    assert a.documents == b.documents
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        assert read_scores(csv_path).scorers == read_scores(path).scorers


def test_a_quoted_comma_field_with_a_line_break_keeps_its_row_number(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text('system,doc,seg_id,rater,source,target,category,severity\n'
                    'A,d,1,r1,"Hello, world","Hallo, <v>Welt</v>\nzwei",Accuracy/Mistranslation,Major\n'
                    'A,d,2,r1,x,y,No-error,No-error\n'
                    'A,d,3,r1,x,"y",Fluency/Grammar\n', encoding="utf-8")
    with pytest.raises(InputFileError, match=r"r\.csv, row 5: every row must have 8 comma-separated fields like the "
                                             r"header; got 7\."):
        read_mqm_ratings(path)
    path.write_text("\n".join(path.read_text(encoding="utf-8").split("\n")[:4]) + "\n", encoding="utf-8")
    r = read_mqm_ratings(path)
    assert r.targets[("A", "1")] == "Hallo, Welt\nzwei" and r.spans["r1"][("A", "1")][0][:2] == (7, 11)
    assert r.scores.matrix("mqm").tolist() == [[-5.0, 0.0]]


def test_an_unrecognised_delimiter_is_one_line_naming_the_header(tmp_path):
    path = tmp_path / "r.ssv"
    path.write_text("system;doc;seg_id;rater;source;target;category;severity\nA;d;1;r1;x;y;No-error;No-error\n")
    assert not is_mqm_ratings_file(path)
    with pytest.raises(InputFileError, match=r"r\.ssv, row 1: the header must separate its columns by tabs or "
                                             r"commas; got 'system;doc;seg_id;rater;source;target;category;severity'\.$"):
        read_mqm_ratings(path)


def test_a_broken_csv_quote_is_one_line_naming_the_row(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text('system,doc,seg_id,rater,source,target,category,severity\n'
                    'A,d,1,r1,x,y,No-error,No-error\n'
                    'A,d,2,r1,x,"y"z,No-error,No-error\n', encoding="utf-8")
    with pytest.raises(InputFileError, match=r"r\.csv, row 3: every row must be comma-separated with csv quoting; "
                                             r"got ',' expected after '\"'\.$"):
        read_mqm_ratings(path)
