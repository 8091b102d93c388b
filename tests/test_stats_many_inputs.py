"""Bootstrap over many inputs: the chunked summary-level kernels and the shared system sums equal the paths they
replace (the numpy kernels and the generic reference), with ties, undefined inputs and both ``undefined`` rules."""
from __future__ import annotations

import numpy as np
import pytest

from metaeval.stats.kernels.many_inputs import summary_bootstrap as summary_inputs
from metaeval.stats.kernels.many_inputs import system_sums as shared_sums
from metaeval.stats.kernels import compiler
from metaeval.stats.resampling.bootstrap import bootstrap_samples
from metaeval.stats.resampling.draws import bootstrap_draws

pytestmark = pytest.mark.skipif(not compiler.numba_available(), reason="the chunked kernels are compiled with numba")


def _data(n=6, m=700, seed=3):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, 1)) + 0.7 * rng.normal(size=(n, m))
    human = np.clip(np.round(3 + q[..., None] + rng.normal(scale=0.8, size=(n, m, 3))), 1, 5).mean(axis=2)
    metrics = {
        "continuous": q + rng.normal(size=q.shape),
        "grid": np.round((q + rng.normal(scale=0.6, size=q.shape)) * 20) / 20,  # ties, like a rounded score
        "coarse": np.round(q + rng.normal(size=q.shape)),  # many ties: constant resampled inputs happen
    }
    metrics["coarse"][:, :40] = 2.0  # constant inputs: undefined for every coefficient
    human[:, 40:60] = 3.0  # inputs where the human is constant
    return metrics, human


@pytest.mark.parametrize("method", ["both", "systems"])
@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall-b"])
@pytest.mark.parametrize("undefined", ["skip", "zero"])
def test_chunked_summary_kernels_equal_the_reference(monkeypatch, method, coefficient, undefined):
    metrics, z = _data()
    draws = bootstrap_draws(z.shape[0], z.shape[1], method=method, n_resamples=150, rng=1)
    monkeypatch.setattr(summary_inputs, "CHUNK", 256)  # several chunks
    for name, x in metrics.items():
        monkeypatch.setattr(summary_inputs, "MIN_INPUTS", 10**9)
        kernel = bootstrap_samples(x, z, level="summary", coefficient=coefficient, draws=draws, undefined=undefined)
        reference = bootstrap_samples(x, z, level="summary", coefficient=coefficient, draws=draws,
                                      undefined=undefined, engine="reference")
        monkeypatch.setattr(summary_inputs, "MIN_INPUTS", 1)
        chunked = bootstrap_samples(x, z, level="summary", coefficient=coefficient, draws=draws, undefined=undefined)
        assert np.array_equal(np.isnan(chunked), np.isnan(reference)), name
        np.testing.assert_allclose(chunked, reference, rtol=0, atol=1e-12, err_msg=name)  # as the kernels
        np.testing.assert_allclose(chunked, kernel, rtol=0, atol=1e-14, err_msg=name)


def test_chunked_kernel_is_used_from_min_inputs_on():
    metrics, z = _data(m=summary_inputs.MIN_INPUTS)
    draws = bootstrap_draws(z.shape[0], z.shape[1], method="both", n_resamples=10, rng=0)
    from metaeval.stats.kernels.bootstrap import bootstrap_kernel

    for coefficient, kind in (("pearson", summary_inputs.PearsonInputs), ("spearman", summary_inputs.SpearmanInputs),
                              ("kendall-b", summary_inputs.KendallInputs)):
        kernel = bootstrap_kernel(metrics["grid"], z, level="summary", coefficient=coefficient, draws=draws)
        assert isinstance(kernel, kind)
        small = bootstrap_kernel(metrics["grid"][:, :100], z[:, :100], level="summary", coefficient=coefficient,
                                 draws=bootstrap_draws(6, 100, method="both", n_resamples=10, rng=0))
        assert not isinstance(small, kind)


@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall-b"])
def test_shared_system_sums_equal_the_reference(monkeypatch, coefficient):
    from metaeval.stats.kernels import bootstrap as kernels

    metrics, z = _data(m=500)
    draws = bootstrap_draws(z.shape[0], z.shape[1], method="both", n_resamples=100, rng=2)
    for name, x in metrics.items():
        monkeypatch.setattr(kernels, "SHARED_SUMS_INPUTS", 10**9)
        before = bootstrap_samples(x, z, level="system", coefficient=coefficient, draws=draws)
        reference = bootstrap_samples(x, z, level="system", coefficient=coefficient, draws=draws, engine="reference")
        monkeypatch.setattr(kernels, "SHARED_SUMS_INPUTS", 1)
        shared = bootstrap_samples(x, z, level="system", coefficient=coefficient, draws=draws)
        again = bootstrap_samples(x, z, level="system", coefficient=coefficient, draws=draws)  # from the memo
        np.testing.assert_allclose(shared, reference, rtol=0, atol=1e-13, err_msg=name)
        np.testing.assert_allclose(shared, before, rtol=0, atol=1e-13, err_msg=name)
        assert np.array_equal(shared, again, equal_nan=True)


def test_shared_sums_are_exact_and_follow_the_draws():
    rng = np.random.default_rng(0)
    values = rng.integers(0, 7, size=(4, 300)) / 3.0  # averages of Likert ratings: exact ties between systems
    values[1] = values[0]
    values.setflags(write=False)  # kept only for arrays nobody can change (a ScoreSet's)
    draws = bootstrap_draws(4, 300, method="both", n_resamples=40, rng=0)
    sums = shared_sums.resampled_sums(values, draws)
    weights = draws.col_weights()
    exact = np.array([[sum(int(c) * int(round(v * 3)) for c, v in zip(w, row)) / 3.0 for row in values]
                      for w in weights])
    np.testing.assert_array_equal(sums, exact)  # exact sums, equal systems stay equal
    assert shared_sums.resampled_sums(values, draws) is sums
    other = bootstrap_draws(4, 300, method="both", n_resamples=40, rng=1)
    assert not np.array_equal(shared_sums.resampled_sums(values, other), sums)


def test_shared_sums_of_a_writable_array_are_not_kept():
    values = np.arange(12.0).reshape(2, 6)
    draws = bootstrap_draws(2, 6, method="both", n_resamples=5, rng=0)
    first = shared_sums.resampled_sums(values, draws)
    values[0] += 1.0  # the caller changes its array: the sums follow
    np.testing.assert_array_equal(shared_sums.resampled_sums(values, draws)[:, 0], first[:, 0] + 6.0)


@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall-b"])
@pytest.mark.parametrize("method", ["both", "systems"])
def test_threads_batches_and_float32_sums_do_not_change_a_value(monkeypatch, coefficient, method):
    """A batch split over 1, 2 or 3 threads, batches of any size, the rank sums in float32 or float64: the
    same values to the bit (each resample is computed by the same operations in the same order)."""
    from metaeval.stats.kernels import parts

    metrics, z = _data(m=900)
    monkeypatch.setattr(summary_inputs, "CHUNK", 256)
    monkeypatch.setattr(summary_inputs, "MIN_INPUTS", 1)
    draws = bootstrap_draws(z.shape[0], z.shape[1], method=method, n_resamples=130, rng=4)
    for undefined in ("skip", "zero"):
        for name, x in metrics.items():
            monkeypatch.setattr(parts, "THREADS", 1)
            monkeypatch.setattr(summary_inputs, "EXACT32", False)
            one = bootstrap_samples(x, z, level="summary", coefficient=coefficient, draws=draws, undefined=undefined)
            assert np.isfinite(one).any()
            monkeypatch.setattr(summary_inputs, "EXACT32", True)
            for threads, batch in ((1, None), (2, None), (2, 1), (2, 9), (2, 130), (3, 17)):
                monkeypatch.setattr(parts, "THREADS", threads)
                out = bootstrap_samples(x, z, level="summary", coefficient=coefficient, draws=draws,
                                        undefined=undefined, batch=batch)
                assert np.array_equal(out, one, equal_nan=True), (name, undefined, threads, batch)


def test_shared_sums_do_not_depend_on_the_threads(monkeypatch):
    from metaeval.stats.kernels import parts

    metrics, _ = _data(m=700)
    draws = bootstrap_draws(6, 700, method="both", n_resamples=100, rng=5)
    out = {}
    for threads in (1, 2, 3):
        monkeypatch.setattr(parts, "THREADS", threads)
        out[threads] = shared_sums._sums(metrics["continuous"], draws)
    assert np.array_equal(out[1], out[2]) and np.array_equal(out[1], out[3])


def test_parts_run_in_the_pool_and_raise_their_errors(monkeypatch):
    import threading

    from metaeval.stats.kernels import parts

    monkeypatch.setattr(parts, "THREADS", 2)
    names = parts.run_parts(lambda i: (i, threading.current_thread().name), [(0,), (1,), (2,)])
    assert [i for i, _ in names] == [0, 1, 2]
    assert names[0][1] == threading.current_thread().name and names[1][1].startswith("metaeval-part")
    # parts of a part run in its thread: the one pool thread never waits for work queued behind itself
    assert parts.run_parts(lambda i: parts.run_parts(lambda j: i + j, [(1,), (2,)]), [(10,), (20,)]) == [[11, 12], [21, 22]]

    def fail(i):
        if i == 1:
            raise ValueError("part 1")
        return i

    with pytest.raises(ValueError, match="part 1"):
        parts.run_parts(fail, [(0,), (1,)])
    with np.errstate(divide="raise"):  # the caller's numpy error state holds in every part
        with pytest.raises(FloatingPointError):
            parts.run_parts(lambda v: np.float64(v) / 0.0, [(1.0,), (2.0,)])


@pytest.mark.filterwarnings("ignore::metaeval.errors.DegenerateWarning")  # 6 systems
def test_a_table_computes_the_human_s_tie_groups_once(monkeypatch):
    """The cells of a table share the per-input tie groups of its (read-only) matrices: the human's once for
    every metric and coefficient, a metric's once for Spearman and Kendall; the values are those computed afresh."""
    import metaeval as me
    from metaeval.stats.kernels import ranks

    metrics, z = _data(m=500)
    ds = me.ScoreSet({**metrics, "human": z}, systems=[f"s{i}" for i in range(6)],
                     inputs=[f"d{j}" for j in range(500)], humans=["human"])
    monkeypatch.setattr(summary_inputs, "MIN_INPUTS", 1)
    summary_inputs._MEMO.clear()
    calls = []
    tie_ranks, near = summary_inputs.tie_ranks, summary_inputs.near_constant_groups
    monkeypatch.setattr(summary_inputs, "tie_ranks", lambda *a, **k: calls.append("ranks") or tie_ranks(*a, **k))
    monkeypatch.setattr(summary_inputs, "near_constant_groups", lambda *a, **k: calls.append("near") or near(*a, **k))
    kept = me.correlation_table(ds, "human", levels=["summary"], n_resamples=30)
    assert sorted(calls) == ["near"] * 4 + ["ranks"] * 4  # 3 metrics + the human, each once
    monkeypatch.setattr(summary_inputs, "_MEMO_ENTRIES", 0)  # nothing kept: every cell computes its own
    calls.clear()
    fresh = me.correlation_table(ds, "human", levels=["summary"], n_resamples=30)
    assert len(calls) == 3 * 6
    for a, b in zip(kept.results, fresh.results):
        assert a.bootstrap_distribution is not None and a.ci == b.ci
        assert np.array_equal(a.bootstrap_distribution, b.bootstrap_distribution, equal_nan=True)
    assert ranks.tie_ranks is tie_ranks


def _parts_in_child(queue):
    from metaeval.stats.kernels import parts

    queue.put(parts.run_parts(lambda i: i * 2, [(1,), (2,)]))


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="fork")
def test_parts_run_in_a_forked_child(monkeypatch):
    """A child forked after the pool started has none of its threads: it makes its own (no hang)."""
    import multiprocessing

    from metaeval.stats.kernels import parts

    monkeypatch.setattr(parts, "THREADS", 2)
    assert parts.run_parts(lambda i: i, [(1,), (2,)]) == [1, 2]  # the parent's pool exists
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_parts_in_child, args=(queue,))
    child.start()
    try:
        assert queue.get(timeout=60) == [2, 4]
        child.join(timeout=60)
        assert child.exitcode == 0
    finally:
        if child.is_alive():
            child.kill()
