"""The intrinsics that let the compiled loops of ``stats/`` be serial (issue 37 item 5): ``next_task`` hands every
task out once, whatever the threads; ``borrowed`` arrays read and write their owner's data; no loop of ``stats/``
is a numba parallel loop."""
from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

numba = pytest.importorskip("numba")

from metaeval.stats.kernels import parts  # noqa: E402
from metaeval.stats.kernels.compiler.intrinsics import borrowed, keep_alive, next_task  # noqa: E402

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "metaeval"


@numba.njit(nogil=True)
def _take_tasks(counter, n_tasks, taken, thread):
    count = 0
    while True:
        task = next_task(counter)
        if task >= n_tasks:
            break
        taken[task] = thread
        for _ in range(200 + 50 * (task % 7)):  # uneven tasks
            count += 1
    return count


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_next_task_hands_every_task_out_once(threads, monkeypatch):
    monkeypatch.setattr(parts, "THREADS", threads)
    n_tasks = 5000
    counter = np.zeros(1, dtype=np.int64)
    taken = np.full(n_tasks, -1, dtype=np.int64)
    parts.run_parts(_take_tasks, [(counter, n_tasks, taken, t) for t in range(parts.threads())])
    assert (taken >= 0).all()
    assert set(np.unique(taken)) <= set(range(threads))
    assert counter[0] == n_tasks + threads  # each thread's last draw finds the tasks gone


@numba.njit
def _row_sums_borrowed(x, n):
    owner = np.zeros((n, x.shape[1]), dtype=np.int64)
    acc = borrowed(owner)
    xs = borrowed(x)
    for i in range(x.shape[0]):
        row = xs[i]  # a view per row, not reference-counted
        dst = acc[i % n]
        for c in range(row.size):
            dst[c] += row[c]
    out = owner.sum(axis=0)
    keep_alive((owner,))
    return out, owner


def test_borrowed_arrays_read_and_write_their_owners_data():
    x = np.arange(60, dtype=np.int64).reshape(12, 5)
    total, owner = _row_sums_borrowed(x, 3)
    np.testing.assert_array_equal(total, x.sum(axis=0))
    np.testing.assert_array_equal(owner, x.reshape(4, 3, 5).sum(axis=0))


def test_intrinsics_refuse_what_they_cannot_take():
    @numba.njit
    def bad_counter(c):
        return next_task(c)

    with pytest.raises(numba.core.errors.TypingError):
        bad_counter(np.zeros(1, dtype=np.int32))

    @numba.njit
    def bad_borrow(v):
        return borrowed(v)

    with pytest.raises(numba.core.errors.TypingError):
        bad_borrow(1.0)


def test_no_compiled_loop_of_stats_is_a_parallel_loop():
    """numba's parallel loops cost as much again to compile and load OpenMP, whose spinning threads compete with
    ``parts.run_parts``' (docs/dev/ARCHITECTURE.md): every loop of ``stats/`` is serial."""
    found = [f"{p.relative_to(SRC)}:{n + 1}" for p in sorted((SRC / "stats").rglob("*.py"))
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines())
             if re.search(r"parallel\s*=\s*True|\bprange\(", line)]
    assert not found
