"""The test suite's count of numba's compile time (tests/numba_compile_time.py, issue 37 item 5)."""
from __future__ import annotations

import numpy as np
import pytest

import numba_compile_time as nct


def test_a_compile_is_counted_once_with_its_time_and_test(request):
    numba = pytest.importorskip("numba")

    def triple(x):
        return 3 * x

    jitted = numba.njit(triple)  # a new dispatcher: not in any cache (cache=False)
    before = len(nct.RECORD.compiles)
    assert jitted(2) == 6 and jitted(5) == 15  # the second call runs the compiled int64 loop
    assert jitted(np.float64(1.5)) == 4.5  # a second specialisation
    mine = [c for c in nct.RECORD.compiles[before:] if c[0].endswith("triple")]
    assert [c[1] for c in mine] == ["(int64,)", "(float64,)"]
    assert all(c[2] > 0 and 0 < c[3] <= c[2] * 1.05 + 0.01 for c in mine)  # top-level compiles: wall, CPU
    assert {c[4] for c in mine} == {request.node.nodeid}


def test_a_nested_compile_counts_its_specialisation_not_its_time_twice():
    numba = pytest.importorskip("numba")

    @numba.njit
    def inner(x):
        return x + 1

    @numba.njit
    def outer(x):
        return inner(x) * 2

    before = len(nct.RECORD.compiles)
    assert outer(1) == 4
    mine = {c[0].rsplit(".", 1)[-1]: c[2:4] for c in nct.RECORD.compiles[before:]}
    assert mine["inner"] == (None, None) and mine["outer"][0] > 0  # inner compiled inside outer's compile


def test_numba_cache_saves_are_locked_in_the_test_processes():
    pytest.importorskip("numba")
    from numba.core import caching

    assert getattr(caching.IndexDataCacheFile.save, "locked_across_processes", False)


def test_the_summary_adds_the_workers_and_names_the_costliest_tests(monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", "/tmp/nc")
    compiles = [("m.f", "(int64,)", 2.0, 1.0, "t.py::a"), ("m.g", "(int64,)", None, None, "t.py::a"),
                ("m.f", "(float64,)", 1.5, 1.25, "t.py::b"), ("m.h", "(int64,)", 0.25, 0.25, "")]
    assert nct.summary(compiles, workers=2, top=2) == [
        "numba compiled 4 specialisations of 3 functions in 3.8 s wall, 2.5 s CPU, summed over 2 workers (cache:"
        " /tmp/nc; not counted: the subprocesses the tests start); most compile time (wall, CPU):",
        "     2.0 s    1.0 s  t.py::a",
        "     1.5 s    1.2 s  t.py::b",
    ]
    assert nct.summary([], workers=0) == ["numba compiled no function in the test processes (cache: /tmp/nc)"]


def test_the_compiles_are_written_as_json(tmp_path):
    import json

    path = tmp_path / "compiles.json"
    nct.write_compiles(path, [("m.f", "(int64,)", 2.0, 1.0, "t.py::a"), ("m.g", "(int64,)", None, None, "t.py::a")])
    assert json.loads(path.read_text()) == [
        {"function": "m.f", "signature": "(int64,)", "wall_seconds": 2.0, "cpu_seconds": 1.0, "test": "t.py::a"},
        {"function": "m.g", "signature": "(int64,)", "wall_seconds": None, "cpu_seconds": None, "test": "t.py::a"}]
