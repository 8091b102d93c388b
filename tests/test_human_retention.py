"""Weighted retention, instability bounds, performance groups and the ranking count (Lin & Hovy 2002)."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from metaeval.cli.main import main
from metaeval.errors import DegenerateDataError, InputFileError, ParameterError
from metaeval.human import count_rankings, performance_groups, read_coverage, weighted_retention


def _brute_force(low, high):
    n = len(low)
    count = 0
    for perm in itertools.permutations(range(n)):
        pos = {x: i for i, x in enumerate(perm)}
        if all(pos[x] < pos[y] for x in range(n) for y in range(n) if low[x] > high[y]):
            count += 1
    return count


# -- validation -----------------------------------------------------------------------------------
def test_validation_messages():
    with pytest.raises(ParameterError, match=r"^`low` must not exceed `high`; got 2\.0 > 1\.0 at position 0\.$"):
        count_rankings([2.0], [1.0])
    with pytest.raises(ParameterError, match=r"^`low` and `high` must be vectors of the same length; got shapes \(2,\)"
                                             r" and \(1,\)\.$"):
        performance_groups([0, 1], [1])
    frame = pd.DataFrame({"system": ["A"], "document": ["d"], "unit": ["u"], "coverage": ["lots"]})
    with pytest.raises(ParameterError, match=r"^`judgments` coverage must be all, most, some, hardly any, none or a"
                                             r" number in \[0, 1\]; got 'lots'\.$"):
        weighted_retention(frame)
    frame["coverage"] = "all"
    with pytest.raises(ParameterError, match=r"^`threshold` must be None or a number in \(0, 1\]; got 0\.$"):
        weighted_retention(frame, threshold=0)
    with pytest.raises(ParameterError, match=r"^`judgments` must have the columns system, document, unit, coverage;"
                                             r" got no 'unit'\.$"):
        weighted_retention(frame.drop(columns="unit"))


def test_bad_coverage_file(tmp_path, capsys):
    path = tmp_path / "cov.csv"
    path.write_text("system,document,unit,coverage\nA,d,u1,all\nA,d,u2,plenty\n", encoding="utf-8")
    with pytest.raises(InputFileError) as info:
        read_coverage(path)
    assert str(info.value) == (f"{path}, row 3, column 'coverage': a coverage must be all, most, some, hardly any,"
                               " none or a number in [0, 1]; got 'plenty'.")
    out = tmp_path / "r.csv"
    assert main(["human", "retention", "--judgments", str(path), "--write-scores", str(out)]) == 2
    assert capsys.readouterr().err.count("\n") == 1 and not out.exists()


# -- hand-built cases -----------------------------------------------------------------------------
def test_hand_computed_retention_and_bounds():
    rows = [("A", "d1", "u1", "all"), ("A", "d1", "u1", "some"), ("A", "d1", "u2", "none"),
            ("B", "d1", "u1", "most"), ("B", "d1", "u2", "hardly any"), ("B", "d1", "u2", "some"),
            ("B", "d2", "u1", 1.0)]
    result = weighted_retention(pd.DataFrame(rows, columns=["system", "document", "unit", "coverage"]))
    scores = result.system_scores.set_index("system")
    # A: MIN (0.5 + 0) / 2, MAX (1 + 0) / 2, MAJORITY tie 1 / 0.5 -> 0.5, AVG (0.75 + 0) / 2
    assert scores.loc["A"].tolist() == pytest.approx([0.25, 0.5, 0.25, 0.375])
    # B: d1 MIN (0.75 + 0.25) / 2 = 0.5, MAX (0.75 + 0.5) / 2 = 0.625, AVG (0.75 + 0.375) / 2; d2 = 1
    assert scores.loc["B"].tolist() == pytest.approx([0.75, 0.8125, 0.75, (0.5625 + 1) / 2])
    assert result.n_repeated == 2
    assert result.groups.tolist() == [["=", "-"], ["+", "="]]
    assert result.n_rankings == 1
    at_half = weighted_retention(pd.DataFrame(rows, columns=["system", "document", "unit", "coverage"]), threshold=0.5)
    # recall at 0.5 for A: MIN u1 0.5 >= 0.5 -> 1, u2 0 -> 0: 0.5; AVG u1 0.75 -> 1: 0.5
    assert at_half.system_scores.set_index("system").loc["A"].tolist() == pytest.approx([0.5, 0.5, 0.5, 0.5])


def _sixteen_systems():
    """16 systems, one document, 4 units: system k = 2i or 2i + 1 has coverage summing to i / 2 (MIN
    retention 2i / 16) and one unit judged a second time 1/4 higher (MAX retention (2i + 1) / 16)."""
    rows = []
    for k in range(16):
        i = k // 2
        left, units = i / 2, []
        for _ in range(4):
            c = min(1.0, left)
            units.append(c)
            left -= c
        for u, c in enumerate(units):
            rows.append((f"s{k:02d}", "d", f"u{u}", c))
        again = next(u for u, c in enumerate(units) if c < 1.0)
        rows.append((f"s{k:02d}", "d", f"u{again}", units[again] + 0.25))
    return pd.DataFrame(rows, columns=["system", "document", "unit", "coverage"])


def test_sixteen_systems_with_overlapping_bounds():
    result = weighted_retention(_sixteen_systems())
    k = np.arange(16) // 2
    assert result.low == pytest.approx(2 * k / 16) and result.high == pytest.approx((2 * k + 1) / 16)
    groups = result.groups
    for x in range(16):
        for y in range(16):
            expected = "=" if x == y else "~" if x // 2 == y // 2 else "+" if x // 2 > y // 2 else "-"
            assert groups[x, y] == expected
    assert result.n_rankings == 2 ** 8  # each pair may come in either order, the pairs in a fixed one
    assert result.scoreset.shape == (16, 1) and result.n_repeated == 16


@pytest.mark.parametrize("low,high,expected", [
    (np.arange(16.0), np.arange(16.0) + 1.5, 1597),  # neighbours overlap only: Fibonacci F(17)
    (np.zeros(16), np.ones(16), math.factorial(16)),  # all overlap
    (np.arange(16.0), np.arange(16.0) + 0.5, 1),  # none overlaps
    (np.r_[np.zeros(8), np.full(8, 2.0)], np.r_[np.ones(8), np.full(8, 3.0)], math.factorial(8) ** 2),
])
def test_count_rankings_sixteen_systems(low, high, expected):
    assert count_rankings(low, high) == expected


def test_count_rankings_matches_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(40):
        n = int(rng.integers(1, 7))
        low = rng.random(n)
        high = low + rng.random(n) * 0.6
        assert count_rankings(low, high) == _brute_force(low, high)


def test_count_rankings_state_limit():
    low = np.r_[np.zeros(12), 0.5]
    high = np.r_[np.ones(12), 2.0]
    low[0], high[0] = 1.5, 2.0  # one relation inside the block: the dynamic programme is needed
    with pytest.raises(DegenerateDataError, match=r"^the bounds of 13 overlapping systems need more than 100 states to"
                                                  r" count their rankings exactly; raise `limit` or narrow the bounds\.$"):
        count_rankings(low, high, limit=100)


def test_cli_retention(tmp_path, capsys):
    path = tmp_path / "cov.csv"
    _sixteen_systems().to_csv(path, index=False)
    assert main(["human", "retention", "--judgments", str(path), "--format", "json"]) == 0
    assert '"n_rankings": 256' in capsys.readouterr().out
