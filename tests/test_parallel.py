"""metaeval.runtime.tasks: map_tasks on every backend, and backend-independent simulations for a seed."""
from __future__ import annotations

import math
import operator

import numpy as np
import pytest

import metaeval as me
from metaeval import defaults
from metaeval.errors import MetaevalError
from metaeval.runtime.tasks import check_backend, chunk_seeds, chunk_sizes, map_tasks


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip(
        "distributed", reason="SKIPPED: dask.distributed is not installed (pip install 'metaeval[dask]')")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        with distributed.Client(cluster, set_as_default=False) as c:
            yield c


@pytest.fixture
def small_chunks(monkeypatch):
    """Several chunks even for tiny trial counts."""
    monkeypatch.setattr(defaults, "SIMULATION_CHUNK_TRIALS", 2)
    monkeypatch.setattr(defaults, "STABILITY_CHUNK_REPETITIONS", 7)


# -- map_tasks ------------------------------------------------------------------------------------

@pytest.mark.parametrize("workers", [1, 2])
def test_map_tasks_keeps_the_order(workers):
    tasks = list(range(12, 0, -1))
    assert map_tasks(math.factorial, tasks, workers=workers) == [math.factorial(t) for t in tasks]
    assert map_tasks(operator.add, tasks, workers=workers, shared=100) == [100 + t for t in tasks]
    assert map_tasks(math.factorial, [], workers=workers) == []


@pytest.mark.parametrize("workers", [1, 2])
def test_map_tasks_raises_the_task_error(workers):
    with pytest.raises(ValueError, match="math domain error"):
        map_tasks(math.sqrt, [4.0, -1.0, 9.0], workers=workers)


def test_map_tasks_on_dask(client):
    tasks = list(range(10, 0, -1))
    assert map_tasks(math.factorial, tasks, scheduler=client) == [math.factorial(t) for t in tasks]
    assert map_tasks(operator.add, tasks, scheduler=client, shared=5) == [5 + t for t in tasks]
    # an address: connected to and closed afterwards
    assert map_tasks(operator.neg, [1, 2], scheduler=client.scheduler.address) == [-1, -2]
    with pytest.raises(ValueError, match="math domain error"):
        map_tasks(math.sqrt, [4.0, -1.0], scheduler=client)


@pytest.mark.parametrize("workers, scheduler, message", [
    (0, None, "`workers` must be an integer >= 1; got 0."),
    (2, "tcp://localhost:8786",
     "`workers` must be 1 when `scheduler` is given (the cluster sets the parallelism); got 2."),
    (1, 8786, "`scheduler` must be a dask.distributed Client or a scheduler address like 'tcp://host:8786'; "
              "got 8786."),
    (1, " ", "`scheduler` must be a scheduler address like 'tcp://host:8786'; got ' '."),
])
def test_backend_validation(workers, scheduler, message):
    with pytest.raises(me.ParameterError) as info:
        check_backend(workers, scheduler)
    assert str(info.value) == message


def test_missing_distributed_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(me.MissingDependencyError) as info:
        map_tasks(operator.neg, [1], scheduler="tcp://localhost:8786")
    assert isinstance(info.value, (MetaevalError, ImportError))
    assert str(info.value) == ("running on a Dask scheduler needs the Python package 'distributed'; install it with"
                               " `pip install 'metaeval[dask]'`.")


def test_unreachable_scheduler(client, monkeypatch):
    monkeypatch.setattr(defaults, "DASK_CONNECT_TIMEOUT", 1.0)
    with pytest.raises(me.ParameterError, match="^`scheduler` must be the address of a running Dask scheduler; "
                                                "could not connect to 'tcp://127.0.0.1:1'"):
        map_tasks(operator.neg, [1], scheduler="tcp://127.0.0.1:1")


def test_chunks_and_seeds():
    assert chunk_sizes(10, 4) == [4, 4, 2] and chunk_sizes(8, 4) == [4, 4] and chunk_sizes(3, 50) == [3]
    gen = np.random.default_rng(0)
    seeds = chunk_seeds(gen, 5, 3)
    assert [s.spawn_key for s in seeds] == [(0,), (1,), (2,)] and seeds[0].entropy == 5
    # a Generator (seed recorded as 'generator'): root entropy drawn from it, reproducibly
    a = chunk_seeds(np.random.default_rng(3), "generator", 2)
    b = chunk_seeds(np.random.default_rng(3), "generator", 2)
    assert a[1].generate_state(2).tolist() == b[1].generate_state(2).tolist()


# -- simulations: identical on every backend ---------------------------------------------------------

def _texts(ds):
    candidates = {s: {i: f"alpha beta gamma{k % 3} delta word{j} beta" for j, i in enumerate(ds.inputs)}
                  for k, s in enumerate(ds.systems)}
    references = {i: ["alpha beta beta gamma1 delta", "beta word1 word2"] for i in ds.inputs}
    return candidates, references


def test_coverage_is_the_same_on_every_backend(tiny_scoreset, small_chunks, client):
    kw = dict(levels=("system", "summary"), n_trials=5, n_resamples=40, rng=11)
    serial = me.simulate_coverage(tiny_scoreset, "a", "human", **kw)
    assert serial.counts[..., :].sum(axis=-1).max() == 5
    for backend in (dict(workers=2), dict(scheduler=client)):
        other = me.simulate_coverage(tiny_scoreset, "a", "human", **kw, **backend)
        np.testing.assert_array_equal(other.counts, serial.counts)
        np.testing.assert_array_equal(other.mean_width, serial.mean_width)
        assert other.signature == serial.signature


def test_power_is_the_same_on_every_backend(tiny_scoreset, small_chunks, client):
    candidates, references = _texts(tiny_scoreset)
    kw = dict(candidates=candidates, references=references, proportions=(0.5, 1.0), n_trials=3, n_resamples=30,
              tokenizer="simple", rng=2)
    serial = me.simulate_power(tiny_scoreset, "human", **kw)
    assert (serial.power[:, :, 1] == 0).all()
    for backend in (dict(workers=2), dict(scheduler=client)):
        other = me.simulate_power(tiny_scoreset, "human", **kw, **backend)
        np.testing.assert_array_equal(other.rejections, serial.rejections)
        np.testing.assert_array_equal(other.n_undefined, serial.n_undefined)


def test_stability_is_the_same_on_every_backend(tiny_scoreset, small_chunks, client):
    kw = dict(sizes=[1, 3], n_repetitions=20, rng=4)
    serial = me.ranking_stability(tiny_scoreset, ["a", "b"], "human", **kw)
    for backend in (dict(workers=2), dict(scheduler=client)):
        other = me.ranking_stability(tiny_scoreset, ["a", "b"], "human", **kw, **backend)
        np.testing.assert_array_equal(other.samples, serial.samples)
        np.testing.assert_array_equal(other.mean, serial.mean)
    # chunk k's draws do not depend on the number of chunks: the first 14 repetitions are a prefix
    prefix = me.ranking_stability(tiny_scoreset, ["a", "b"], "human", sizes=[1, 3], n_repetitions=14, rng=4)
    np.testing.assert_array_equal(prefix.samples, serial.samples[..., :14])


def test_simulations_validate_the_backend(tiny_scoreset):
    with pytest.raises(me.ParameterError, match=r"^`workers` must be an integer >= 1; got 0\.$"):
        me.simulate_coverage(tiny_scoreset, "a", "human", n_trials=2, workers=0)
    with pytest.raises(me.ParameterError, match=r"^`workers` must be 1 when `scheduler` is given"):
        me.ranking_stability(tiny_scoreset, "a", "human", workers=2, scheduler="tcp://localhost:8786")


def test_cli_workers_and_scheduler(shared_data, tmp_path, client):
    from metaeval.cli.main import main

    base = ["simulate", "coverage", "--dataset", "summeval", "--metric", "qa-eval.f1", "--n-trials", "3",
            "--n-resamples", "30", "--level", "system", "--format", "csv"]
    outputs = []
    for k, extra in enumerate([[], ["--workers", "2"], ["--scheduler", client.scheduler.address]]):
        out = tmp_path / f"coverage{k}.csv"
        assert main(base + extra + ["--output", str(out)]) == 0
        outputs.append(out.read_text())
    assert outputs[0] == outputs[1] == outputs[2]
    stability = ["stability", "--dataset", "realsumm", "--metric", "rouge-1.recall", "--sizes", "5,20",
                 "--n-repetitions", "150", "--format", "csv"]
    texts = []
    for k, extra in enumerate([[], ["--workers", "2"]]):
        out = tmp_path / f"stability{k}.csv"
        assert main(stability + extra + ["--output", str(out)]) == 0
        texts.append(out.read_text())
    assert texts[0] == texts[1] and "rouge-1.recall" in texts[0]
    assert main(stability + ["--workers", "0"]) == 2


def test_workers_leave_the_callers_environment_unchanged():
    import os

    before = dict(os.environ)
    assert map_tasks(operator.neg, [1, 2, 3], workers=2) == [-1, -2, -3]
    assert dict(os.environ) == before


def test_a_lost_scheduler_is_one_error_in_map_tasks(monkeypatch):
    """Issue 22 item 4: a cluster lost under the simulations is a SchedulerLostError (one CLI line), not
    the client's FutureCancelledError traceback."""
    distributed = pytest.importorskip("distributed")
    from metaeval.runtime import dask as runtime_dask
    from metaeval.runtime.dask import SchedulerLostError

    class LostClient:
        def submit(self, fn, *args, pure=True):
            return object()

        def gather(self, futures):
            raise distributed.client.FutureCancelledError("task-1", reason="scheduler-connection-lost",
                                                          msg="Client lost the connection to the scheduler.")

        def cancel(self, futures):
            raise AssertionError("nothing to cancel: the futures went with the connection")

        def close(self, timeout=None):
            self.closed = True

    client = LostClient()
    monkeypatch.setattr(runtime_dask, "connect", lambda scheduler: (client, True))
    with pytest.raises(SchedulerLostError) as caught:
        map_tasks(math.factorial, [1, 2, 3], scheduler="tcp://127.0.0.1:8786")
    assert str(caught.value) == ("`scheduler` must stay reachable for the whole run; lost tcp://127.0.0.1:8786"
                                 " (scheduler-connection-lost). Nothing of this run is kept: run it again (the same"
                                 " seed gives the same results).")
    assert client.closed
