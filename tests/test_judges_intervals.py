"""Honest intervals (issue 39.5) and hostile input (issue 41.5) of `metaeval judge`: what cannot be shown is
said, and impossible requests are refused in one line before any work."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import metaeval as me
from metaeval.cli.main import main
from metaeval.errors import DegenerateDataError, DegenerateWarning, ParameterError
from metaeval.judges import resampling as rs


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _file(tmp_path, text, name="c.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


ALL_TIES = "input,first,second,verdict\n" + "".join(f"q{k},{a},{b},tie\n" for k in range(6)
                                                      for a, b in (("A", "B"), ("B", "C"), ("A", "C")))
GOOD = ("input,first,second,judge,verdict\nq1,A,B,j,first\nq1,B,C,j,second\nq2,A,C,j,tie\nq2,C,A,j,first\n"
        "q3,B,A,j,first\nq3,C,B,j,second\nq4,A,B,j,second\nq4,C,A,j,tie\n")


def test_all_ties_print_no_certain_interval_and_every_rank(tmp_path, capsys):
    """41.5: all-tie data printed 0.000 [0.00, 0.00] and ranks 1-1."""
    code, out, err = run(["judge", "rank", "--comparisons", str(_file(tmp_path, ALL_TIES)), "--n-resamples", "50",
                          "--seed", "1", "--format", "json"], capsys)
    assert code == 0, err
    payload = json.loads(out)
    for row in payload["systems"]:
        assert row["score"] == 0 and row["score_low"] is None and row["score_high"] is None
        assert (row["rank_low"], row["rank_high"]) == (1, 3)
    assert any("every comparison is a tie" in note for note in payload["notes"])


def test_ties_drop_on_all_ties_is_refused(tmp_path, capsys):
    path = _file(tmp_path, ALL_TIES)
    code, out, err = run(["judge", "rank", "--comparisons", str(path), "--ties", "drop"], capsys)
    assert code == 2 and out == ""
    assert err.strip() == (f"metaeval: error: {path}: `ties` 'drop' leaves no comparison: all 18 comparisons are ties (rank them"
                           " with ties='half', where every system scores 0).")


def test_davidson_on_all_ties_is_refused(tmp_path):
    c = me.read_comparisons(_file(tmp_path, ALL_TIES))
    with pytest.raises(DegenerateDataError) as e:
        me.rank_systems(c, ties="davidson", n_resamples=0)
    assert str(e.value) == ("Davidson's tie parameter nu diverges when every comparison is a tie; the 18 comparisons"
                            " hold no win (use ties='half').")


@pytest.mark.parametrize("k", [0, 1])
def test_no_or_one_resample_gives_no_interval(tmp_path, capsys, k):
    code, out, err = run(["judge", "rank", "--comparisons", str(_file(tmp_path, GOOD)), "--n-resamples", str(k),
                          "--resampling", "comparisons", "--seed", "0"], capsys)
    assert code == 0, err
    assert "1-1" not in out and "n/a" in out
    assert ("no bootstrap (n_resamples 0)" in out) if k == 0 else ("no interval (at least 2 are needed)" in out)
    c = me.read_comparisons(_file(tmp_path, GOOD))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateWarning)
        r = me.rank_systems(c, n_resamples=k, resampling="comparisons", rng=0)
    assert not r.has_intervals and np.isnan(r.ci[0]).all()
    assert all(row["rank_low"] is None for row in r.frame_rows())


def test_diverging_resamples_open_the_interval_instead_of_cutting_it():
    """39.5: 34 of 200 dropped resamples cut one side off the docs' example; a system unbounded above in more
    than the tail share of the resamples has an interval open above and a rank interval reaching 1."""
    rows = [(0, 0, 1, 0, 0), (0, 1, 2, 0, 0), (1, 0, 2, 0, 2), (1, 2, 0, 0, 0), (2, 1, 0, 0, 0), (2, 2, 1, 0, 1),
            (3, 0, 1, 0, 1), (3, 2, 0, 0, 2), (4, 0, 1, 0, 0), (4, 0, 2, 0, 0)]
    a = np.array(rows)
    c = me.make_comparisons(systems=("A", "B", "C"), inputs=[f"q{k}" for k in range(5)], judges=("j",),
                            input=a[:, 0], first=a[:, 1], second=a[:, 2], judge=a[:, 3], verdict=a[:, 4])
    with pytest.warns(DegenerateWarning, match="have no finite Bradley-Terry estimate"):
        r = me.rank_systems(c, resampling="comparisons", n_resamples=300, rng=0)
    assert r.n_dropped > 0.025 * 300
    top = r.systems.index("A")  # A wins most: it never loses in many resamples
    assert r.ci[1][top] == np.inf and r.rank_low[top] == 1
    assert any("open on that side" in note for note in r.notes)
    assert any(f"{r.n_dropped} of 300 resamples have no finite estimate" in note for note in r.notes)


def test_ranks_of_equal_scores_share_their_places():
    from metaeval.stats.frameworks.bradley_terry_intervals import ranks as _ranks

    scores = np.array([[1.0, 1.0, 0.0, 2.0]])
    component = np.zeros(4, dtype=int)
    assert _ranks(scores, component).tolist() == [[2, 2, 4, 1]]
    assert _ranks(scores, component, last=True).tolist() == [[3, 3, 4, 1]]


@pytest.mark.parametrize("command", [["rank"], ["audit"], ["agree", "--human", "j"]])
def test_two_billion_resamples_are_refused_up_front(tmp_path, capsys, command):
    """41.5: `--n-resamples 2000000000` was a 45-60 GiB allocation error."""
    text = GOOD + "q1,A,B,h,first\nq2,A,C,h,second\n"
    code, out, err = run(["judge", command[0], "--comparisons", str(_file(tmp_path, text)), *command[1:],
                          "--n-resamples", "2000000000"], capsys)
    assert code == 2 and out == "" and "Traceback" not in err
    line, = err.strip().splitlines()
    assert line.startswith("metaeval: error: `--n-resamples` must be small enough for the resamples to fit in memory;"
                           " got 2000000000 (at least ")


def test_the_memory_check_names_what_it_needs():
    with pytest.raises(ParameterError) as e:
        rs.check_memory(1000, 10, 100, available=10_000)
    assert str(e.value) == ("`n_resamples` must be small enough for the resamples to fit in memory; got 1000 (at least"
                            " 1006.2 KiB for 10 systems x 100 inputs, 9.8 KiB available).")
    with pytest.raises(ParameterError, match=r"^`comparisons` must compare few enough systems for the pairwise arrays"
                                             r" to fit in memory; got 1000 systems \(at least 61.0 MiB, 9.8 KiB"
                                             r" available\).$"):
        rs.check_memory(0, 1000, 1, available=10_000)
    rs.check_memory(1000, 10, 100, pairs=False, available=1 << 30)


@pytest.mark.parametrize("n_systems", [20_000, 200_000])
def test_too_many_systems_are_refused_in_one_line(tmp_path, capsys, n_systems):
    """41.5: a million or 20,000 systems in `judge rank` died of memory errors (200,000, whose n x n system
    would take 320 GB, fail the same way; reading a million took 6-12 s of the suite)."""
    lines = ["input,first,second,verdict"]
    lines += [f"q{k % 7},s{k},s{k + 1},{('first', 'second', 'tie')[k % 3]}" for k in range(0, n_systems - 1, 2)]
    code, out, err = run(["judge", "rank", "--comparisons", str(_file(tmp_path, "\n".join(lines) + "\n")),
                          "--n-resamples", "10"], capsys)
    assert code == 2 and out == ""
    assert err.strip() == (f"metaeval: error: `--comparisons` must compare at most {rs.MAX_SYSTEMS} systems for a"
                           f" Bradley-Terry ranking (each Newton step solves a dense n x n system); got {n_systems}"
                           " systems.")


def test_a_400_digit_length_is_one_line(tmp_path, capsys):
    """41.5: OverflowError from float() of a 400-digit integer in JSON Lines."""
    big = "9" * 400
    text = ('{"input": "q1", "first": "A", "second": "B", "verdict": "first", "first_length": ' + big
            + ', "second_length": 3}\n')
    path = _file(tmp_path, text, "c.jsonl")
    code, out, err = run(["judge", "audit", "--comparisons", str(path), "--n-resamples", "0"], capsys)
    assert code == 2 and out == ""
    assert err.strip() == (f"metaeval: error: {path}, row 1, column 'first_length': a length must be a finite number"
                           " >= 0; got 99999999999999999999... (400 characters).")


def test_a_length_that_separates_the_verdicts_is_a_note(tmp_path, capsys):
    """41.5: LinAlgError when the length difference separates the verdicts perfectly."""
    lines = ["input,first,second,verdict,first_length,second_length"]
    for k in range(30):
        first_longer = k % 2 == 0
        lines.append(f"q{k},A,B,{'first' if first_longer else 'second'},{200 if first_longer else 100},"
                     f"{100 if first_longer else 200 + k}")
    code, out, err = run(["judge", "audit", "--comparisons", str(_file(tmp_path, "\n".join(lines) + "\n")),
                          "--n-resamples", "0", "--format", "json"], capsys)
    assert code == 0, err
    notes = json.loads(out)["notes"]
    assert "c: length bias cannot be measured: the length difference separates the verdicts perfectly (every longer" \
           " first output wins, or every one loses): the logistic fit has no finite estimate." in notes


def test_a_missing_length_leaves_the_row_out_of_the_length_analysis_only(tmp_path, capsys):
    """39.3f: a missing length cell stopped every command."""
    rng = np.random.default_rng(0)
    lines = ["input,first,second,verdict,first_length,second_length"]
    for k in range(40):
        lines.append(f"q{k},A,B,{('first', 'second')[int(rng.integers(0, 2))]},{int(rng.integers(50, 300))},"
                     f"{'' if k < 3 else int(rng.integers(50, 300))}")
    path = _file(tmp_path, "\n".join(lines) + "\n")
    code, out, err = run(["judge", "audit", "--comparisons", str(path), "--n-resamples", "0", "--format", "json"],
                         capsys)
    assert code == 0, err
    payload = json.loads(out)
    row = payload["judges"][0]
    assert row["length_missing"] == 3 and row["length_comparisons"] == 37
    assert "c: length bias: 3 comparisons with a missing length are left out of the length analysis." in payload["notes"]
    code, out, err = run(["judge", "rank", "--comparisons", str(path), "--n-resamples", "0"], capsys)
    assert code == 0, err


@pytest.mark.parametrize("field, value, message", [
    ("first", [0, 5], "`first` must hold positions in its labels (0 to 1); got 5 at row 1."),
    ("second", [1, -1], "`second` must hold positions in its labels (0 to 1); got -1 at row 1."),
    ("input", [0, 2], "`input` must hold positions in its labels (0 to 0); got 2 at row 1."),
    ("judge", [1, 0], "`judge` must hold positions in its labels (0 to 0); got 1 at row 0."),
])
def test_make_comparisons_refuses_codes_out_of_range(field, value, message):
    """41.5: make_comparisons accepted a system index out of range."""
    arrays = {"input": [0, 0], "first": [0, 1], "second": [1, 0], "judge": [0, 0]}
    arrays[field] = value
    with pytest.raises(ParameterError) as e:
        me.make_comparisons(systems=("A", "B"), inputs=("q",), judges=("j",), verdict=[0, 1], **arrays)
    assert str(e.value) == message


def test_a_davidson_resample_without_a_win_or_a_tie_diverges():
    from metaeval.stats.frameworks.bradley_terry import pairs_of
    from metaeval.stats.frameworks.bradley_terry_intervals import diverging_resamples

    i, j = pairs_of(3)
    observed = np.array([[2.0, 1, 1], [1, 2, 1], [1, 1, 2]])
    draws = np.array([observed, [[0, 0, 3], [0, 0, 2], [0, 0, 4]], [[2, 1, 0], [1, 2, 0], [1, 1, 0]]])
    assert diverging_resamples(draws, observed, i, j, 3, "davidson").tolist() == [False, True, True]
